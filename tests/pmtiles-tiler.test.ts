import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { VectorTile } from '@mapbox/vector-tile';
import type { Point } from 'geojson';
import { PbfReader } from 'pbf';
import { PMTiles } from 'pmtiles';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTwinStamp, writePmTilesTwin, type TwinFacts } from '../generator/tiles/pmtiles-twin.ts';
import { stageFeatures, twinInstanceOptions } from '../generator/tiles/twin-stage.ts';
import { ROOT } from './helpers/catalog.ts';
import { PmTilesFileSource } from '../runtime/pmtiles-file-source.ts';
import { tileOf } from './helpers/pmtiles.ts';
import { mountSmallDisk, unmount } from './helpers/small-disk.ts';

const CITIES = join(ROOT, 'catalog-data/data/geonames/cities/3.1.0/cities-15000.parquet');
const COUNTRIES = join(ROOT, 'catalog-data/data/natural-earth/countries/2.0.2/countries-10m.parquet');
const dir = mkdtempSync(join(tmpdir(), 'geoshelf-twin-'));
let instance: DuckDBInstance;
const made = new Map<string, TwinFacts>();

async function twin(source: string, name: string, options: { maxTileBytes?: number } = {}): Promise<string> {
  const target = join(dir, `${name}.pmtiles`);
  made.set(name, await writePmTilesTwin({ instance, source, target, stamp: `stamp-of-${name}`, name, ...options }));
  return target;
}

