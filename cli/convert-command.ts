/**
 * `geoshelf convert INPUT [OUTPUT]`: a GeoJSON, CSV or plain Parquet file becomes GeoParquet 1.1 (README
 * "Converting to GeoParquet"). The converter is imported when the command runs, so `--help` answers at once.
 */
import type { Command } from 'commander';
import { parseWholeNumber, type Finish } from './command-line.ts';
import { EXIT } from './exit-codes.ts';

/** The options of `geoshelf convert`, as commander parses them. */
interface ConvertCommandOptions {
  lon?: string;
  lat?: string;
  wkt?: string;
  geometry?: string;
  layer?: string;
  crs?: string;
  force?: boolean;
  rowGroupSize?: number;
}

/** Adds `convert` to the program. */
export function defineConvertCommand(program: Command, finish: Finish): void {
  program.command('convert')
    .summary('convert GeoJSON, CSV, plain Parquet, shapefiles, GeoPackages or File Geodatabases to GeoParquet 1.1')
    .description(
      'Writes GeoParquet 1.1 from a GeoJSON FeatureCollection or Text Sequence, a CSV with longitude/latitude or WKT columns, or a ' +
      'Parquet file with a WKB or WKT geometry column, or a layer of a shapefile, GeoPackage or File Geodatabase (through ' +
      'GDAL, reprojected to longitude/latitude): a WKB geometry column, a bbox covering column, rows sorted ' +
      'on a Hilbert curve so row groups hold nearby features, zstd. OUTPUT defaults to INPUT with the extension ' +
      '.parquet. The output is in longitude/latitude (OGC:CRS84, written as PROJJSON): coordinates in another CRS are ' +
      'reprojected when --crs names it. A failed conversion leaves no file and exits 1.',
    )
    .argument('<input>', 'the file to convert (.geojson, .json, .geojsonl, .geojsons, .geojsonseq, .ndjson, .csv, .tsv, .parquet, .shp, .gpkg, .gdb)')
    .argument('[output]', 'the GeoParquet file to write')
    .option('--lon <name>', 'the longitude column (default: lon, lng, long, longitude or x)')
    .option('--lat <name>', 'the latitude column (default: lat, latitude or y)')
    .option('--wkt <name>', 'a column of WKT geometries (default: wkt or geometry)')
    .option('--geometry <name>', 'the WKB, WKT or GEOMETRY column of a Parquet file (default: geometry or geom)')
    .option('--crs <crs>', 'the CRS of the coordinates of a GeoJSON, CSV or Parquet input, when not longitude/latitude: an EPSG code (EPSG:2056), a PROJ string or WKT')
    .option('--layer <name>', 'the layer of a GeoPackage or File Geodatabase (needed when it has several)')
    .option('--row-group-size <rows>', 'rows per row group, from 2048 (DuckDB writes no smaller ones) (default 16384)', parseWholeNumber(2048, 10_000_000))
    .option('--force', 'replace OUTPUT if it exists')
    .action(async (input: string, output: string | undefined, options: ConvertCommandOptions) => finish(await runConvert(input, output, options)));
}

async function runConvert(input: string, output: string | undefined, options: ConvertCommandOptions): Promise<number> {
  const [{ convertFile }, { ConvertError }] = await Promise.all([import('../generator/convert/convert-file.ts'), import('../generator/convert/convert-error.ts')]);
  const started = performance.now();
  try {
    const result = await convertFile({ ...options, input, output, onProgress: createProgressLine() });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`✔ ${result.output}: ${result.rows} rows, ${result.geo.columns.geometry.geometry_types.join(', ')}, in ${seconds} s`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof ConvertError)) throw error;
    console.error(`✖ ${error.message}`);
    return EXIT.failed;
  }
}

/** A line per second at most while rows are read, on a terminal outside CI; nothing otherwise. */
function createProgressLine(): ((rows: number) => void) | undefined {
  if (!process.stdout.isTTY || process.env.CI) return undefined;
  let last = performance.now();
  return (rows) => {
    const now = performance.now();
    if (now - last < 1000) return;
    last = now;
    console.log(`  ${rows} rows read`);
  };
}
