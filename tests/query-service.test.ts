import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { QUERY_ERRORS, QueryFailure, type QueryErrorCode } from '../query/errors.ts';
import { createQueryService } from '../query/service.ts';
import { QueryResultSchema } from '../schemas/query.ts';
import { loadSnapshot } from '../server/catalog.ts';
import { sampleConfig } from './helpers/sample.ts';
import { TEST_KEYS } from './helpers/queries.ts';

const config = { ...sampleConfig(), queryKeys: TEST_KEYS, queryTimeoutMs: 4000 };
const snapshot = loadSnapshot(config.distDir, { budgetBytes: 1 << 20, cacheMaxAge: 0 });
const index = snapshot.context.index;
let build = 'test';
const service = createQueryService({ config, catalog: () => ({ index, baseUrl: 'https://catalog.example.org', buildId: build }) });
afterAll(() => service.close());

function reference(alias: string, collection: string, dataset: string, file: string) {
  const entry = index.collections.get(collection)!;
  const found = entry.datasetsBySlug.get(dataset)!;
  const target = found.files.find((candidate) => candidate.slug === file)!;
  const link = target.formats.find((candidate) => index.formatsById.get(candidate.format_id)!.format_type === 'geoparquet')!;
  return { alias, collection_id: entry.collection.id, dataset_id: found.id, file_id: target.id, file_source_id: link.sources[0]!.id };
}

const countries = () => reference('countries', 'natural-earth', 'countries', 'countries-110m');

async function failure(promise: Promise<unknown>): Promise<QueryFailure> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(QueryFailure);
  return error as QueryFailure;
}

describe('the query service, called without HTTP', () => {
  it('runs a query, pages through it with its token, frames it and tiles it', async () => {
    const first = await service.run({ sources: [countries()], sql: 'SELECT name, geometry FROM countries ORDER BY name', limit: 100 });
    expect(QueryResultSchema.parse(first)).toEqual(first);
    expect(first.returned_count).toBe(100);
    const second = await service.page(first.query_id, first.query_token, { offset: first.next_offset });
    expect(second.offset).toBe(100);
    expect(second.rows.map((row) => row.name)).not.toContain(first.rows[0]!.name);
    const { bounds } = await service.bounds(first.query_id, first.query_token);
    expect(bounds[0]).toBeLessThan(-170);
    expect(bounds[2]).toBeGreaterThan(170);
    const tile = await service.tile(first.query_id, first.query_token, { z: 0, x: 0, y: 0 });
    expect(tile.features).toBeGreaterThan(150);
    expect(tile.bytes.byteLength).toBeGreaterThan(1000);
  });

  it.each<[string, () => Promise<unknown>, QueryErrorCode]>([
    ['a body that breaks the contract', () => service.run({ sources: [], sql: 'SELECT 1' }), 'invalid_request'],
    ['an unknown CRS', () => service.run({ sources: [countries()], sql: 'SELECT 1', result_crs: 'EPSG:999999' }), 'unknown_crs'],
    ['a dataset that does not exist', () => service.run({ sources: [{ ...countries(), dataset_id: 9999 }], sql: 'SELECT 1' }), 'source_not_found'],
    ['SQL that reads a file', () => service.run({ sources: [countries()], sql: "SELECT * FROM read_csv('/etc/passwd')" }), 'sql_table_function_not_allowed'],
    ['a column that does not exist', () => service.run({ sources: [countries()], sql: 'SELECT nope FROM countries' }), 'query_binder_error'],
    ['a page without token', () => service.page('x'.repeat(24), undefined, { offset: 0 }), 'token_missing'],
    ['a malformed query id', () => service.bounds('short', 'token'), 'invalid_query_id'],
  ])('answers %s with its catalog code, status and a message without SQL or paths', async (_name, call, code) => {
    const { body } = await failure(call());
    expect(body.code).toBe(code);
    expect(body.status).toBe(QUERY_ERRORS[code].status);
    expect(body.hint).toBe(QUERY_ERRORS[code].hint);
    expect(body.message).not.toMatch(/\/etc\/passwd|catalog-data|\.parquet|SELECT/);
  });

  it('makes a tile once for identical queries and concurrent requests, and again after a new build', async () => {
    const runs = vi.spyOn(service.pool, 'run');
    const sql = "SELECT name, geometry FROM countries WHERE name < 'M'";
    const [a, b] = await Promise.all([service.run({ sources: [countries()], sql }), service.run({ sources: [countries()], sql })]);
    runs.mockClear();
    const tiles = await Promise.all([
      service.tile(a.query_id, a.query_token, { z: 1, x: 1, y: 0 }),
      service.tile(a.query_id, a.query_token, { z: 1, x: 1, y: 0 }),
      service.tile(b.query_id, b.query_token, { z: 1, x: 1, y: 0 }),
    ]);
    expect(runs).toHaveBeenCalledTimes(1);
    expect(new Set(tiles.map((tile) => tile.etag)).size).toBe(1);
    expect(tiles[0]!.features).toBeGreaterThan(10);
    await service.tile(b.query_id, b.query_token, { z: 1, x: 1, y: 0 });
    expect(runs).toHaveBeenCalledTimes(1);
    await expect(service.tile(b.query_id, 'not a token', { z: 1, x: 1, y: 0 })).rejects.toBeInstanceOf(QueryFailure);
    build = 'rebuilt';
    await service.tile(b.query_id, b.query_token, { z: 1, x: 1, y: 0 });
    expect(runs).toHaveBeenCalledTimes(2);
    runs.mockRestore();
  });

  it('runs SQL that ends in a comment holding a semicolon and a dash-dash', async () => {
    const result = await service.run({ sources: [countries()], sql: 'SELECT name FROM countries ORDER BY name /* note; -- see */', limit: 3 });
    expect(result.rows).toHaveLength(3);
  });

  it('refuses a tile outside the world of its zoom', async () => {
    const first = await service.run({ sources: [countries()], sql: 'SELECT geometry FROM countries' });
    expect((await failure(service.tile(first.query_id, first.query_token, { z: 1, x: 2, y: 0 }))).body.code).toBe('invalid_tile');
  });
});

describe('the query error catalog', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const table = readme.slice(readme.indexOf('**Query errors**'), readme.indexOf('\n## ', readme.indexOf('**Query errors**')));

  it.each(Object.entries(QUERY_ERRORS))('documents %s in the README under its status', (code, definition) => {
    const row = table.split('\n').find((line) => line.includes(`\`${code}\``));
    expect(row, `README "Query errors" lists ${code}`).toBeDefined();
    expect(row!.split('|')[1]).toContain(String(definition.status));
  });

  it('lists no code in the README that the catalog does not have', () => {
    const documented = [...table.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!).filter((code) => /_/.test(code) || code in QUERY_ERRORS);
    expect(documented.filter((code) => !(code in QUERY_ERRORS))).toEqual([]);
  });
});
