import { base64url } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { createToken, readTokenKeys } from '../query/token.ts';
import { QueryBoundsSchema, QueryErrorSchema, QueryResultSchema } from '../schemas/query.ts';
import { getWithToken, post, queryServer, sourceRef, TEST_KEYS } from './helpers/queries.ts';

const server = queryServer();
const other = queryServer();
afterAll(async () => {
  await server.close();
  await other.close();
});

const countries = () => sourceRef(server, 'countries', 'natural-earth', 'countries', 'countries-110m');
const create = (body: Record<string, unknown>) => post(server, '/api/queries', { sources: [countries()], ...body });

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json');
  const body = QueryErrorSchema.parse(await response.json());
  expect(body.code).toBe(code);
  return body;
}

describe('POST /api/queries', () => {
  it('answers the first page with a token, truthful counters and a map configuration', async () => {
    const response = await create({ sql: 'SELECT name, id, geometry FROM countries ORDER BY name', limit: 10 });
    expect(response.status).toBe(200);
    const result = QueryResultSchema.parse(await response.json());
    expect(result.rows).toHaveLength(10);
    expect(result).toMatchObject({ offset: 0, limit: 10, returned_count: 10, has_more: true, next_offset: 10, result_status: 'rows_returned', deterministic_order: true, response_truncated: false, files_read: 1 });
    expect(result.rows[0]!.name).toBe('Afghanistan');
    expect((result.rows[0]!.geometry as { type: string }).type).toMatch(/Polygon/);
    expect(result.columns.map((column) => [column.name, column.type])).toEqual([['name', 'string'], ['id', 'string'], ['geometry', 'geometry']]);
    expect(result.bytes_read).toBeGreaterThan(0);
    expect(result.elapsed_ms).toBeGreaterThan(0);
    expect(result.query_id).toMatch(/^[A-Za-z0-9_-]{22,64}$/);
    expect(result.map_configuration).toMatchObject({ source: { type: 'vector', tiles: [`https://catalog.example.org/api/queries/${result.query_id}/tiles/{z}/{x}/{y}.mvt`] }, token_header: 'X-Service-Query-Token' });
    expect(JSON.stringify(result.map_configuration)).not.toContain(result.query_token);
  });

  it('keeps a column named __proto__ as a property of each row, in the HTTP answer and the service\'s own', async () => {
    const sql = 'SELECT name AS "__proto__", 1 AS constructor FROM countries ORDER BY name LIMIT 2';
    const body = await (await create({ sql })).json() as { rows: Record<string, unknown>[] };
    expect(body.rows.map((row) => Object.entries(row))).toEqual([[['__proto__', 'Afghanistan'], ['constructor', 1]], [['__proto__', 'Albania'], ['constructor', 1]]]);
    const page = await server.queries.run({ sources: [countries()], sql });
    expect(page.rows.map((row) => Object.getOwnPropertyNames(row))).toEqual([['__proto__', 'constructor'], ['__proto__', 'constructor']]);
  });

  it('writes a page as JSON.stringify would write the result it stands for', async () => {
    const text = await (await create({ sql: "SELECT name, 'a \"quoted\" \\ name 東京' AS note, geometry FROM countries ORDER BY name", limit: 3 })).text();
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
  });

  it('says when the order is not deterministic and the result is empty', async () => {
    const unordered = QueryResultSchema.parse(await (await create({ sql: 'SELECT name FROM countries', limit: 5 })).json());
    expect(unordered.deterministic_order).toBe(false);
    expect(unordered.warnings.join(' ')).toContain('ORDER BY');
    const empty = QueryResultSchema.parse(await (await create({ sql: "SELECT name FROM countries WHERE name = 'Atlantis'" })).json());
    expect(empty).toMatchObject({ returned_count: 0, has_more: false, result_status: 'empty_result' });
    expect(empty.map_configuration).toBeUndefined();
  });

  it('shapes every kind of value as the contract allows', async () => {
    const sql = `SELECT 9007199254740993::BIGINT AS big, 42::BIGINT AS small, 12.5::DECIMAL(4,1) AS dec, DATE '2024-01-02' AS day,
      TIMESTAMP '2024-01-02 03:04:05' AS ts, '\\x01\\x02'::BLOB AS bytes, {'a': 1, 'b': 'x'} AS obj, [1, 2] AS numbers,
      [{'k': 1}] AS objects, 'nan'::DOUBLE AS nan, true AS flag FROM countries LIMIT 1`;
    const result = QueryResultSchema.parse(await (await create({ sql })).json());
    expect(result.rows[0]).toEqual({
      big: '9007199254740993', small: 42, dec: 12.5, day: '2024-01-02', ts: '2024-01-02T03:04:05', bytes: 'AQI=',
      obj: { a: 1, b: 'x' }, numbers: [{ value: 1 }, { value: 2 }], objects: [{ k: 1 }], nan: null, flag: true,
    });
    expect(result.warnings.join(' ')).toMatch(/NaN/);
    expect(result.warnings.join(' ')).toMatch(/2\^53/);
  });

  it('reprojects geometries to result_crs and picks geometry_column among several', async () => {
    const result = QueryResultSchema.parse(await (await create({
      sql: "SELECT geometry AS outline, st_geomfromwkb(st_asbinary(geometry)) AS copy FROM countries WHERE name = 'France'",
      result_crs: 'EPSG:3857',
      geometry_column: 'copy',
    })).json());
    const coordinates = JSON.stringify(result.rows[0]!.outline);
    expect(coordinates).toMatch(/\d{6,}\./);
    expect(result.map_configuration?.geometry_column).toBe('copy');
    await expectError(await create({ sql: 'SELECT 1 AS x FROM countries', result_crs: 'EPSG:999999' }), 400, 'unknown_crs');
    await expectError(await create({ sql: 'SELECT name FROM countries', geometry_column: 'nowhere' }), 422, 'geometry_column_not_found');
  });

  it.each(['OGC:CRS84', 'CRS84', 'EPSG:4979', 'EPSG:4326'])('takes the lon/lat result_crs %s and leaves coordinates as they are', async (crs) => {
    // Found by the fuzzer: these names once reached proj4 as OGC:CRS84, which it does not know, and failed every query.
    const sql = "SELECT geometry FROM countries WHERE name = 'France'";
    const plain = QueryResultSchema.parse(await (await create({ sql })).json());
    const response = await create({ sql, result_crs: crs });
    expect(response.status, await response.clone().text()).toBe(200);
    const result = QueryResultSchema.parse(await response.json());
    expect(result.rows[0]!.geometry).toEqual(plain.rows[0]!.geometry);
  });

  it('cuts a page at the response cap and says so', async () => {
    const small = queryServer({ queryMaxResponseBytes: 20_000 });
    const result = QueryResultSchema.parse(await (await post(small, '/api/queries', { sources: [countries()], sql: 'SELECT * FROM countries ORDER BY name', limit: 100 })).json());
    expect(result.response_truncated).toBe(true);
    expect(result.returned_count).toBeLessThan(100);
    expect(result.has_more).toBe(true);
    expect(result.next_offset).toBe(result.returned_count);
    expect(JSON.stringify(result.rows).length).toBeLessThanOrEqual(20_000);
    await small.close();
  });
});

