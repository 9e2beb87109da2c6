import { afterAll, describe, expect, it } from 'vitest';
import { QueryErrorSchema, QueryResultSchema } from '../schemas/query.ts';
import { post, queryServer, sourceRef } from './helpers/queries.ts';
import { sampleConfig } from './helpers/sample.ts';

const DEADLINE = 2000;
const server = queryServer({ queryTimeoutMs: DEADLINE, queryWorkers: 2, queryQueue: 4, queryMemoryMb: 256 });
afterAll(() => server.close());

const countries = () => sourceRef(server, 'countries', 'natural-earth', 'countries', 'countries-110m');
const cities = () => sourceRef(server, 'cities', 'geonames', 'cities', 'cities-1000');
const query = (sql: string) => post(server, '/api/queries', { sources: [countries(), cities()], sql });

/** Nothing that would tell an attacker about the machine may appear in an answer. */
function expectNoLeak(text: string, sql: string) {
  expect(text).not.toContain(sampleConfig().dataDir);
  expect(text).not.toContain('/etc/');
  expect(text).not.toContain('.parquet');
  expect(text).not.toContain('allowed_paths');
  if (sql.length > 12) expect(text).not.toContain(sql.slice(0, 40));
}

async function expectNormalQueryWorks() {
  const response = await post(server, '/api/queries', { sources: [countries()], sql: 'SELECT count(*) AS n FROM countries' });
  expect(response.status).toBe(200);
  expect(QueryResultSchema.parse(await response.json()).rows[0]).toEqual({ n: 177 });
}

describe('hostile SQL', () => {
  it.each([
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT content FROM read_text('/etc/passwd')",
    "SELECT * FROM glob('/*')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM 'catalog-data/data/geonames/cities/3.1.0/cities-1000.parquet'",
    "COPY (SELECT * FROM countries) TO '/tmp/stolen.csv'",
    "ATTACH '/tmp/evil.db' AS evil",
    "ATTACH ':memory:' AS scratch",
    'INSTALL spatial',
    'LOAD spatial',
    "SET enable_external_access = true",
    'RESET ALL',
    'PRAGMA database_list',
    "CALL enable_logging('QueryLog')",
    "SELECT enable_logging('QueryLog')",
    'SELECT * FROM duckdb_views()',
    'SELECT * FROM sqlite_master',
    'SELECT * FROM pg_settings',
    "SELECT current_setting('allowed_paths')",
    'SELECT 1; SELECT 2',
    'WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT * FROM t',
    'SELECT * FROM generate_series(1, 1000000000)',
    "SELECT repeat('x', 1000000000)",
    'SELECT * FROM range(1000000000)',
    'EXPLAIN ANALYZE SELECT * FROM countries',
  ])('%s is refused without leaking anything, and the service works right after', async (sql) => {
    const response = await query(sql);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    const text = await response.text();
    QueryErrorSchema.parse(JSON.parse(text));
    expectNoLeak(text, sql);
    await expectNormalQueryWorks();
  });

  it('an engine error tells what kind of mistake, without the SQL or paths', async () => {
    const response = await query('SELECT no_such_column FROM countries');
    expect(response.status).toBe(422);
    const body = QueryErrorSchema.parse(await response.json());
    expect(body).toEqual({ code: 'query_binder_error', message: 'Column "no_such_column" is not in the tables the query reads; check its name in the schema route.' });
  });
});

describe('runaway queries', () => {
  it('a five-way cross join answers 504 within the deadline plus a second, and the service works right after', async () => {
    const started = performance.now();
    const response = await query('SELECT count(*) FROM countries a, countries b, countries c, countries d, countries e');
    expect(response.status).toBe(504);
    expect(QueryErrorSchema.parse(await response.json()).code).toBe('query_timeout');
    expect(performance.now() - started).toBeLessThan(DEADLINE + 1000);
    await expectNormalQueryWorks();
  });

  it('a cross join too large to hold stops at the memory limit with 422', async () => {
    // A deadline that a busy machine cannot reach first: the memory limit must be what stops it.
    const roomy = queryServer({ queryTimeoutMs: 60_000, queryWorkers: 1, querySpareWorkers: 0, queryMemoryMb: 256 });
    const sql = 'SELECT count(*) FROM cities a, cities b, cities c, cities d, cities e WHERE a.population + b.population + c.population + d.population + e.population = 7';
    const response = await post(roomy, '/api/queries', { sources: [sourceRef(roomy, 'countries', 'natural-earth', 'countries', 'countries-110m'), sourceRef(roomy, 'cities', 'geonames', 'cities', 'cities-1000')], sql });
    await roomy.close();
    expect(response.status).toBe(422);
    expect(QueryErrorSchema.parse(await response.json()).code).toBe('query_out_of_memory');
    await expectNormalQueryWorks();
  });

  it('20 heavy queries at once answer 200, 503 or 504, memory stays bounded, and nothing crashes', async () => {
    const heavy = [
      'SELECT count(*) FROM cities a, cities b, cities c',
      'SELECT a.name, count(*) FROM cities a JOIN cities b ON a.country = b.country GROUP BY a.name ORDER BY 2 DESC',
      "SELECT string_agg(name || alt_country || country, ',') FROM cities a, cities b WHERE a.population > 1000000",
      'SELECT list(name) FROM cities a, cities b',
    ];
    const before = process.memoryUsage().rss;
    const responses = await Promise.all(Array.from({ length: 20 }, (_, index) => query(heavy[index % heavy.length]!)));
    const statuses = responses.map((response) => response.status);
    for (const status of statuses) expect([200, 422, 503, 504]).toContain(status);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(0);
    for (const response of responses) expectNoLeak(await response.text(), '');
    expect(process.memoryUsage().rss - before).toBeLessThan(300 * 1024 * 1024);
    await expectNormalQueryWorks();
  });
});
