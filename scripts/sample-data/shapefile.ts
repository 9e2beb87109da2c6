/**
 * Writes the sample's shapefiles and its File Geodatabase from its own GeoJSON files with GDAL compiled to
 * WebAssembly (gdal3.js, GDAL 3.8's ESRI Shapefile and OpenFileGDB drivers). A shapefile is `.shp`, `.shx`,
 * `.dbf` (UTF-8, said by the `.cpg`) and `.prj` (WGS84); the `.dbf` header's date of last update is fixed, so
 * two runs write the same bytes. A geodatabase is a `.gdb` folder. Nothing is downloaded.
 *
 * @example npm run sample-data:shapefiles
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_OUT_DIR } from './build.ts';

/** The GeoJSON files converted, each beside itself as a shapefile of the same name: one of polygons, one of points. */
export const SHAPEFILES = [
  'natural-earth/countries/2.0.2/countries-110m.geojson',
  'geonames/megacities/3.1.0/megacities.geojson',
];

/** The date written into every `.dbf` header: the sample's data release, not the day the script ran. */
const DBF_DATE = '2024-01-01';

interface GdalModule {
  open(path: string): Promise<{ datasets: unknown[] }>;
  ogr2ogr(dataset: unknown, options: string[], name: string): Promise<{ all: { local: string; real: string }[] }>;
  getFileBytes(path: string): Promise<Uint8Array>;
  close(dataset: unknown): Promise<void>;
}

/**
 * The File Geodatabases written, each from a GeoJSON file into a `.gdb` folder beside it, with one layer of the
 * given name. OpenFileGDB needs one geometry type per layer, so polygons are written as MultiPolygons.
 */
export const FILE_GEODATABASES = [
  { source: 'natural-earth/countries/2.0.2/countries-110m.geojson', layer: 'countries', type: 'MULTIPOLYGON' },
];

/** GDAL 3.8 in WebAssembly, loaded once. */
async function loadGdal(): Promise<GdalModule> {
  const require = createRequire(import.meta.url);
  const initGdalJs = require('gdal3.js/node.js') as (options: { path: string; useWorker: boolean }) => Promise<GdalModule>;
  // gdal3.js puts './' before the folder it is given, so it must be relative to the working directory.
  return initGdalJs({ path: relative(process.cwd(), dirname(require.resolve('gdal3.js/dist/package/gdal3.js'))), useWorker: false });
}

/** Writes the shapefiles and the File Geodatabases into `outDir`, and returns the files written. */
export async function writeGdalFiles(outDir: string): Promise<string[]> {
  const gdal = await loadGdal();
  return [...(await writeShapefiles(gdal, outDir)), ...(await writeFileGeodatabases(gdal, outDir))].sort();
}

/**
 * Writes each File Geodatabase of FILE_GEODATABASES. Unlike the shapefiles, its bytes differ from run to run:
 * GDAL gives the geodatabase's items new UUIDs (GDB_Items, a00000004) and a new time each time (a00000006), so
 * the committed folder is the output of one run; every other file, the features included, comes out the same.
 */
async function writeFileGeodatabases(gdal: GdalModule, outDir: string): Promise<string[]> {
  const written: string[] = [];
  for (const { source, layer, type } of FILE_GEODATABASES) {
    const opened = await gdal.open(join(outDir, source));
    const name = `${basename(source, '.geojson')}.gdb`;
    // gdal3.js writes to /output/<name>.gdb whatever name it is given, so it is given the name without `.gdb`.
    const output = await gdal.ogr2ogr(opened.datasets[0], ['-f', 'OpenFileGDB', '-nln', layer, '-nlt', type], basename(name, '.gdb'));
    const folder = join(outDir, dirname(source), name);
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder, { recursive: true });
    for (const file of output.all) {
      const target = join(folder, basename(file.local));
      writeFileSync(target, await gdal.getFileBytes(file.real));
      written.push(target);
    }
    await gdal.close(opened.datasets[0]);
  }
  return written;
}

/** Writes each shapefile of SHAPEFILES into `outDir`, and returns the files written. */
async function writeShapefiles(gdal: GdalModule, outDir: string): Promise<string[]> {
  const written: string[] = [];
  for (const source of SHAPEFILES) {
    const opened = await gdal.open(join(outDir, source));
    const name = basename(source, '.geojson');
    const output = await gdal.ogr2ogr(opened.datasets[0], ['-f', 'ESRI Shapefile', '-lco', 'ENCODING=UTF-8', '-lco', `DBF_DATE_LAST_UPDATE=${DBF_DATE}`, '-nln', name], name);
    for (const file of output.all) {
      const target = join(outDir, dirname(source), basename(file.local));
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, await gdal.getFileBytes(file.real));
      written.push(target);
    }
    await gdal.close(opened.datasets[0]);
  }
  return written;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2] ?? DEFAULT_OUT_DIR;
  for (const path of await writeGdalFiles(outDir)) console.log(`${path.slice(outDir.length).replace(/^\//, '').padEnd(66)} ${readFileSync(path).length.toLocaleString('en-US').padStart(12)} bytes`);
}