describe('pages', () => {
  it('concatenate to the rows of one large ordered query', async () => {
    const sql = 'SELECT name, id FROM countries ORDER BY name, id';
    const whole = QueryResultSchema.parse(await (await create({ sql, limit: 1000 })).json());
    const first = QueryResultSchema.parse(await (await create({ sql, limit: 40 })).json());
    const rows = [...first.rows];
    let next = first.next_offset;
    while (next !== undefined) {
      const page = QueryResultSchema.parse(await (await post(server, `/api/queries/${first.query_id}/pages`, { offset: next, page_size: 40 }, { 'x-service-query-token': first.query_token })).json());
      rows.push(...page.rows);
      next = page.next_offset;
    }
    expect(rows).toEqual(whole.rows);
    const past = QueryResultSchema.parse(await (await post(server, `/api/queries/${first.query_id}/pages`, { offset: 5000 }, { 'x-service-query-token': first.query_token })).json());
    expect(past).toMatchObject({ returned_count: 0, result_status: 'empty_page', has_more: false, limit: 100 });
  });

  it('work on another server instance that has the same key', async () => {
    const first = QueryResultSchema.parse(await (await create({ sql: 'SELECT name FROM countries ORDER BY name', limit: 3 })).json());
    const page = await post(other, `/api/queries/${first.query_id}/pages`, { offset: 3, page_size: 3 }, { 'x-service-query-token': first.query_token });
    expect(page.status).toBe(200);
    expect(QueryResultSchema.parse(await page.json()).rows.map((row) => row.name)).toEqual(['Angola', 'Antarctica', 'Argentina']);
  });

  it('refuse missing, tampered, expired and other queries\' tokens, each with its own code', async () => {
    const a = QueryResultSchema.parse(await (await create({ sql: 'SELECT name FROM countries ORDER BY name' })).json());
    const b = QueryResultSchema.parse(await (await create({ sql: 'SELECT id FROM countries ORDER BY id' })).json());
    const page = (token: string | undefined, id = a.query_id) => post(server, `/api/queries/${id}/pages`, { offset: 0 }, token ? { 'x-service-query-token': token } : {});
    await expectError(await page(undefined), 400, 'token_missing');
    const tampered = `${a.query_token.slice(0, -5)}${a.query_token.slice(-5) === 'AAAAA' ? 'BBBBB' : 'AAAAA'}`;
    await expectError(await page(tampered), 400, 'token_invalid');
    await expectError(await page(b.query_token), 400, 'token_query_mismatch');
    const expired = await createToken({ qid: a.query_id, sql: 'SELECT 1', sources: [countries()], limit: 1 }, readTokenKeys(TEST_KEYS), 60, 1_000);
    await expectError(await page(expired), 400, 'token_expired');
    const stranger = queryServer({ queryKeys: `k2:${base64url.encode(new Uint8Array(32).fill(7))}` });
    await expectError(await post(stranger, `/api/queries/${a.query_id}/pages`, { offset: 0 }, { 'x-service-query-token': a.query_token }), 400, 'token_invalid');
    await stranger.close();
  });
});

