/** `geoshelf add --convert`: a GeoParquet file beside each data file that is not GeoParquet, described with it. */
import { stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { AddResult } from './add-outcome.ts';
import { describeGeoPackage } from './describe-layers.ts';
import type { DataFile } from './find-data-files.ts';
import { slugOf } from './slugs.ts';

/**
 * With `--convert`: a GeoParquet file beside each file that is not GeoParquet, made by `geoshelf convert`
 * (generator/convert/), and the list of files to describe with them. A conversion already there (a GeoParquet file
 * of the name it would get) is taken as it is. A file that cannot be converted keeps its own record, with a note.
 */
export async function convertAll(files: DataFile[], dataDir: string, result: AddResult, log: (line: string) => void): Promise<DataFile[]> {
  const { convertFile } = await import('../convert/convert-file.ts');
  const { listGdalLayers } = await import('../enrich/inspect-gdal.ts');
  const paths = new Set(files.map((file) => file.path));
  const out: DataFile[] = [];
  const convert = async (file: DataFile, output: string, layer?: string): Promise<DataFile | undefined> => {
    if (paths.has(output)) return undefined;
    try {
      const target = join(dataDir, output);
      if (!(await stat(target).then(() => true, () => false))) {
        await convertFile({ input: join(dataDir, file.path), output: target, ...(layer === undefined ? {} : { layer }) });
        log(`${file.path}${layer === undefined ? '' : ` (layer ${layer})`}: converted to ${output}`);
      }
      paths.add(output);
      return { path: output, label: output, formatType: 'geoparquet', modified: file.modified };
    } catch (error) {
      result.skipped.push({ path: file.path, reason: `not converted: ${(error as Error).message}` });
      return undefined;
    }
  };
  const stem = (file: DataFile) => file.path.slice(0, file.path.length - extname(file.path).length);
  for (const file of files) {
    if (file.remote) {
      out.push(file);
      if (file.formatType !== 'geoparquet' && file.formatType !== 'pmtiles') result.skipped.push({ path: file.label, reason: 'not converted, as it is in object storage: convert a copy with geoshelf convert, put it beside, and add that' });
      continue;
    }
    if (file.formatType === 'csv' || (file.formatType === 'geoparquet' && !(await hasGeoMetadata(join(dataDir, file.path))))) {
      // The CSV or plain Parquet file itself is no format of the catalog: its conversion stands for it.
      const converted = await convert(file, `${stem(file)}${file.formatType === 'csv' ? '' : '.geo'}.parquet`);
      if (converted) out.push(converted);
      else if (file.formatType !== 'csv') out.push(file);
      continue;
    }
    out.push(file);
    if (file.formatType === 'geojson' || file.formatType === 'shapefile') {
      const converted = await convert(file, `${stem(file)}.parquet`);
      if (converted) out.push(converted);
    } else if (file.formatType === 'geopackage' || file.formatType === 'file_geodatabase') {
      const layers = file.formatType === 'geopackage' ? describeGeoPackage(join(dataDir, file.path)).map(({ layer }) => layer!) : await listGdalLayers(join(dataDir, file.path));
      file.layerFiles = new Map();
      for (const layer of layers) {
        const converted = await convert(file, `${stem(file)}-${slugOf(layer)}.parquet`, layer);
        if (converted) file.layerFiles.set(layer, converted);
      }
    }
  }
  return out;
}

/** Whether a Parquet file carries GeoParquet's `geo` metadata. */
async function hasGeoMetadata(path: string): Promise<boolean> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const rows = (await connection.runAndReadAll(`SELECT 1 FROM parquet_kv_metadata('${path.replaceAll("'", "''")}') WHERE decode(key) = 'geo'`)).getRowObjects();
    return rows.length > 0;
  } catch {
    return false;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
