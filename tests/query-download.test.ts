import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWkb } from '../core/geo/wkb.ts';
import { geometryToWkt } from '../core/geo/wkt.ts';
import { QueryErrorSchema, QueryResultSchema, type QueryResult } from '../schemas/query.ts';
import { listen } from '../server/listen.ts';
import { queryServer, sourceRef } from './helpers/queries.ts';
import { sampleConfig } from './helpers/sample.ts';
import { createStacAjv, SPEC_DIR } from './helpers/stac-schemas.ts';

const GEOPARQUET_SCHEMA = join(SPEC_DIR, 'geoparquet', 'v1.1.0', 'schema.json');
const HAS_SCHEMAS = existsSync(GEOPARQUET_SCHEMA) && existsSync(join(SPEC_DIR, 'geojson', 'FeatureCollection.json'));
const OGR_FORMATS = await promisify(execFile)('ogrinfo', ['--formats']).then(({ stdout }) => stdout, () => undefined);
const HAS_OGRINFO = OGR_FORMATS !== undefined;
const HAS_OGR_PARQUET = OGR_FORMATS?.includes('Parquet -vector-') === true;
if (!HAS_SCHEMAS) console.warn(`query-download: ${SPEC_DIR} lacks the GeoParquet or GeoJSON schemas; schema checks are skipped`);
if (!HAS_OGRINFO) console.warn('query-download: ogrinfo (gdal-bin) is not installed; the GDAL checks are skipped');
else if (!HAS_OGR_PARQUET) console.warn("query-download: this GDAL has no Parquet driver (Debian's gdal-bin 3.6 has none); the GDAL GeoParquet check is skipped");

// A loaded machine starts workers slowly; these tests are about what a file holds, not how fast it comes.
const geoshelf = queryServer({ queryTimeoutMs: 30_000, queryDownloadMaxRows: 1000 });
let origin = '';
let close: () => Promise<void>;
let scratch = '';
let duckdb: DuckDBConnection;

beforeAll(async () => {
  const server = await listen(geoshelf, { port: 0, hostname: '127.0.0.1' });
  origin = server.url!.replace(/\/$/, '');
  close = () => server.close(true);
  scratch = await mkdtemp(join(tmpdir(), 'geoshelf-download-test-'));
  duckdb = await (await DuckDBInstance.create(':memory:')).connect();
});
afterAll(async () => {
  await close();
  await geoshelf.close();
  await rm(scratch, { recursive: true, force: true });
});

const countries = () => sourceRef(geoshelf, 'countries', 'natural-earth', 'countries', 'countries-110m');
const cities = () => sourceRef(geoshelf, 'cities', 'geonames', 'cities', 'cities-15000');
const COUNTRIES_SQL = 'SELECT name, id, geometry, bbox FROM countries ORDER BY name';

