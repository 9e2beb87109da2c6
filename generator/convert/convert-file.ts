/**
 * `geoshelf convert`: a table of features (GeoJSON, GeoJSON Text Sequences, CSV, plain Parquet, a GDAL layer) becomes GeoParquet 1.1
 * with a bbox covering column, rows in Hilbert order, zstd and row groups a range read can skip. The output is
 * always longitude/latitude, and says so with OGC:CRS84's PROJJSON: the catalog's bounds, twins and /features
 * need it, and an input in another CRS (`--crs`) is reprojected with proj4 as its rows pass through JavaScript.
 *
 * Memory stays bounded: GeoJSON is first split into one feature per line by a byte scanner (geojson-lines.ts),
 * and GDAL writes a layer straight to disk; DuckDB (at most DUCKDB_MEMORY) copies the input into a scratch
 * database on disk; its rows come to JavaScript a chunk (2,048 rows) at a time, whose WKB and bbox go back into that database through an appender; DuckDB then
 * sorts and writes, spilling to disk as it needs. Only the attributes never pass through JavaScript, so their
 * types stay DuckDB's. The file is written under a scratch name beside the output and renamed at the end.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { createGeoMetadata, createGeoParquetCopyOptions, type GeoMetadata } from '../../core/geo/geoparquet.ts';
import { CRS84_PROJJSON, createLonLatTransform, type PositionTransform } from '../../core/geo/crs.ts';
import { quoteIdentifier, quoteLiteral } from '../../core/sql.ts';
import { ConvertError } from './convert-error.ts';
import { planSource, prepareInput, type GeometryOptions, type PreparedInput } from './read-source.ts';
import { stageShapes, stageHilbertKeys } from './stage-shapes.ts';

/**
 * DuckDB's memory for one conversion; past it, DuckDB spills to the scratch folder. Without a limit its share grew
 * with the file (1.6 GB for 4M GeoJSON points, 80% of RAM at most). 256 MB and 512 MB made ordinary inputs fail
 * (rows of 2 KB, 10 KB), and a 100 MB feature needed 1.5 GB; 2 GB leaves them room.
 */
const DUCKDB_MEMORY = '2GB';

/** What to convert and how. */
export interface ConvertOptions extends GeometryOptions {
  input: string;
  /** Default: the input with its extension replaced by `.parquet` (`.geo.parquet` when the input is `.parquet`). */
  output?: string;
  /** Replace an existing output. */
  force?: boolean;
  /** The layer of a GeoPackage or File Geodatabase (needed when it has several). */
  layer?: string;
  /** Rows per row group (PARQUET_SETTINGS.rowGroupSize by default). */
  rowGroupSize?: number;
  /**
   * The CRS of the input's coordinates when they are not longitude/latitude (`EPSG:2056`, a PROJ string or WKT):
   * they are reprojected to longitude/latitude. A shapefile, GeoPackage or File Geodatabase names its own.
   */
  crs?: string;
  /** Told the number of rows read so far, after each chunk. */
  onProgress?: (rows: number) => void;
}

/** What a conversion wrote. */
export interface ConvertResult {
  output: string;
  rows: number;
  geo: GeoMetadata;
}

/**
 * The output a conversion of `input` writes when none is given.
 * @example defaultOutput('data/cities.csv') // 'data/cities.parquet'
 */
export function defaultOutput(input: string): string {
  const stem = input.replace(/\.[^./\\]*$/, '');
  const output = `${stem}.parquet`;
  return output === input ? `${stem}.geo.parquet` : output;
}

