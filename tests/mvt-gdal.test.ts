import { spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { afterAll, describe, expect, it } from 'vitest';
import { QueryResultSchema } from '../schemas/query.ts';
import { makeTempDir } from './helpers/catalog.ts';
import { getWithToken, post, queryServer, sourceRef } from './helpers/queries.ts';

const HAS_OGRINFO = spawnSync('ogrinfo', ['--version'], { encoding: 'utf8' }).status === 0;
if (!HAS_OGRINFO) console.log('SKIPPED: ogrinfo is not on PATH, so GDAL cannot read the query service tiles here; install gdal-bin (CI does) to run tests/mvt-gdal.test.ts.');

const server = queryServer({ queryTimeoutMs: 20_000 });
const folders: string[] = [];
afterAll(async () => {
  await server.close();
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

async function tileFolder(): Promise<string> {
  const folder = await makeTempDir('geoshelf-mvt-gdal-');
  folders.push(folder);
  return folder;
}

async function runQuery(sql: string, source: ReturnType<typeof sourceRef>) {
  const response = await post(server, '/api/queries', { sources: [source], sql, limit: 1 });
  expect(response.status, await response.clone().text()).toBe(200);
  return QueryResultSchema.parse(await response.json());
}

/** A tile, asked again after Retry-After when the pool is busy (a 503), as a client that honours it does. */
async function fetchTile(result: { query_id: string; query_token: string }, z: number, x: number, y: number): Promise<Uint8Array> {
  for (let attempt = 1; ; attempt++) {
    const response = await getWithToken(server, `/api/queries/${result.query_id}/tiles/${z}/${x}/${y}.mvt`, result.query_token);
    if (response.status === 503 && attempt < 4) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after')) * 1000));
      continue;
    }
    expect([200, 204], `${z}/${x}/${y}`).toContain(response.status);
    return new Uint8Array(await response.arrayBuffer());
  }
}

/** Browsers open at most six connections to a host over HTTP/1.1: a map asks for its tiles six at a time. */
const PARALLEL_TILES = 6;

/** Writes every non-empty tile of zooms 0–3 as `{z}/{x}/{y}.pbf`, the layout GDAL's MVT driver reads a zoom level from. */
async function writeTiles(result: { query_id: string; query_token: string }, folder: string): Promise<void> {
  for (let z = 0; z <= 3; z++) {
    const addresses = Array.from({ length: 4 ** z }, (_, i) => [i % 2 ** z, Math.floor(i / 2 ** z)] as const);
    const fetchNext = async (): Promise<void> => {
      const address = addresses.shift();
      if (!address) return;
      const [x, y] = address;
      const bytes = await fetchTile(result, z, x, y);
      if (bytes.length > 0) {
        await mkdir(join(folder, String(z), String(x)), { recursive: true });
        await writeFile(join(folder, String(z), String(x), `${y}.pbf`), bytes);
      }
      return fetchNext();
    };
    await Promise.all(Array.from({ length: PARALLEL_TILES }, fetchNext));
  }
}

function ogrinfo(...args: string[]) {
  return spawnSync('ogrinfo', ['-ro', ...args], { encoding: 'utf8' });
}

const featuresNamed = (bytes: Uint8Array, name: string) => {
  const layer = new VectorTile(new PbfReader(bytes)).layers.result;
  return Array.from({ length: layer?.length ?? 0 }, (_, i) => layer!.feature(i)).filter((feature) => feature.properties.name === name);
};

const countries = (version: string, file: string) => runQuery('SELECT * FROM countries', sourceRef(server, 'countries', 'natural-earth', 'countries', file, { version }));

describe.each([
  ['2.0.2', 'countries-110m'],
  ['1.1.4', 'countries-110m'],
  ['2.0.2', 'countries-50m'],
  ['1.1.4', 'countries-50m'],
  ['2.0.2', 'countries-10m'],
])('the query service tiles of world-atlas %s %s', (version, file) => {
  // countries-10m makes 85 tiles of 12 MB of outlines: 22 s in CI, past 30 s on a busy machine. A guard on hangs, not a latency bound.
  it.skipIf(!HAS_OGRINFO)('are read by GDAL at zooms 0–3 with every feature clipped and no error', { timeout: 180_000 }, async () => {
    const folder = await tileFolder();
    await writeTiles(await countries(version, file), folder);
    for (let z = 0; z <= 3; z++) {
      const read = ogrinfo('-al', '-so', join(folder, String(z)));
      expect(read.status, read.stderr).toBe(0);
      expect(read.stderr, `zoom ${z}`).not.toMatch(/ERROR|TopologyException/);
      expect(read.stdout).toMatch(/Feature Count: [1-9]/);
    }
  });
});

describe.each(['2.0.2', '1.1.4'])('the query service tiles of world-atlas %s countries-110m', (version) => {
  it.skipIf(!HAS_OGRINFO)('hold only polygons GEOS calls valid, unclipped, at zooms 0–3', async () => {
    const folder = await tileFolder();
    await writeTiles(await countries(version, 'countries-110m'), folder);
    for (let z = 0; z <= 3; z++) {
      const check = ogrinfo('-oo', 'CLIP=NO', join(folder, String(z)), '-dialect', 'SQLite', '-sql', 'SELECT count(*) AS invalid FROM result WHERE NOT ST_IsValid(geometry)');
      expect(check.stderr, `zoom ${z}`).not.toMatch(/ERROR/);
      expect(check.stdout, `zoom ${z}`).toMatch(/invalid \(Integer\) = 0\b/);
    }
  });
});

describe.each([
  ['with the bbox covering', 'SELECT * FROM capitals'],
  ['without it', 'SELECT name, geometry FROM capitals'],
])('a tile at the edge of the world, rows read %s', (_name, select) => {
  it('holds a place within its buffer across ±180°, shifted by 360°', async () => {
    const result = await runQuery(`${select} WHERE name = 'Funafuti'`, sourceRef(server, 'capitals', 'geonames', 'national-capitals', 'national-capitals'));
    const tiles = await Promise.all([0, 1, 2, 3].map((x) => fetchTile(result, 2, x, 2)));
    const xs = tiles.map((bytes) => featuresNamed(bytes, 'Funafuti').map((feature) => feature.loadGeometry()[0]![0]!.x));
    const east = Math.round(((179.19417 + 180) / 360) * 4 * 4096 - 3 * 4096);
    expect(xs).toEqual([[east - 4096], [], [], [east]]);
  });
});
