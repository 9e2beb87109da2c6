/**
 * Facts of the formats DuckDB cannot read here (a shapefile, a File Geodatabase): GDAL 3.8 compiled to
 * WebAssembly (gdal3.js) turns the layer into a GeoJSON FeatureCollection in WGS84, and the GeoJSON inspector
 * reads that, so counts, bounds, geometry types, validity by GEOS and the data dictionary come out as for any
 * GeoJSON source. The conversion lives in a scratch folder for the inspection only.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { inspectGeoJson, type DataFacts } from './inspect-data-file.ts';

interface GdalDataset {
  info?: { layers?: { name: string; geometryFields?: { coordinateSystem?: unknown }[] }[] };
}

interface GdalModule {
  open(path: string): Promise<{ datasets: GdalDataset[]; errors: unknown[] }>;
  ogr2ogr(dataset: GdalDataset, options: string[], name: string): Promise<{ local: string; real: string; all: { local: string; real: string }[] }>;
  getFileBytes(path: string): Promise<Uint8Array>;
  close(dataset: GdalDataset): Promise<void>;
}

let gdal: Promise<GdalModule> | null = null;

/** gdal3.js, started on first use: about 0.4 s, paid only by a build that reads such a file. */
function loadGdal(): Promise<GdalModule> {
  gdal ??= (async () => {
    const require = createRequire(import.meta.url);
    const init = require('gdal3.js/node.js') as (options: { path: string; useWorker: boolean }) => Promise<GdalModule>;
    // gdal3.js puts './' before the folder it is given, so it must be relative to the working directory.
    return init({ path: relative(process.cwd(), dirname(require.resolve('gdal3.js/dist/package/gdal3.js'))), useWorker: false });
  })();
  return gdal;
}

/**
 * Inspects one layer of a file GDAL opens (a `.shp` with its sidecars beside it, or a `.gdb` folder): `layer`
 * when the file has a layer of that name, else its first. Throws with GDAL's reason when it cannot be read.
 */
export async function inspectWithGdal(instance: DuckDBInstance, path: string, scratchDir: string, layer: string | null): Promise<DataFacts> {
  await mkdir(scratchDir, { recursive: true });
  const scratch = join(scratchDir, `gdal-${process.pid}-${basename(path)}.geojson`);
  try {
    const { located } = await writeLayerAsGeoJson(path, layer, scratch);
    const facts = await inspectGeoJson(instance, scratch);
    if (!located && facts.geometry) facts.warnings.push('it names no CRS (a shapefile without its .prj?), so its coordinates are taken as longitude/latitude');
    return facts;
  } finally {
    await rm(scratch, { force: true });
  }
}

/**
 * Writes one layer of a file GDAL opens (a shapefile, a GeoPackage, a File Geodatabase) to `target` as a GeoJSON
 * FeatureCollection in WGS84: `layer` when the file has a layer of that name, else its first. A layer that names
 * no CRS (a shapefile without its .prj) is written as it is, and `located` is false. Throws with GDAL's reason.
 */
export async function writeLayerAsGeoJson(path: string, layer: string | null, target: string): Promise<{ layer: string; located: boolean }> {
  return withDataset(path, async (module, dataset) => {
    const layers = dataset.info?.layers ?? [];
    const chosen = layers.find((each) => each.name === layer) ?? layers[0];
    if (chosen === undefined) throw new Error('it has no vector layer');
    // Without a CRS there is nothing to reproject from: the coordinates are taken as they are.
    const located = chosen.geometryFields?.some((field) => field.coordinateSystem) ?? false;
    const output = await module.ogr2ogr(dataset, ['-f', 'GeoJSON', ...(located ? ['-t_srs', 'EPSG:4326'] : []), '-lco', 'WRITE_BBOX=NO', chosen.name], 'inspected')
      .catch((errors: unknown) => {
        throw new Error(describeGdalError(errors, 'GDAL cannot convert it'));
      });
    await writeFile(target, await module.getFileBytes(output.real));
    return { layer: chosen.name, located };
  });
}

/** The names of the vector layers of a file GDAL opens (a File Geodatabase's, say), in GDAL's order. */
export async function listGdalLayers(path: string): Promise<string[]> {
  return withDataset(path, async (_module, dataset) => (dataset.info?.layers ?? []).map((layer) => layer.name));
}

/** Opens a file with GDAL, runs `work` on it and closes it; throws with GDAL's reason when it cannot be opened. */
async function withDataset<T>(path: string, work: (module: GdalModule, dataset: GdalDataset) => Promise<T>): Promise<T> {
  const module = await loadGdal();
  const opened = await module.open(path).catch((errors: unknown) => {
    throw new Error(describeGdalError(errors, 'GDAL cannot open it'));
  });
  const dataset = opened.datasets[0];
  if (!dataset) throw new Error(describeGdalError(opened.errors, 'GDAL cannot open it'));
  try {
    return await work(module, dataset);
  } finally {
    await module.close(dataset);
  }
}

/** GDAL's first message, without its error number; `fallback` when it gave none. */
function describeGdalError(errors: unknown, fallback: string): string {
  const first = (Array.isArray(errors) ? errors[0] : errors) as { message?: unknown } | undefined;
  // gdal3.js mounts the file's folder at /input: the name after it is the file's own.
  const message = typeof first?.message === 'string' ? first.message.trim().split('\n')[0]!.replaceAll('/input/', '') : '';
  return message ? `${fallback}: ${message}` : fallback;
}