/** Converts one file to GeoParquet 1.1. @throws ConvertError naming the file when it cannot. */
export async function convertFile(options: ConvertOptions): Promise<ConvertResult> {
  const { input } = options;
  const output = options.output ?? defaultOutput(input);
  if (!existsSync(input)) throw new ConvertError(input, 'no such file');
  if (existsSync(output) && !options.force) throw new ConvertError(output, 'it exists already; add --force to replace it');
  const fromGdal = GDAL_INPUTS.has(extname(input).toLowerCase());
  if (fromGdal && options.crs !== undefined) throw new ConvertError(input, '--crs is for GeoJSON, CSV and Parquet inputs: GDAL reads the CRS a shapefile, GeoPackage or File Geodatabase names, and reprojects it');
  const transform = lonLatTransform(input, options.crs);
  // The scratch folder sits beside the output, so the finished file is renamed within one file system.
  const scratch = await mkdtemp(join(dirname(output), `.${basename(output)}.convert-`));
  const instance = await DuckDBInstance.create(join(scratch, 'scratch.duckdb'), { temp_directory: join(scratch, 'spill'), memory_limit: DUCKDB_MEMORY });
  const reader = await instance.connect();
  const writer = await instance.connect();
  try {
    const readable = fromGdal ? await exportLayer(input, options.layer, scratch) : await prepareInput(input, scratch, input);
    const plan = await planSource(reader, readable, input, options);
    try {
      await reader.run(`CREATE TABLE source AS ${plan.query}`);
    } catch (error) {
      throw new ConvertError(input, `DuckDB cannot read it: ${describeDuckDbError(error)}`);
    }
    const staged = await stageShapes(reader, writer, plan.geometry, input, { transform, onProgress: options.onProgress });
    if (staged.bbox === null) throw new ConvertError(input, staged.rows === 0 ? 'it has no rows' : 'none of its rows has a geometry');
    await stageHilbertKeys(reader, writer, staged.bbox);
    const geo = createGeoMetadata(staged.types, staged.bbox, CRS84_PROJJSON);
    const partial = join(scratch, 'output.parquet');
    await writeSorted(reader, plan.attributes, partial, geo, options.rowGroupSize);
    await rename(partial, output);
    return { output, rows: staged.rows, geo };
  } finally {
    writer.closeSync();
    reader.closeSync();
    instance.closeSync();
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Inputs GDAL (gdal3.js) reads: each layer is written as GeoJSON in WGS84 to the scratch folder, then as one feature
 * per line, like any GeoJSON input.
 */
const GDAL_INPUTS = new Set(['.shp', '.gpkg', '.gdb']);

/**
 * Writes the layer of a shapefile, GeoPackage or File Geodatabase into `scratch` as one GeoJSON feature per line in
 * WGS84, ready for planSource. A file of several layers needs `layer`. GDAL writes the layer straight to disk, and
 * the lines are copied from there a megabyte at a time, so neither holds the layer in memory.
 */
async function exportLayer(input: string, layer: string | undefined, scratch: string): Promise<PreparedInput> {
  const { listGdalLayers, streamLayerAsGeoJson } = await import('../enrich/inspect-gdal.ts');
  const collection = join(scratch, 'layer.geojson');
  try {
    const layers = await listGdalLayers(input);
    if (layer !== undefined && !layers.includes(layer)) throw new Error(`it has no layer "${layer}"; its layers are ${layers.join(', ')}`);
    if (layer === undefined && layers.length > 1) throw new Error(`it has ${layers.length} layers (${layers.join(', ')}): choose one with --layer`);
    await streamLayerAsGeoJson(input, layer ?? null, collection);
  } catch (error) {
    throw new ConvertError(input, (error as Error).message.split('\n')[0]!);
  }
  const lines = await prepareInput(collection, scratch, input);
  await rm(collection);
  return lines;
}

/** The reprojection from `crs` to longitude/latitude, null when there is none to do. @throws ConvertError for a CRS geoshelf does not know. */
function lonLatTransform(input: string, crs: string | undefined): PositionTransform | null {
  if (crs === undefined) return null;
  try {
    return createLonLatTransform(crs);
  } catch (error) {
    throw new ConvertError(input, (error as Error).message);
  }
}

/** DuckDB's first line, and for a CSV the line that names the column it could not convert. */
function describeDuckDbError(error: unknown): string {
  const lines = (error instanceof Error ? error.message : String(error)).split('\n');
  const column = lines.find((line) => line.startsWith('Error when converting column'));
  return column ? `${lines[0]}: ${column}` : lines[0]!;
}

/** Joins the attributes to their shapes, in Hilbert order (rows without a geometry last), and writes the file. */
async function writeSorted(connection: DuckDBConnection, attributes: string[], path: string, geo: GeoMetadata, rowGroupSize: number | undefined): Promise<void> {
  const columns = [
    ...attributes.map((name) => `source.${quoteIdentifier(name)}`),
    'st_geomfromwkb(shapes.wkb) AS geometry',
    `CASE WHEN shapes.xmin IS NULL THEN NULL ELSE {'xmin': shapes.xmin, 'ymin': shapes.ymin, 'xmax': shapes.xmax, 'ymax': shapes.ymax} END AS bbox`,
  ];
  await connection.run(
    `COPY (SELECT ${columns.join(', ')} FROM source JOIN shapes ON shapes.row = source.rowid LEFT JOIN keys ON keys.row = shapes.row ` +
      `ORDER BY keys.hilbert NULLS LAST, shapes.row) TO ${quoteLiteral(path)} (${createGeoParquetCopyOptions(geo, { rowGroupSize })})`,
  );
}
