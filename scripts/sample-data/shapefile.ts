/**
 * Writes the sample's shapefiles from its own GeoJSON files with GDAL compiled to WebAssembly (gdal3.js, GDAL
 * 3.8's ESRI Shapefile driver): `.shp`, `.shx`, `.dbf` (UTF-8, said by the `.cpg`) and `.prj` (WGS84). The
 * `.dbf` header's date of last update is fixed, so two runs write the same bytes. Nothing is downloaded.
 *
 * @example npm run sample-data:shapefiles
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** Writes each shapefile of SHAPEFILES into `outDir`, and returns the files written. */
export async function writeShapefiles(outDir: string): Promise<string[]> {
  const require = createRequire(import.meta.url);
  const initGdalJs = require('gdal3.js/node.js') as (options: { path: string; useWorker: boolean }) => Promise<GdalModule>;
  // gdal3.js puts './' before the folder it is given, so it must be relative to the working directory.
  const gdal = await initGdalJs({ path: relative(process.cwd(), dirname(require.resolve('gdal3.js/dist/package/gdal3.js'))), useWorker: false });
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
  return written.sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2] ?? DEFAULT_OUT_DIR;
  for (const path of await writeShapefiles(outDir)) console.log(`${path.slice(outDir.length).replace(/^\//, '').padEnd(66)} ${readFileSync(path).length.toLocaleString('en-US').padStart(12)} bytes`);
}