/** Names in the layer of tile z/x/y. */
async function namesAt(archive: PMTiles, layer: string, z: number, x: number, y: number): Promise<string[]> {
  const tile = await archive.getZxy(z, x, y);
  if (!tile) return [];
  const found = new VectorTile(new PbfReader(new Uint8Array(tile.data))).layers[layer];
  return Array.from({ length: found?.length ?? 0 }, (_, index) => String(found!.feature(index).properties.name));
}

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:', { threads: '2' });
});
afterAll(() => {
  instance.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

describe('the PMTiles twin of a GeoParquet file', () => {
  it('opens in the pmtiles package with the file\'s columns, zooms and bounds, and draws each city at its place', async () => {
    const archive = new PMTiles(new PmTilesFileSource(await twin(CITIES, 'cities')));
    const facts = made.get('cities')!;
    const header = await archive.getHeader();
    expect(header.minZoom).toBe(0);
    expect(header.maxZoom).toBe(facts.maxZoom);
    expect(header.maxZoom).toBeGreaterThan(0);
    expect(header.tileType).toBe(1);
    const metadata = await archive.getMetadata() as { vector_layers: { id: string; fields: Record<string, string>; maxzoom: number }[]; geoshelf: { stamp: string; features: number } };
    expect(metadata.vector_layers[0]).toMatchObject({ id: 'cities', maxzoom: facts.maxZoom });
    expect(metadata.vector_layers[0]!.fields).toMatchObject({ name: 'String', population: 'Number' });
    expect(metadata.geoshelf.stamp).toBe('stamp-of-cities');
    // Every city of 15,000 people or more is at the highest zoom, where nothing is dropped.
    const rows = await (await instance.connect()).runAndReadAll(`SELECT count(*) FROM read_parquet('${CITIES}')`);
    expect(metadata.geoshelf.features).toBe(Number(rows.getRows()[0]![0]));
    expect(facts.dropped[facts.maxZoom] ?? 0).toBe(0);
    for (const [name, lon, lat] of [['Paris', 2.3488, 48.8534], ['Tokyo', 139.6917, 35.6895], ['Nairobi', 36.8167, -1.2833]] as const) {
      const [x, y] = tileOf(lon, lat, facts.maxZoom);
      expect(await namesAt(archive, 'cities', facts.maxZoom, x, y)).toContain(name);
    }
  });

  it('keeps every tile under the cap by dropping features where they are densest, and says so in its metadata', async () => {
    const cap = 40_000;
    const archive = new PMTiles(new PmTilesFileSource(await twin(CITIES, 'capped', { maxTileBytes: cap })));
    const facts = made.get('capped')!;
    let largest = 0;
    let tiles = 0;
    for (let z = 0; z <= facts.maxZoom; z++) {
      for (let x = 0; x < 2 ** z; x++) {
        for (let y = 0; y < 2 ** z; y++) {
          const tile = await archive.getZxy(z, x, y);
          if (!tile) continue;
          tiles++;
          largest = Math.max(largest, tile.data.byteLength);
        }
      }
    }
    expect(tiles).toBe(facts.tiles);
    expect(largest).toBe(facts.largestTileBytes);
    expect(largest).toBeLessThanOrEqual(cap);
    const dropped = ((await archive.getMetadata()) as { geoshelf: { dropped: Record<string, number> } }).geoshelf.dropped;
    expect(dropped['0']).toBeGreaterThan(0);
    expect(dropped).toEqual(facts.dropped);
    // Densest first: at zoom 0, India (dense) keeps a smaller share of its cities than Australia (sparse).
    const tile = new VectorTile(new PbfReader(new Uint8Array((await archive.getZxy(0, 0, 0))!.data))).layers.capped!;
    const kept = Array.from({ length: tile.length }, (_, index) => (tile.feature(index).toGeoJSON(0, 0, 0).geometry as unknown as { coordinates: [number, number] }).coordinates);
    const connection = await instance.connect();
    const share = async ([west, south, east, north]: number[]) => {
      const inBox = ([lon, lat]: [number, number]) => lon >= west! && lon <= east! && lat >= south! && lat <= north!;
      const all = Number((await connection.runAndReadAll(`SELECT count(*) FROM read_parquet('${CITIES}') WHERE bbox.xmin BETWEEN ${west} AND ${east} AND bbox.ymin BETWEEN ${south} AND ${north}`)).getRows()[0]![0]);
      return kept.filter(inBox).length / all;
    };
    const [india, australia] = [await share([68, 8, 89, 30]), await share([113, -44, 154, -10])];
    expect(india).toBeGreaterThan(0);
    expect(india).toBeLessThan(australia / 2);
  });

  it('draws polygons: the countries, each at its place', async () => {
    const archive = new PMTiles(new PmTilesFileSource(await twin(COUNTRIES, 'countries')));
    const facts = made.get('countries')!;
    expect(facts.maxZoom).toBeGreaterThanOrEqual(2);
    const [x, y] = tileOf(2.35, 46.5, 3);
    expect(await namesAt(archive, 'countries', 3, x, y)).toContain('France');
    const [fx, fy] = tileOf(178, -17.8, 4);
    expect(await namesAt(archive, 'countries', 4, fx, fy)).toContain('Fiji');
  });

  it('goes deep enough for sparse points that a map zoomed in draws each within about a kilometre of its place', async () => {
    // The world's 240-odd capitals fit one small tile at zoom 0, where a tile unit is 10 km; the twin still goes
    // to the zoom their spacing asks for.
    const source = join(ROOT, 'catalog-data/data/geonames/national-capitals/3.1.0/national-capitals.parquet');
    const archive = new PMTiles(new PmTilesFileSource(await twin(source, 'capitals')));
    const z = made.get('capitals')!.maxZoom;
    const connection = await instance.connect();
    const rows = (await connection.runAndReadAll(`SELECT name, bbox.xmin AS lon, bbox.ymin AS lat FROM read_parquet('${source}')`)).getRowObjects();
    let worst = 0;
    for (const row of rows) {
      const [x, y] = tileOf(Number(row.lon), Number(row.lat), z);
      const tile = await archive.getZxy(z, x, y);
      const layer = new VectorTile(new PbfReader(new Uint8Array(tile!.data))).layers.capitals!;
      const features = Array.from({ length: layer.length }, (_, index) => layer.feature(index)).filter((feature) => feature.properties.name === row.name);
      const [lon, lat] = (features[0]!.toGeoJSON(x, y, z).geometry as Point).coordinates as [number, number];
      worst = Math.max(worst, Math.abs(lon - Number(row.lon)), Math.abs(lat - Number(row.lat)));
    }
    expect(rows.length).toBeGreaterThan(200);
    expect(worst).toBeLessThan(0.015);
  });

  it('comes out byte for byte the same from the same file', async () => {
    const first = readFileSync(join(dir, 'cities.pmtiles'));
    await twin(CITIES, 'cities');
    expect(readFileSync(join(dir, 'cities.pmtiles')).equals(first)).toBe(true);
  });

  it('draws the same tiles whether each zoom passes through one bucket on disk or hundreds', async () => {
    // Buckets of 4 KB split the cities' and countries' zooms into hundreds, written in several reads of the store.
    for (const [source, name] of [[CITIES, 'cities'], [COUNTRIES, 'countries']] as const) {
      const small = join(dir, `${name}-small-buckets.pmtiles`);
      await writePmTilesTwin({ instance, source, target: small, stamp: `stamp-of-${name}`, name, bucketBytes: 4096 });
      expect(readFileSync(small).equals(readFileSync(join(dir, `${name}.pmtiles`))), name).toBe(true);
    }
  });

  it('stages every row of a file of more rows than DuckDB appends at once', async () => {
    const source = join(dir, 'many.parquet');
    const connection = await instance.connect();
    await connection.run(`COPY (SELECT i AS id, ('POINT (' || (i % 360 - 180) || ' ' || (i % 170 - 85) || ')')::GEOMETRY AS geometry FROM range(250000) t(i)) TO '${source}' (FORMAT parquet)`);
    connection.closeSync();
    const staged = await stageFeatures(instance, source);
    try {
      expect(staged.count).toBe(250_000);
      expect(staged.bounds).toEqual([-180, -85, 179, 84]);
      expect((await staged.first(3)).map((feature) => feature.properties.id)).toEqual([0, 1, 2]);
    } finally {
      await staged.close();
    }
  });

  it('tiles a crowded file with a DuckDB of 20 MB into the same bytes as without a limit, and says what did not fit under less', async () => {
    // 250,000 points sorted with their columns by DuckDB ran out of 20 MB, as 100M points ran out of a twin's 128 MB.
    const source = join(dir, 'crowded.parquet');
    const connection = await instance.connect();
    await connection.run(`COPY (SELECT i AS id, 'name-' || i AS name, ('POINT (' || (i % 3600 / 10 - 180) || ' ' || (i % 1700 / 10 - 85) || ')')::GEOMETRY AS geometry FROM range(250000) t(i)) TO '${source}' (FORMAT parquet)`);
    connection.closeSync();
    const unlimited = join(dir, 'crowded.pmtiles');
    await writePmTilesTwin({ instance, source, target: unlimited, stamp: 'x', name: 'crowded' });
    for (const [limit, outcome] of [['20MB', 'made'], ['4MB', 'failed']] as const) {
      const small = await DuckDBInstance.create(':memory:', { ...twinInstanceOptions(), memory_limit: limit });
      const target = join(dir, `crowded-${limit}.pmtiles`);
      try {
        const made = writePmTilesTwin({ instance: small, source, target, stamp: 'x', name: 'crowded' });
        if (outcome === 'made') {
          await made;
          expect(readFileSync(target).equals(readFileSync(unlimited))).toBe(true);
        } else {
          await expect(made).rejects.toThrow(/^(staging the file|choosing the zooms|placing the features of zoom \d+ of \d+) took more than the [\d.]+ [KM]iB that DuckDB has for a twin$/);
          expect(readdirSync(dir).filter((name) => name.startsWith(`crowded-${limit}`))).toEqual([]);
        }
      } finally {
        small.closeSync();
      }
    }
  });

  it('says the temporary folder ran out of room, and the room a twin needs there, and leaves nothing in it', async (context) => {
    const disk = await mountSmallDisk('1m');
    if ('reason' in disk) {
      console.warn(`the full-temporary-folder test is skipped: ${disk.reason}`);
      return context.skip();
    }
    const before = process.env.TMPDIR;
    process.env.TMPDIR = disk.dir;
    try {
      await expect(writePmTilesTwin({ instance, source: CITIES, target: join(dir, 'full.pmtiles'), stamp: 'x', name: 'full' }))
        .rejects.toThrow(`the temporary folder ${disk.dir} ran out of room while staging the file: a twin needs about 6 times its GeoParquet file there (set TMPDIR to a larger disk)`);
      expect(readdirSync(disk.dir)).toEqual([]);
      expect(existsSync(join(dir, 'full.pmtiles'))).toBe(false);
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
      await unmount(disk.dir);
    }
  });

  it('leaves no staging database behind, made or failed', async () => {
    const staging = () => readdirSync(tmpdir()).filter((name) => name.startsWith('geoshelf-twin-stage-'));
    const before = staging();
    await twin(CITIES, 'cities');
    await expect(writePmTilesTwin({ instance, source: join(dir, 'absent.parquet'), target: join(dir, 'absent.pmtiles'), stamp: 'x', name: 'absent' })).rejects.toThrow();
    writeFileSync(join(dir, 'not.parquet'), 'not a parquet file');
    await expect(writePmTilesTwin({ instance, source: join(dir, 'not.parquet'), target: join(dir, 'not.pmtiles'), stamp: 'x', name: 'not' })).rejects.toThrow();
    expect(staging()).toEqual(before);
    expect(readdirSync(dir).filter((name) => name.startsWith('absent') || name.startsWith('not.pmtiles'))).toEqual([]);
  });

  it('removes what a stopped build left in the temporary folder, and nothing of a running one', async () => {
    // A process that has ended stands for a build killed while making a twin.
    const gone = spawnSync(process.execPath, ['-e', 'process.pid']).pid!;
    const orphans = [`geoshelf-twin-stage-${gone}-abc123`, `geoshelf-twin-spill-${gone}-0`];
    const alive = `geoshelf-twin-stage-${process.pid}-def456`;
    for (const name of [...orphans, alive]) {
      mkdirSync(join(tmpdir(), name));
      writeFileSync(join(tmpdir(), name, 'twin.duckdb'), 'left behind');
    }
    await twin(CITIES, 'cities');
    const left = readdirSync(tmpdir());
    expect(orphans.filter((name) => left.includes(name))).toEqual([]);
    expect(left).toContain(alive);
    rmSync(join(tmpdir(), alive), { recursive: true });
  });

  it('tells its stamp, and no stamp for a missing or broken file', async () => {
    expect(await readTwinStamp(join(dir, 'cities.pmtiles'))).toBe('stamp-of-cities');
    expect(await readTwinStamp(join(dir, 'missing.pmtiles'))).toBeNull();
    writeFileSync(join(dir, 'garbage.pmtiles'), 'PMTiles but not really');
    expect(await readTwinStamp(join(dir, 'garbage.pmtiles'))).toBeNull();
  });
});