describe('limits', () => {
  const sql = 'SELECT name FROM countries';
  it.each([
    ['a body of exactly 64 KiB', 200, () => JSON.stringify({ sources: [countries()], sql }).padEnd(65_536, ' ')],
    ['a body of 64 KiB and one byte', 400, () => JSON.stringify({ sources: [countries()], sql }).padEnd(65_537, ' ')],
    ['SQL of 8192 bytes', 200, () => ({ sources: [countries()], sql: sql.padEnd(8192, ' ') })],
    ['SQL of 8193 bytes', 400, () => ({ sources: [countries()], sql: sql.padEnd(8193, ' ') })],
    ['SQL of 8192 characters but more bytes', 400, () => ({ sources: [countries()], sql: `${sql} -- ${'é'.repeat(9000)}`.slice(0, 8192) })],
    ['empty SQL', 400, () => ({ sources: [countries()], sql: '' })],
    ['8 sources', 200, () => ({ sources: Array.from({ length: 8 }, (_, i) => ({ ...countries(), alias: `c${i}` })), sql: 'SELECT name FROM c0' })],
    ['9 sources', 400, () => ({ sources: Array.from({ length: 9 }, (_, i) => ({ ...countries(), alias: `c${i}` })), sql: 'SELECT name FROM c0' })],
    ['no source', 400, () => ({ sources: [], sql })],
    ['an alias of 63 characters', 200, () => ({ sources: [{ ...countries(), alias: `a${'b'.repeat(62)}` }], sql: `SELECT name FROM a${'b'.repeat(62)}` })],
    ['an alias of 64 characters', 400, () => ({ sources: [{ ...countries(), alias: `a${'b'.repeat(63)}` }], sql })],
    ['an alias starting with a digit', 400, () => ({ sources: [{ ...countries(), alias: '1countries' }], sql })],
    ['limit 1000', 200, () => ({ sources: [countries()], sql, limit: 1000 })],
    ['limit 1001', 400, () => ({ sources: [countries()], sql, limit: 1001 })],
    ['limit 0', 400, () => ({ sources: [countries()], sql, limit: 0 })],
    ['an unknown property', 400, () => ({ sources: [countries()], sql, format: 'csv' })],
    ['an unknown property in a source', 400, () => ({ sources: [{ ...countries(), path: '/etc/passwd' }], sql })],
    ['a collection_id of 0', 400, () => ({ sources: [{ ...countries(), collection_id: 0 }], sql })],
    ['a body that is not JSON', 400, () => '{"sources": ['],
  ])('%s answers %i', async (_name, status, body) => {
    const response = await post(server, '/api/queries', body());
    expect(response.status, await response.clone().text()).toBe(status);
    if (status === 400) QueryErrorSchema.parse(await response.json());
  });

  it('page_size is accepted up to 1000, and offset from 0', async () => {
    const first = QueryResultSchema.parse(await (await create({ sql: 'SELECT name FROM countries ORDER BY name' })).json());
    const page = (body: unknown) => post(server, `/api/queries/${first.query_id}/pages`, body, { 'x-service-query-token': first.query_token });
    expect((await page({ offset: 0, page_size: 1000 })).status).toBe(200);
    await expectError(await page({ offset: 0, page_size: 1001 }), 400, 'invalid_request');
    await expectError(await page({ offset: -1 }), 400, 'invalid_request');
    await expectError(await page({ offset: 0, extra: 1 }), 400, 'invalid_request');
  });

  it.each([
    ['x'.repeat(19), 'invalid_query_id'],
    ['x'.repeat(20), 'token_query_mismatch'],
    ['x'.repeat(64), 'token_query_mismatch'],
    ['x'.repeat(65), 'invalid_query_id'],
    ['has.dots.in.it.xxxxxxxx', 'invalid_query_id'],
  ])('a query_id of "%s" answers 400 %s', async (id, code) => {
    const first = QueryResultSchema.parse(await (await create({ sql: 'SELECT name FROM countries' })).json());
    await expectError(await post(server, `/api/queries/${id}/pages`, { offset: 0 }, { 'x-service-query-token': first.query_token }), 400, code);
  });
});

