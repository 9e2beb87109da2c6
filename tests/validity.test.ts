import { readdirSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBBlobValue, type DuckDBConnection } from '@duckdb/node-api';
import initGeosJs from 'geos-wasm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { encodeWkb, type Geometry } from '../core/geo/wkb.ts';
import { passesQualityCheck } from '../generator/enrich/apply-facts.ts';
import { inspectGeoJson, inspectGeoParquet } from '../generator/enrich/inspect-data-file.ts';
import { reasonOfGeosMessage, reasonOfReadError } from '../runtime/geometry-validity.ts';
import type { FileMetadata } from '../schemas/file-metadata.ts';
import { makeTempDir, ROOT } from './helpers/catalog.ts';
import { sampleConfig } from './helpers/sample.ts';

interface Case { name: string; reason: string | null; bytes: Uint8Array | null }
interface Tally { invalid: number; reasons: Record<string, number>; empty: number }

const FIXTURE = join(ROOT, 'tests/fixtures/validity/cases.geojson');
const DATA = join(ROOT, 'catalog-data/data');
const SAMPLE_FILES = readdirSync(DATA, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.parquet')).sort();

/** GEOS asked directly, with its own context: `GEOSisValidReason` for every row, and `GEOSisEmpty`. */
async function openGeos(): Promise<(bytes: Uint8Array) => { reason: string | null; empty: boolean }> {
  const geos = (await initGeosJs()) as any;
  const context = geos.GEOS_init_r();
  let error = '';
  geos.GEOSContext_setErrorMessageHandler_r(context, geos.Module.addFunction((message: number) => (error = geos.Module.UTF8ToString(message)), 'vii'), 0);
  return (bytes) => {
    const pointer = geos.Module._malloc(Math.max(bytes.length, 1));
    geos.Module.HEAPU8.set(bytes, pointer);
    error = '';
    const geometry = geos.GEOSGeomFromWKB_buf_r(context, pointer, bytes.length);
    geos.Module._free(pointer);
    if (!geometry) return { reason: reasonOfReadError(error), empty: false };
    const text = geos.GEOSisValidReason_r(context, geometry);
    const message: string = geos.Module.UTF8ToString(text);
    const empty = geos.GEOSisEmpty_r(context, geometry) === 1;
    geos.GEOSFree_r(context, text);
    geos.GEOSGeom_destroy_r(context, geometry);
    return { reason: message === 'Valid Geometry' ? null : reasonOfGeosMessage(message), empty };
  };
}

function tally(verdicts: { reason: string | null; empty: boolean }[]): Tally {
  const result: Tally = { invalid: 0, reasons: {}, empty: 0 };
  for (const { reason, empty } of verdicts) {
    if (empty) result.empty++;
    if (!reason) continue;
    result.invalid++;
    result.reasons[reason] = (result.reasons[reason] ?? 0) + 1;
  }
  return result;
}

let geosVerdict: Awaited<ReturnType<typeof openGeos>>;
let instance: DuckDBInstance;
let connection: DuckDBConnection;
beforeAll(async () => {
  geosVerdict = await openGeos();
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
  await connection.run('SET GLOBAL enable_geoparquet_conversion = false');
});
afterAll(() => {
  connection.closeSync();
  instance.closeSync();
});

const fixture = JSON.parse(await readFile(FIXTURE, 'utf8')) as { features: { properties: { case: string; reason: string | null }; geometry: Geometry }[] };
const jsonCases: Case[] = fixture.features.map(({ properties, geometry }) => ({ name: properties.case, reason: properties.reason, bytes: encodeWkb(geometry) }));
const square = [[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]];
// What GeoJSON cannot hold: non-finite numbers, an empty point, broken bytes, a null.
const parquetCases: Case[] = [
  ...jsonCases,
  { name: 'nan-coordinate', reason: 'invalid-coordinate', bytes: encodeWkb({ type: 'Polygon', coordinates: [[[0, 0], [Number.NaN, 0], [1, 1], [0, 1], [0, 0]]] }) },
  { name: 'nan-point', reason: 'invalid-coordinate', bytes: encodeWkb({ type: 'Point', coordinates: [Number.NaN, 3] }) },
  { name: 'infinite-line', reason: 'invalid-coordinate', bytes: encodeWkb({ type: 'LineString', coordinates: [[0, 0], [Infinity, 1]] }) },
  { name: 'empty-point', reason: null, bytes: encodeWkb({ type: 'Point', coordinates: [] }) },
  { name: 'truncated', reason: 'malformed', bytes: encodeWkb({ type: 'Polygon', coordinates: [square] }).subarray(0, 20) },
  { name: 'null', reason: null, bytes: null },
];

async function writeGeoParquet(cases: Case[]): Promise<string> {
  const path = join(await makeTempDir(), 'cases.parquet');
  await connection.run('CREATE OR REPLACE TABLE cases (name VARCHAR, geometry BLOB)');
  const appender = await connection.createAppender('cases');
  for (const { name, bytes } of cases) {
    appender.appendVarchar(name);
    if (bytes) appender.appendBlob(bytes);
    else appender.appendNull();
    appender.endRow();
  }
  appender.closeSync();
  const geo = JSON.stringify({ version: '1.1.0', primary_column: 'geometry', columns: { geometry: { encoding: 'WKB', geometry_types: [] } } });
  await connection.run(`COPY cases TO '${path}' (FORMAT parquet, KV_METADATA {geo: '${geo}'})`);
  return path;
}

describe('the fixture cases', () => {
  test.each(parquetCases.filter((row) => row.bytes).map((row) => [row.name, row.reason ?? 'valid', row.bytes!] as const))('%s: GEOS reports %s', (_name, reason, bytes) => {
    expect(geosVerdict(bytes).reason ?? 'valid').toBe(reason);
  });

  test('as GeoParquet, are counted invalid, by reason and empty exactly as GEOS reports them row by row', async () => {
    const facts = await inspectGeoParquet(instance, await writeGeoParquet(parquetCases));
    const expected = tally(parquetCases.filter((row) => row.bytes).map((row) => geosVerdict(row.bytes!)));
    expect(expected.invalid).toBeGreaterThan(20);
    expect(facts.geometry).toMatchObject({ invalid: expected.invalid, empty: expected.empty, nulls: 1 });
    expect(facts.geometry!.reasons).toEqual(expected.reasons);
    expect(passesQualityCheck(facts)).toBe(false);
  });

  test('as GeoJSON, are counted exactly as GEOS reports them row by row', async () => {
    const facts = await inspectGeoJson(instance, FIXTURE);
    const expected = tally(jsonCases.map((row) => geosVerdict(row.bytes!)));
    expect(facts.geometry).toMatchObject({ invalid: expected.invalid, empty: expected.empty });
    expect(facts.geometry!.reasons).toEqual(expected.reasons);
  });

  test('leave a file of valid geometries passing the quality check', async () => {
    const valid = jsonCases.filter((row) => row.reason === null && !row.name.includes('empty'));
    const facts = await inspectGeoParquet(instance, await writeGeoParquet(valid));
    expect(facts.geometry).toMatchObject({ invalid: 0, empty: 0 });
    expect(facts.geometry!.reasons).toEqual({});
    expect(passesQualityCheck(facts)).toBe(true);
  });

  test('fail the quality check for an empty geometry, which is valid', async () => {
    const facts = await inspectGeoParquet(instance, await writeGeoParquet(parquetCases.filter((row) => row.name === 'square' || row.name === 'empty-point')));
    expect(facts.geometry).toMatchObject({ invalid: 0, empty: 1 });
    expect(passesQualityCheck(facts)).toBe(false);
  });
});

describe('the sample catalog', () => {
  let metadataByPath: Map<string, FileMetadata>;
  beforeAll(async () => {
    metadataByPath = new Map();
    const api = join(sampleConfig().distDir, 'api/collections');
    const documents = (await readdir(api, { recursive: true })).filter((path) => /\/files\/[^/]+\/index\.json$/.test(path));
    for (const document of documents) {
      const { file } = JSON.parse(await readFile(join(api, document), 'utf8'));
      for (const format of file.formats) {
        for (const source of format.sources) if (source.location?.path) metadataByPath.set(source.location.path, source.source_metadata);
      }
    }
  });

  test.each(SAMPLE_FILES)('says of %s what GEOS says, row by row', async (path) => {
    const relation = `read_parquet('${join(DATA, path)}')`;
    const type = String((await connection.runAndReadAll(`SELECT column_type FROM (DESCRIBE SELECT geometry FROM ${relation})`)).getRows()[0]?.[0]);
    const expression = type === 'GEOMETRY' ? 'st_asbinary(geometry)' : 'geometry';
    const rows = (await connection.runAndReadAll(`SELECT ${expression} FROM ${relation} WHERE geometry IS NOT NULL`)).getRows();
    const expected = tally(rows.map(([value]) => geosVerdict((value as DuckDBBlobValue).bytes)));
    const metadata = metadataByPath.get(path)!;
    expect(metadata).toMatchObject({ invalid_geometry_count: expected.invalid, empty_geometry_count: expected.empty });
    expect(metadata.invalid_geometry_reasons).toEqual(expected.reasons);
    if (expected.invalid > 0) expect(metadata.quality_check_passed).toBe(false);
  });
});