async function runQuery(body: Record<string, unknown>): Promise<QueryResult> {
  const response = await fetch(`${origin}/api/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sources: [countries()], limit: 1000, ...body }) });
  expect(response.status).toBe(200);
  return QueryResultSchema.parse(await response.json());
}

const downloadUrl = (result: QueryResult, format: string) => `${origin}/api/queries/${result.query_id}/download.${format}?token=${encodeURIComponent(result.query_token)}`;

async function download(result: QueryResult, format: string): Promise<{ response: Response; path: string }> {
  const response = await fetch(downloadUrl(result, format));
  expect(response.status).toBe(200);
  expect(response.headers.get('content-disposition')).toBe(`attachment; filename="query-${result.query_id}.${format}"`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  expect(Number(response.headers.get('content-length'))).toBe(bytes.byteLength);
  const path = join(scratch, `${result.query_id}.${format}`);
  await writeFile(path, bytes);
  return { response, path };
}

async function rowsOf(sql: string): Promise<Record<string, unknown>[]> {
  return (await duckdb.runAndReadAll(sql)).getRowObjects();
}

async function expectError(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(QueryErrorSchema.parse(await response.json()).code).toBe(code);
}

describe('a whole result downloaded as GeoParquet', () => {
  it('is read by DuckDB as GEOMETRY, row for row as the query answered it', async () => {
    const result = await runQuery({ sql: COUNTRIES_SQL });
    const { response, path } = await download(result, 'parquet');
    expect(response.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect(response.headers.get('x-geoshelf-row-count')).toBe(String(result.returned_count));
    const columns = await rowsOf(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
    expect(columns.map((column) => [column.column_name, column.column_type])).toEqual([
      ['name', 'VARCHAR'], ['id', 'VARCHAR'], ['geometry', "GEOMETRY('OGC:CRS84')"], ['bbox', 'STRUCT(xmin DOUBLE, ymin DOUBLE, xmax DOUBLE, ymax DOUBLE)'],
    ]);
    const rows = await rowsOf(`SELECT name, st_asbinary(geometry) AS wkb FROM read_parquet('${path}')`);
    expect(rows.map((row) => row.name)).toEqual(result.rows.map((row) => row.name));
    expect(rows.map((row) => decodeWkb((row.wkb as { bytes: Uint8Array }).bytes))).toEqual(result.rows.map((row) => row.geometry));
  });

  it.skipIf(!HAS_SCHEMAS)('carries geo metadata valid against GeoParquet 1.1, with types, bbox and the covering', async () => {
    const { path } = await download(await runQuery({ sql: COUNTRIES_SQL }), 'parquet');
    const [entry] = await rowsOf(`SELECT decode(value) AS geo FROM parquet_kv_metadata('${path}') WHERE decode(key) = 'geo'`);
    const geo = JSON.parse(String(entry!.geo));
    const ajv = await createStacAjv();
    const validate = ajv.compile(JSON.parse(await readFile(GEOPARQUET_SCHEMA, 'utf8')));
    expect(validate(geo), JSON.stringify(validate.errors)).toBe(true);
    expect(geo).toMatchObject({ version: '1.1.0', primary_column: 'geometry', columns: { geometry: { encoding: 'WKB', geometry_types: ['MultiPolygon', 'Polygon'] } } });
    expect(geo.columns.geometry.covering.bbox.xmin).toEqual(['bbox', 'xmin']);
    expect(geo.columns.geometry.bbox[0]).toBeCloseTo(-180, 5);
  });

  it.skipIf(!HAS_OGR_PARQUET)('is read by GDAL as a layer of the same features', async () => {
    const result = await runQuery({ sql: COUNTRIES_SQL });
    const { path } = await download(result, 'parquet');
    const { stdout } = await promisify(execFile)('ogrinfo', ['-ro', '-so', '-al', path]);
    expect(stdout).toContain(`Feature Count: ${result.returned_count}`);
    expect(stdout).toMatch(/Geometry Column = geometry/);
  });

  it('is plain Parquet when the result has no geometry', async () => {
    const { path } = await download(await runQuery({ sql: 'SELECT count(*) AS n FROM countries' }), 'parquet');
    expect(await rowsOf(`SELECT n FROM read_parquet('${path}')`)).toEqual([{ n: 177n }]);
    expect(await rowsOf(`SELECT key FROM parquet_kv_metadata('${path}') WHERE decode(key) = 'geo'`)).toEqual([]);
  });

  it('is refused in a projected result_crs, which GeoParquet could only name in PROJJSON', async () => {
    const result = await runQuery({ sql: COUNTRIES_SQL, result_crs: 'EPSG:3857', limit: 1 });
    await expectError(await fetch(downloadUrl(result, 'parquet')), 422, 'download_crs_not_supported');
  });
});

describe('a whole result downloaded as GeoJSON', () => {
  it.skipIf(!HAS_SCHEMAS)('is a FeatureCollection valid against the GeoJSON schema, feature for row', async () => {
    const result = await runQuery({ sql: COUNTRIES_SQL });
    const { response, path } = await download(result, 'geojson');
    expect(response.headers.get('content-type')).toBe('application/geo+json');
    const collection = JSON.parse(await readFile(path, 'utf8'));
    const ajv = await createStacAjv();
    const validate = ajv.getSchema('https://geojson.org/schema/FeatureCollection.json')!;
    expect(validate(collection), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    expect(collection.features).toHaveLength(result.returned_count);
    expect(collection.features.map((feature: { geometry: unknown }) => feature.geometry)).toEqual(result.rows.map((row) => row.geometry));
    expect(collection.features[0].properties).toEqual({ name: result.rows[0]!.name, id: result.rows[0]!.id, bbox: result.rows[0]!.bbox });
  });

  it('stays in longitude/latitude whatever result_crs asks, as RFC 7946 wants', async () => {
    const lonLat = await runQuery({ sql: "SELECT geometry FROM countries WHERE name = 'France'" });
    const projected = await runQuery({ sql: "SELECT geometry FROM countries WHERE name = 'France'", result_crs: 'EPSG:3857' });
    const { path } = await download(projected, 'geojson');
    expect(JSON.parse(await readFile(path, 'utf8')).features[0].geometry).toEqual(lonLat.rows[0]!.geometry);
  });

  it.skipIf(!HAS_OGRINFO)('is read by GDAL straight from its URL', async () => {
    const result = await runQuery({ sql: 'SELECT name, geometry FROM countries' });
    // The file is streamed once, without range requests, so GDAL reads it as a stream.
    const { stdout } = await promisify(execFile)('ogrinfo', ['-ro', '-so', '-al', `/vsicurl_streaming/${downloadUrl(result, 'geojson')}`]);
    expect(stdout).toContain(`Feature Count: ${result.returned_count}`);
    expect(stdout).toMatch(/name: String/);
  });
});

describe('a whole result downloaded as CSV', () => {
  it('parses back to the same rows, geometries as the WKT DuckDB writes', async () => {
    const result = await runQuery({ sql: COUNTRIES_SQL });
    const { response, path } = await download(result, 'csv');
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const text = await readFile(path, 'utf8');
    expect(text.split('\r\n')[0]).toBe('name,id,geometry,bbox');
    const rows = await rowsOf(`SELECT name, id, geometry FROM read_csv('${path}', header = true, all_varchar = true)`);
    expect(rows.map((row) => [row.name, row.id])).toEqual(result.rows.map((row) => [row.name, row.id]));
    const source = join(sampleConfig().dataDir, 'natural-earth/countries/2.0.2/countries-110m.parquet');
    const wkt = await rowsOf(`SELECT st_astext(geometry) AS geometry FROM read_parquet('${source}') ORDER BY name`);
    expect(rows.map((row) => row.geometry)).toEqual(wkt.map((row) => row.geometry));
  });

  it.each([
    'POINT (1 2)', 'POINT EMPTY', 'LINESTRING (0 0, 1.5 2.25)', 'LINESTRING EMPTY', 'POLYGON ((0 0, 1 0, 1 1, 0 0), (0.1 0.1, 0.2 0.1, 0.2 0.2, 0.1 0.1))',
    'MULTIPOINT (1 2, 3 4)', 'MULTILINESTRING ((0 0, 1 1), (2 2, 3 3))', 'MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))',
    'GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1))', 'GEOMETRYCOLLECTION EMPTY', 'POINT (0.1 -179.99999999999997)',
  ])('writes %s as WKT that DuckDB reads back to the same geometry', async (wkt) => {
    const [original] = await rowsOf(`SELECT st_asbinary('${wkt}'::GEOMETRY) AS wkb`);
    const written = geometryToWkt(decodeWkb((original!.wkb as { bytes: Uint8Array }).bytes));
    const [back] = await rowsOf(`SELECT st_asbinary('${written}'::GEOMETRY) AS wkb`);
    expect(Buffer.from((back!.wkb as { bytes: Uint8Array }).bytes)).toEqual(Buffer.from((original!.wkb as { bytes: Uint8Array }).bytes));
  });

  it('quotes fields holding commas, quotes and line breaks (RFC 4180)', async () => {
    const result = await runQuery({ sql: `SELECT 'a,"b"' || chr(10) || 'c' AS text, NULL::INTEGER AS nothing, [1, 2] AS list, {'k': 'v'} AS obj FROM countries LIMIT 2` });
    const { path } = await download(result, 'csv');
    expect(await readFile(path, 'utf8')).toBe('text,nothing,list,obj\r\n"a,""b""\nc",,"[1,2]","{""k"":""v""}"\r\n"a,""b""\nc",,"[1,2]","{""k"":""v""}"\r\n');
    const rows = await rowsOf(`SELECT * FROM read_csv('${path}', header = true, all_varchar = true)`);
    expect(rows[0]).toEqual({ text: 'a,"b"\nc', nothing: null, list: '[1,2]', obj: '{"k":"v"}' });
  });
});

describe('the download route', () => {
  it('refuses a result past GEOSHELF_QUERY_DOWNLOAD_MAX_ROWS, and takes it under a LIMIT', async () => {
    const create = (sql: string) => fetch(`${origin}/api/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sources: [cities()], sql, limit: 1 }) })
      .then(async (response) => QueryResultSchema.parse(await response.json()));
    await expectError(await fetch(downloadUrl(await create('SELECT name, geometry FROM cities'), 'csv')), 422, 'download_too_many_rows');
    const { response } = await download(await create('SELECT name, geometry FROM cities ORDER BY name LIMIT 1000'), 'csv');
    expect(response.headers.get('x-geoshelf-row-count')).toBe('1000');
  });

  it('takes the token in the header too, and refuses a bad or missing one', async () => {
    const result = await runQuery({ sql: 'SELECT name FROM countries', limit: 1 });
    const path = `${origin}/api/queries/${result.query_id}/download.csv`;
    expect((await fetch(path, { headers: { 'x-service-query-token': result.query_token } })).status).toBe(200);
    await expectError(await fetch(path), 400, 'token_missing');
    await expectError(await fetch(`${path}?token=${result.query_token.slice(0, -4)}AAAA`), 400, 'token_invalid');
    const other = await runQuery({ sql: 'SELECT id FROM countries', limit: 1 });
    await expectError(await fetch(`${path}?token=${encodeURIComponent(other.query_token)}`), 400, 'token_query_mismatch');
  });

  it('answers 404 to a format it does not write, and HEAD without a body', async () => {
    const result = await runQuery({ sql: 'SELECT name FROM countries', limit: 1 });
    await expectError(await fetch(downloadUrl(result, 'xlsx')), 404, 'unknown_download_format');
    const head = await fetch(downloadUrl(result, 'csv'), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await head.text()).toBe('');
  });

  it('leaves no file behind', async () => {
    expect((await readdir(tmpdir())).filter((name) => name.startsWith('geoshelf-download-') && !name.startsWith('geoshelf-download-test-'))).toEqual([]);
  });
});