describe('sources', () => {
  it('must resolve to a real chain of the catalog', async () => {
    await expectError(await post(server, '/api/queries', { sources: [{ ...countries(), file_source_id: 99_999 }], sql: 'SELECT 1 AS x FROM countries' }), 400, 'source_not_found');
    await expectError(await post(server, '/api/queries', { sources: [{ ...countries(), collection_id: 99 }], sql: 'SELECT 1 AS x FROM countries' }), 400, 'source_not_found');
    await expectError(await post(server, '/api/queries', { sources: [countries(), countries()], sql: 'SELECT 1 AS x FROM countries' }), 400, 'duplicate_alias');
  });

  it('answer 422 for a source whose format cannot be queried', async () => {
    const geojson = sourceRef(server, 'countries', 'natural-earth', 'countries', 'countries-110m', { format: 'geojson' });
    await expectError(await post(server, '/api/queries', { sources: [geojson], sql: 'SELECT 1 AS x FROM countries' }), 422, 'source_not_queryable');
  });

  it('join several aliases, and may leave some unused', async () => {
    const cities = sourceRef(server, 'cities', 'geonames', 'national-capitals', 'national-capitals');
    const response = await post(server, '/api/queries', {
      sources: [countries(), cities, { ...sourceRef(server, 'land', 'natural-earth', 'land', 'land-110m') }],
      sql: "SELECT c.name AS capital, n.name AS country FROM cities c JOIN countries n ON c.country = 'FR' AND n.name = 'France' ORDER BY capital",
    });
    const result = QueryResultSchema.parse(await response.json());
    expect(result.rows).toEqual([{ capital: 'Paris', country: 'France' }]);
    expect(result.files_read).toBe(2);
  });
});

