import { DataType, tableFromIPC, TimeUnit, type Table } from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeWkb } from '../core/geo/wkb.ts';
import { ARROW_PAGE_METADATA_KEY } from '../query/arrow.ts';
import { QueryErrorSchema, QueryResultSchema, type QueryResult } from '../schemas/query.ts';
import { prefersArrow } from '../server/query-formats.ts';
import { post, queryServer, sourceRef } from './helpers/queries.ts';
import { readSampleJson } from './helpers/sample.ts';

const ARROW = 'application/vnd.apache.arrow.stream';
// A loaded machine starts workers slowly; these tests are about what an answer holds, not how fast it comes.
const server = queryServer({ queryTimeoutMs: 30_000 });
const capped = queryServer({ queryTimeoutMs: 30_000, queryMaxResponseBytes: 64 * 1024 });
afterAll(async () => {
  await server.close();
  await capped.close();
});

const countries = () => sourceRef(server, 'countries', 'natural-earth', 'countries', 'countries-110m');
const arrowHeaders = { accept: ARROW };

async function readArrow(response: Response): Promise<Table> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe(ARROW);
  const bytes = new Uint8Array(await response.arrayBuffer());
  expect(Number(response.headers.get('content-length'))).toBe(bytes.byteLength);
  return tableFromIPC(bytes);
}

async function runJson(body: Record<string, unknown>): Promise<QueryResult> {
  const response = await post(server, '/api/queries', { sources: [countries()], ...body });
  expect(response.status).toBe(200);
  return QueryResultSchema.parse(await response.json());
}

