/**
 * Facts of the formats DuckDB cannot read here (a shapefile, a File Geodatabase): GDAL 3.8 compiled to
 * WebAssembly (gdal3.js) turns the layer into a GeoJSON FeatureCollection in WGS84, and the GeoJSON inspector
 * reads that, so counts, bounds, geometry types, validity by GEOS and the data dictionary come out as for any
 * GeoJSON source. The conversion lives in a scratch folder for the inspection only. `geoshelf convert` writes
 * layers the same way, but straight to disk (`streamLayerAsGeoJson`), since its layers may not fit in memory.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, extname, join, relative } from 'node:path';
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
  /** Emscripten's module: its file system, and Node's file system to mount in it. */
  Module: {
    FS: { mkdir(path: string): void; rmdir(path: string): void; mount(type: unknown, options: { root: string }, point: string): void; unmount(point: string): void };
    NODEFS: unknown;
  };
}

/** gdal3.js writes every output under this folder of its own file system. */
const GDAL_OUTPUT = '/output';
let mounts = 0;

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
 * GDAL writes the layer into its in-memory file system, which is then copied out: the layer must fit in memory.
 */
export async function writeLayerAsGeoJson(path: string, layer: string | null, target: string): Promise<{ layer: string; located: boolean }> {
  return withDataset(path, async (module, dataset) => {
    const chosen = chooseLayer(dataset, layer);
    const output = await module.ogr2ogr(dataset, geoJsonOptions(chosen), 'inspected').catch((errors: unknown) => {
      throw new Error(describeGdalError(errors, 'GDAL cannot convert it'));
    });
    await writeFile(target, await module.getFileBytes(output.real));
    return { layer: chosen.name, located: chosen.located };
  });
}

/**
 * Writes one layer as `writeLayerAsGeoJson` does, the same GeoJSON, but straight to disk: `target`'s folder is
 * mounted in gdal3.js's file system (Node's, NODEFS) while ogr2ogr runs, and GDAL writes a feature at a time, so
 * memory does not grow with the layer. `geoshelf convert` uses it for layers that may be larger than memory.
 * @throws Error with GDAL's reason, or when `target` does not end in `.geojson` (gdal3.js names its outputs so).
 * @example await streamLayerAsGeoJson('parcels.gpkg', 'parcels', '/tmp/scratch/layer.geojson') // { layer: 'parcels', located: true }
 */
export async function streamLayerAsGeoJson(path: string, layer: string | null, target: string): Promise<{ layer: string; located: boolean }> {
  if (extname(target) !== '.geojson') throw new Error(`${target} does not end in .geojson`);
  return withDataset(path, async (module, dataset) => {
    const chosen = chooseLayer(dataset, layer);
    // A mount point per call, so that two exports under way at once cannot meet.
    const folder = `geoshelf-${process.pid}-${++mounts}`;
    const { FS, NODEFS } = module.Module;
    FS.mkdir(`${GDAL_OUTPUT}/${folder}`);
    FS.mount(NODEFS, { root: dirname(target) }, `${GDAL_OUTPUT}/${folder}`);
    try {
      await module.ogr2ogr(dataset, geoJsonOptions(chosen), `${folder}/${basename(target, '.geojson')}`).catch((errors: unknown) => {
        throw new Error(describeGdalError(errors, 'GDAL cannot convert it'));
      });
    } finally {
      FS.unmount(`${GDAL_OUTPUT}/${folder}`);
      FS.rmdir(`${GDAL_OUTPUT}/${folder}`);
    }
    return { layer: chosen.name, located: chosen.located };
  });
}

/** The layer to write: `layer` when the file has one of that name, else its first; and whether it names a CRS. */
function chooseLayer(dataset: GdalDataset, layer: string | null): { name: string; located: boolean } {
  const layers = dataset.info?.layers ?? [];
  const chosen = layers.find((each) => each.name === layer) ?? layers[0];
  if (chosen === undefined) throw new Error('it has no vector layer');
  return { name: chosen.name, located: chosen.geometryFields?.some((field) => field.coordinateSystem) ?? false };
}

/** ogr2ogr's options for a layer as GeoJSON in WGS84; without a CRS there is nothing to reproject from. */
function geoJsonOptions(chosen: { name: string; located: boolean }): string[] {
  return ['-f', 'GeoJSON', ...(chosen.located ? ['-t_srs', 'EPSG:4326'] : []), '-lco', 'WRITE_BBOX=NO', chosen.name];
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