describe('routes', () => {
  it('refuse other methods with 405 QueryError', async () => {
    const response = await server.fetch(new Request('http://localhost/api/queries'));
    await expectError(response, 405, 'method_not_allowed');
  });

  it('answer bounds as QueryBounds', async () => {
    const first = QueryResultSchema.parse(await (await create({ sql: "SELECT * FROM countries WHERE name IN ('France', 'Germany')" })).json());
    const response = await getWithToken(server, `/api/queries/${first.query_id}/bounds`, first.query_token);
    expect(response.status).toBe(200);
    QueryBoundsSchema.parse(await response.json());
  });

  it('take the token of bounds in the header or in the token query parameter that map_configuration names, and of pages in the header only', async () => {
    const first = QueryResultSchema.parse(await (await create({ sql: "SELECT name, geometry FROM countries WHERE name IN ('France', 'Germany') ORDER BY name", limit: 1 })).json());
    const parameter = first.map_configuration!.token_query_parameter;
    const bounds = `/api/queries/${first.query_id}/bounds`;
    const byHeader = await getWithToken(server, bounds, first.query_token);
    const byParameter = await server.fetch(new Request(`http://localhost${first.map_configuration!.bounds_url.replace('https://catalog.example.org', '')}?${parameter}=${encodeURIComponent(first.query_token)}&unrelated=1`));
    expect(byParameter.status).toBe(200);
    expect(QueryBoundsSchema.parse(await byParameter.json())).toEqual(QueryBoundsSchema.parse(await byHeader.json()));
    await expectError(await server.fetch(new Request(`http://localhost${bounds}`)), 400, 'token_missing');
    await expectError(await server.fetch(new Request(`http://localhost${bounds}?${parameter}=${first.query_token.slice(0, -4)}AAAA`)), 400, 'token_invalid');
    const page = await post(server, `/api/queries/${first.query_id}/pages?${parameter}=${encodeURIComponent(first.query_token)}`, { offset: 1, page_size: 1 });
    const refused = await expectError(page, 400, 'token_missing');
    expect(refused.message).toMatch(/pages the header only/);
  });

  it('declare the token query parameter of bounds in the OpenAPI document, beside the header it stands in for', async () => {
    const document = await (await server.fetch(new Request('http://localhost/api/openapi'))).json() as { paths: Record<string, Record<string, { parameters: { name: string; in: string; required?: boolean }[] }>> };
    const parameters = (path: string, method: string) => document.paths[path]![method]!.parameters.filter((parameter) => /token/i.test(parameter.name))
      .map(({ name, in: where, required }) => [name, where, required === true]).sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    expect(parameters('/api/queries/{query_id}/bounds', 'get')).toEqual([['X-Service-Query-Token', 'header', false], ['token', 'query', false]]);
    expect(parameters('/api/queries/{query_id}/tiles/{z}/{x}/{y}.mvt', 'get')).toEqual(parameters('/api/queries/{query_id}/bounds', 'get'));
    expect(parameters('/api/queries/{query_id}/pages', 'post')).toEqual([['X-Service-Query-Token', 'header', true]]);
  });
});