describe('a query page as Arrow', () => {
  it('holds the rows, the columns and the page facts, in headers and in the schema metadata', async () => {
    const response = await post(server, '/api/queries', { sources: [countries()], sql: 'SELECT name, id, geometry FROM countries ORDER BY name', limit: 10 }, arrowHeaders);
    const table = await readArrow(response);
    expect(table.numRows).toBe(10);
    expect(table.schema.fields.map((field) => [field.name, String(field.type)])).toEqual([['name', 'Utf8'], ['id', 'Utf8'], ['geometry', 'Binary']]);
    expect(table.getChild('name')!.get(0)).toBe('Afghanistan');
    const headers = response.headers;
    expect(headers.get('x-geoshelf-returned-count')).toBe('10');
    expect(headers.get('x-geoshelf-has-more')).toBe('true');
    expect(headers.get('x-geoshelf-next-offset')).toBe('10');
    expect(headers.get('x-geoshelf-deterministic-order')).toBe('true');
    expect(headers.get('x-geoshelf-query-id')).toMatch(/^[A-Za-z0-9_-]{20,64}$/);
    expect(headers.get('x-service-query-token')).toBeTruthy();
    expect(headers.get('access-control-expose-headers')).toContain('X-Geoshelf-Next-Offset');
    const facts = JSON.parse(table.schema.metadata.get(ARROW_PAGE_METADATA_KEY)!);
    expect(facts).toMatchObject({ query_id: headers.get('x-geoshelf-query-id'), offset: 0, limit: 10, returned_count: 10, has_more: true, next_offset: 10, files_read: 1 });
    expect(JSON.stringify([...table.schema.metadata])).not.toContain(headers.get('x-service-query-token'));
  });

  it('marks the geometry as GeoArrow WKB in CRS84, decoding to the coordinates of the JSON page', async () => {
    const sql = 'SELECT name, geometry FROM countries ORDER BY name LIMIT 20';
    const table = await readArrow(await post(server, '/api/queries', { sources: [countries()], sql, limit: 20 }, arrowHeaders));
    const field = table.schema.fields.find((candidate) => candidate.name === 'geometry')!;
    expect(field.metadata.get('ARROW:extension:name')).toBe('geoarrow.wkb');
    const extension = JSON.parse(field.metadata.get('ARROW:extension:metadata')!);
    expect(extension).toMatchObject({ crs_type: 'projjson', crs: { type: 'GeographicCRS', id: { authority: 'OGC', code: 'CRS84' } } });
    const json = await runJson({ sql, limit: 20 });
    const geometries = table.getChild('geometry')!.toArray().map((wkb: Uint8Array) => decodeWkb(wkb));
    expect(geometries).toEqual(json.rows.map((row) => row.geometry));
  });

  it('reprojects geometries to result_crs as the JSON page does, and names the CRS', async () => {
    const body = { sql: "SELECT geometry FROM countries WHERE name = 'France'", result_crs: 'EPSG:3857' };
    const table = await readArrow(await post(server, '/api/queries', { sources: [countries()], ...body }, arrowHeaders));
    const extension = JSON.parse(table.schema.fields[0]!.metadata.get('ARROW:extension:metadata')!);
    expect(extension).toEqual({ crs: 'EPSG:3857', crs_type: 'authority_code' });
    const json = await runJson(body);
    expect(decodeWkb(table.getChild('geometry')!.get(0))).toEqual(json.rows[0]!.geometry);
  });

  it("keeps DuckDB's types, and says which ones became text", async () => {
    const sql = `SELECT 9007199254740993::BIGINT AS big, 7::TINYINT AS tiny, 12.5::DECIMAL(4,1) AS dec, -0.25::DECIMAL(30,2) AS wide,
      DATE '2024-01-02' AS day, TIMESTAMP '2024-01-02 03:04:05.123456' AS ts, TIMESTAMPTZ '2024-01-02 03:04:05+00' AS tstz,
      '\\x01\\x02'::BLOB AS bytes, {'a': 1, 'b': 'x'} AS obj, [1, NULL, 3] AS numbers, 'nan'::DOUBLE AS nan, true AS flag,
      NULL::VARCHAR AS nothing, MAP {'k': 1} AS map, 170141183460469231731687303715884105727::HUGEINT AS huge FROM countries LIMIT 1`;
    const response = await post(server, '/api/queries', { sources: [countries()], sql }, arrowHeaders);
    const table = await readArrow(response);
    const types = Object.fromEntries(table.schema.fields.map((field) => [field.name, field.type as DataType]));
    expect(Object.fromEntries(Object.entries(types).map(([name, type]) => [name, String(type)]))).toEqual({
      big: 'Int64', tiny: 'Int8', dec: 'Decimal[4e+1]', wide: 'Decimal[30e+2]', day: 'Date32<DAY>', ts: 'Timestamp<MICROSECOND>',
      tstz: 'Timestamp<MICROSECOND, UTC>', bytes: 'Binary', obj: 'Struct<{a:Int32, b:Utf8}>', numbers: 'List<Int32>', nan: 'Float64',
      flag: 'Bool', nothing: 'Utf8', map: 'Utf8', huge: 'Utf8',
    });
    expect((types.ts as unknown as { unit: TimeUnit }).unit).toBe(TimeUnit.MICROSECOND);
    const row = table.get(0)!.toJSON();
    expect(row.big).toBe(9007199254740993n);
    expect(table.getChild('ts')!.data[0]!.values[0]).toBe(1704164645123456n);
    expect(Array.from(table.getChild('dec')!.data[0]!.values.subarray(0, 4))).toEqual([125, 0, 0, 0]);
    expect(Array.from(table.getChild('wide')!.data[0]!.values.subarray(0, 4))).toEqual([2 ** 32 - 25, 2 ** 32 - 1, 2 ** 32 - 1, 2 ** 32 - 1]);
    expect(row.day).toBe(Date.UTC(2024, 0, 2));
    expect(Array.from(row.bytes as Uint8Array)).toEqual([1, 2]);
    expect(row.obj.toJSON()).toEqual({ a: 1, b: 'x' });
    expect(Array.from(row.numbers)).toEqual([1, null, 3]);
    expect(row.nan).toBeNaN();
    expect(row).toMatchObject({ tiny: 7, flag: true, nothing: null, map: '{"k":1}', huge: '170141183460469231731687303715884105727' });
    const warnings = JSON.parse(response.headers.get('x-geoshelf-warnings')!);
    expect(warnings.join(' ')).toContain('MAP(VARCHAR, INTEGER), HUGEINT are written as text');
  });

  it('pages to the end by the headers, giving the rows of the JSON result in order', async () => {
    const sql = 'SELECT name, id FROM countries ORDER BY name';
    const whole = await runJson({ sql, limit: 1000 });
    const first = await post(server, '/api/queries', { sources: [countries()], sql, limit: 50 }, arrowHeaders);
    const names: string[] = [];
    let response = first;
    for (;;) {
      const table = await readArrow(response);
      names.push(...table.getChild('name')!.toArray());
      if (response.headers.get('x-geoshelf-has-more') !== 'true') break;
      response = await post(server, `/api/queries/${first.headers.get('x-geoshelf-query-id')}/pages`, { offset: Number(response.headers.get('x-geoshelf-next-offset')), page_size: 50 }, {
        ...arrowHeaders, 'x-service-query-token': first.headers.get('x-service-query-token')!,
      });
    }
    expect(names).toEqual(whole.rows.map((row) => row.name));
    expect(response.headers.get('x-geoshelf-result-status')).toBe('rows_returned');
  });

  it('stays under the response cap, cutting the page as JSON does', async () => {
    const source = sourceRef(capped, 'countries', 'natural-earth', 'countries', 'countries-110m');
    const response = await post(capped, '/api/queries', { sources: [source], sql: 'SELECT name, geometry FROM countries ORDER BY name', limit: 100 }, arrowHeaders);
    const table = await readArrow(response.clone());
    expect((await response.arrayBuffer()).byteLength).toBeLessThanOrEqual(64 * 1024);
    expect(response.headers.get('x-geoshelf-response-truncated')).toBe('true');
    expect(table.numRows).toBeGreaterThan(0);
    expect(table.numRows).toBeLessThan(100);
    expect(response.headers.get('x-geoshelf-next-offset')).toBe(String(table.numRows));
    expect(JSON.parse(response.headers.get('x-geoshelf-warnings')!).join(' ')).toContain(`cut at ${table.numRows} rows`);
  });

  it('keeps the columns of an empty result', async () => {
    const response = await post(server, '/api/queries', { sources: [countries()], sql: "SELECT name, geometry FROM countries WHERE name = 'Atlantis'" }, arrowHeaders);
    const table = await readArrow(response);
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.map((field) => field.name)).toEqual(['name', 'geometry']);
    expect(response.headers.get('x-geoshelf-result-status')).toBe('empty_result');
    expect(response.headers.get('x-geoshelf-has-more')).toBe('false');
    expect(response.headers.get('x-geoshelf-next-offset')).toBeNull();
  });

  it('answers errors as QueryError JSON', async () => {
    const response = await post(server, '/api/queries', { sources: [countries()], sql: 'SELECT nope FROM countries' }, arrowHeaders);
    expect(response.status).toBe(422);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(QueryErrorSchema.parse(await response.json()).code).toBe('query_binder_error');
  });
});

describe('content negotiation of query pages', () => {
  it.each([
    [null, false],
    ['*/*', false],
    ['application/json', false],
    ['text/html', false],
    [ARROW, true],
    [`${ARROW}, application/json;q=0.5`, true],
    [`application/json, ${ARROW}`, false],
    [`${ARROW};q=0, */*`, false],
    [`text/html, ${ARROW};q=0.1`, true],
  ])('Accept %s asks for Arrow: %s', (accept, arrow) => {
    expect(prefersArrow(accept)).toBe(arrow);
  });

  it('keeps JSON the answer to an Accept naming neither, as the contract has no 406 for queries', async () => {
    const response = await post(server, '/api/queries', { sources: [countries()], sql: 'SELECT name FROM countries LIMIT 1' }, { accept: 'text/html' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
  });

  it('is listed in the OpenAPI document as a second content of the page routes', async () => {
    const document = await readSampleJson<Record<string, any>>('api/openapi/index.json');
    for (const [path, method] of [['/api/queries', 'post'], ['/api/queries/{query_id}/pages', 'post']] as const) {
      expect(Object.keys(document.paths[path][method].responses[200].content)).toEqual(['application/json', ARROW]);
    }
  });
});
