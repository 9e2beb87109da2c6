/**
 * `npm run bench -- convert`: issue 26's figures for `geoshelf convert` and for a steward's first catalog.
 * - A 1M-feature GeoJSON file, a 1M-row CSV and a 1M-feature GeoPackage (points with three attributes; the
 *   GeoPackage is written by ogr2ogr from the GeoJSON) converted to GeoParquet by `geoshelf convert`, against
 *   `ogr2ogr` (Debian's GDAL) converting the same file to GeoPackage, in the same run: wall seconds and peak RSS of
 *   each process (GNU time), 3 rounds, a random side first each round. The GeoPackage goes through gdal3.js.
 * - From a folder of ten data files to a served catalog: `geoshelf add`, then `geoshelf start` until its API
 *   answers, as the README's guide runs them.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { median } from './build-bench.ts';
import type { BenchContext } from './run.ts';
import { findFreePort } from '../tests/helpers/web-app.ts';

const ROUNDS = 3;
const ROWS = 1_000_000;

export async function benchConvert(bench: BenchContext): Promise<void> {
  bench.section('geoshelf convert against ogr2ogr, and a steward\'s first catalog (issue 26)');
  const geojson = join(bench.root, 'points.geojson');
  const csv = join(bench.root, 'points.csv');
  await writePoints(geojson, csv);
  const hasOgr = spawnSync('ogr2ogr', ['--version']).status === 0;
  const hasTime = spawnSync('/usr/bin/time', ['-v', 'true']).status === 0;
  if (!hasOgr || !hasTime) console.log(`convert bench: ${hasOgr ? '' : 'ogr2ogr (gdal-bin) '}${hasTime ? '' : '/usr/bin/time '}is absent, so its side is not measured`);
  const inputs: [string, string, string[]][] = [
    ['GeoJSON', geojson, []],
    ['CSV (lon/lat)', csv, ['-oo', 'X_POSSIBLE_NAMES=lon', '-oo', 'Y_POSSIBLE_NAMES=lat', '-a_srs', 'EPSG:4326']],
  ];
  // Without ogr2ogr there is nothing to write the GeoPackage with, so its case is left out.
  if (hasOgr) {
    const gpkg = join(bench.root, 'points.gpkg');
    const written = spawnSync('ogr2ogr', ['-f', 'GPKG', gpkg, geojson, '-nln', 'points'], { encoding: 'utf8' });
    if (written.status !== 0) throw new Error(`ogr2ogr could not write ${gpkg}: ${written.stderr}`);
    inputs.push(['GeoPackage (through gdal3.js)', gpkg, []]);
  }
  for (const [name, input, ogrOptions] of inputs) {
    const runs = { geoshelf: [] as Measured[], ogr2ogr: [] as Measured[] };
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        async () => runs.geoshelf.push(await measure(process.execPath, [join(bench.repo, 'cli/geoshelf.ts'), 'convert', input, join(bench.root, 'out.parquet'), '--force'], bench.repo)),
        async () => {
          if (!hasOgr || !hasTime) return;
          await rm(join(bench.root, 'out.gpkg'), { force: true });
          runs.ogr2ogr.push(await measure('ogr2ogr', ['-f', 'GPKG', join(bench.root, 'out.gpkg'), input, ...ogrOptions], bench.root));
        },
      ];
      for (const side of Math.random() < 0.5 ? sides : sides.reverse()) await side();
    }
    const describe = (list: Measured[]) => list.map((run) => `${run.seconds.toFixed(1)} s / ${run.rssMb.toFixed(0)} MB`).join(', ');
    bench.report(
      `convert a ${ROWS.toLocaleString('en-US')}-point ${name}: geoshelf (GeoParquet) against ogr2ogr (GeoPackage), seconds / peak RSS`,
      `${describe(runs.geoshelf)}${runs.ogr2ogr.length > 0 ? ` against ${describe(runs.ogr2ogr)}` : ''}`,
      runs.ogr2ogr.length > 0
        ? `time ratio per round ${runs.geoshelf.map((run, index) => (run.seconds / runs.ogr2ogr[index]!.seconds).toFixed(2)).join(', ')}×; medians ${median(runs.geoshelf.map((run) => run.seconds)).toFixed(1)} / ${median(runs.ogr2ogr.map((run) => run.seconds)).toFixed(1)} s`
        : 'ogr2ogr not measured',
    );
  }
  await benchFirstCatalog(bench);
}

interface Measured {
  seconds: number;
  rssMb: number;
}

/** Runs a command under GNU time: its wall seconds and its peak resident set. Throws when it fails. */
async function measure(command: string, args: string[], cwd: string): Promise<Measured> {
  const started = performance.now();
  const result = spawnSync('/usr/bin/time', ['-v', command, ...args], { cwd, env: { ...process.env, CI: '1' }, encoding: 'utf8', maxBuffer: 1 << 26 });
  const seconds = (performance.now() - started) / 1000;
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr.slice(-500)}`);
  const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)?.[1] ?? Number.NaN);
  return { seconds, rssMb: kb / 1024 };
}

/** A million points spread over the land-ish latitudes, with a name, a class and a population, as GeoJSON and CSV. */
async function writePoints(geojson: string, csv: string): Promise<void> {
  const json = createWriteStream(geojson);
  const text = createWriteStream(csv);
  json.write('{"type":"FeatureCollection","features":[\n');
  text.write('name,class,population,lon,lat\n');
  let seed = 42;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
  for (let index = 0; index < ROWS; index++) {
    const lon = Number((random() * 360 - 180).toFixed(5));
    const lat = Number((random() * 140 - 60).toFixed(5));
    const population = Math.floor(random() ** 4 * 1e6);
    const kind = ['town', 'village', 'city', 'hamlet'][index % 4];
    const feature = `{"type":"Feature","properties":{"name":"place ${index}","class":"${kind}","population":${population}},"geometry":{"type":"Point","coordinates":[${lon},${lat}]}}`;
    const wroteJson = json.write(`${index === 0 ? '' : ',\n'}${feature}`);
    const wroteText = text.write(`place ${index},${kind},${population},${lon},${lat}\n`);
    if (!wroteJson) await once(json, 'drain');
    if (!wroteText) await once(text, 'drain');
  }
  json.end('\n]}\n');
  text.end();
  await Promise.all([once(json, 'finish'), once(text, 'finish')]);
}

/**
 * Ten of the sample's data files (GeoParquet, GeoJSON, a shapefile, a GeoPackage of four layers, a File
 * Geodatabase) in an empty folder, then `geoshelf add` and `geoshelf start` until `/api/collections/ours` answers.
 */
async function benchFirstCatalog(bench: BenchContext): Promise<void> {
  const sample = join(bench.repo, 'catalog-data/data');
  const files = [
    'geonames/cities/3.1.0/cities-15000.parquet', 'geonames/cities/3.1.0/cities-100000.parquet', 'geonames/megacities/3.1.0/megacities.geojson',
    'geonames/national-capitals/3.1.0/national-capitals.parquet', 'natural-earth/countries/2.0.2/countries-110m.geojson', 'natural-earth/land/2.0.2/land-110m.parquet',
    'natural-earth/coastlines/2.0.2/coastline-110m.parquet', 'us-census/us-boundaries/3.0.1/us-boundaries.gpkg', 'us-census/us-state-capitals/3.1.0/us-state-capitals.parquet',
  ];
  const rounds: { add: number; served: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const home = join(bench.root, `steward-${round}`);
    const data = join(home, 'data');
    await mkdir(data, { recursive: true });
    for (const file of files) await copyFile(join(sample, file), join(data, file.split('/').at(-1)!));
    // The tenth: a shapefile with its sidecars.
    for (const part of await readdir(join(sample, 'geonames/megacities/3.1.0'))) {
      if (/\.(shp|shx|dbf|prj|cpg)$/.test(part)) await copyFile(join(sample, 'geonames/megacities/3.1.0', part), join(data, part.replace('megacities', 'big-cities')));
    }
    const port = await findFreePort();
    const env = {
      ...process.env, CI: '1', GEOSHELF_DATA_DIR: data, GEOSHELF_CATALOG_DIR: join(home, 'catalog'), GEOSHELF_DIST_DIR: join(home, 'dist'),
      GEOSHELF_CACHE_DIR: join(home, 'cache'), PORT: String(port), HOST: '127.0.0.1', GEOSHELF_BASE_URL: `http://127.0.0.1:${port}`,
    };
    const started = performance.now();
    const add = spawnSync(process.execPath, [join(bench.repo, 'cli/geoshelf.ts'), 'add', data, '--collection', 'ours'], { cwd: bench.repo, env, encoding: 'utf8' });
    if (add.status !== 0) throw new Error(`geoshelf add failed: ${add.stderr}`);
    const added = performance.now();
    const server = spawn(process.execPath, [join(bench.repo, 'cli/geoshelf.ts'), 'start'], { cwd: bench.repo, env, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: server.stdout! }).on('line', (line) => line.startsWith('geoshelf is serving') && resolve());
        server.on('exit', (code) => reject(new Error(`geoshelf start exited with ${code}`)));
      });
      const answer = await fetch(`http://127.0.0.1:${port}/api/collections/ours`);
      if (answer.status !== 200) throw new Error(`the catalog answered ${answer.status}`);
      rounds.push({ add: (added - started) / 1000, served: (performance.now() - started) / 1000 });
    } finally {
      server.kill('SIGTERM');
      await once(server, 'exit');
    }
  }
  bench.report(
    'from a folder of ten data files to a served catalog (geoshelf add, then geoshelf start until its API answers)',
    rounds.map((round) => `${round.served.toFixed(1)} s`).join(', '),
    `add ${rounds.map((round) => round.add.toFixed(1)).join(', ')} s of it; the rest is the first build (statistics, PMTiles twins, the web app) and the server's start; ${ROUNDS} rounds, each in a fresh folder`,
  );
}
