import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALLOWED_AGGREGATES, ALLOWED_FUNCTIONS, SQL_VALUE_FUNCTIONS } from '../query/sql-allowlist.ts';
import { SqlParser, type SqlCheck } from '../query/validate-sql.ts';

const ALIASES = ['countries', 'cities'];
let parser: SqlParser;

beforeAll(async () => {
  parser = await SqlParser.create();
});
afterAll(() => parser.close());

/** Every string literal of the SQL, which a message must never repeat. */
function literalsOf(sql: string): string[] {
  return [...sql.matchAll(/'([^']{3,})'/g)].map((match) => match[1]!);
}

function expectRefusal(check: SqlCheck, code: string, sql: string, secrets: string[] = []) {
  expect(check).toMatchObject({ ok: false, code });
  if (check.ok) return;
  if (sql.trim()) expect(check.message).not.toContain(sql.trim());
  for (const secret of [...literalsOf(sql), ...secrets]) expect(check.message).not.toContain(secret);
}

describe('accepted queries', () => {
  it.each([
    ['a simple select', 'SELECT name, pop_est FROM countries', ['countries']],
    ['a FROM-first select', 'FROM countries', ['countries']],
    ['a join of two aliases', 'SELECT c.name, t.name FROM countries c JOIN cities t ON t.country = c.name', ['countries', 'cities']],
    ['a CTE that reads an alias', 'WITH big AS (SELECT * FROM countries WHERE pop_est > 1e6) SELECT name FROM big', ['countries']],
    ['a CTE that reads an earlier CTE', 'WITH a AS (FROM cities), b AS (FROM a) SELECT * FROM b', ['cities']],
    ['a CTE named like the alias it reads', 'WITH countries AS (SELECT * FROM countries WHERE continent = \'Asia\') SELECT * FROM countries', ['countries']],
    ['a subquery in WHERE', 'SELECT name FROM countries WHERE name IN (SELECT country FROM cities)', ['countries', 'cities']],
    ['a subquery in FROM', 'SELECT n FROM (SELECT count(*) AS n FROM cities) AS s', ['cities']],
    ['aggregates with GROUP BY and HAVING', 'SELECT continent, count(*), avg(pop_est), max(name) FROM countries GROUP BY continent HAVING count(*) > 2', ['countries']],
    ['window functions', 'SELECT name, row_number() OVER (PARTITION BY continent ORDER BY pop_est DESC), lag(name) OVER w FROM countries WINDOW w AS (ORDER BY name)', ['countries']],
    ['ORDER BY, LIMIT and OFFSET', 'SELECT name FROM cities ORDER BY name DESC LIMIT 10 OFFSET 20', ['cities']],
    ['CASE and CAST', "SELECT CASE WHEN pop_est > 1e8 THEN 'big' ELSE 'small' END, CAST(pop_est AS BIGINT), pop_est::VARCHAR, TRY_CAST(name AS INT) FROM countries", ['countries']],
    ['string functions', "SELECT lower(name), upper(name), concat(name, '!'), substr(name, 1, 3), length(name), trim(name), replace(name, 'a', 'b'), name || '?' FROM countries", ['countries']],
    ['date functions', "SELECT current_date, now(), date_trunc('month', DATE '2024-05-06'), extract(year FROM DATE '2024-05-06'), strftime(TIMESTAMP '2024-01-01', '%Y'), DATE '2024-01-01' + INTERVAL 3 DAY FROM cities", ['cities']],
    ['core geometry functions', 'SELECT st_astext(geometry), st_asbinary(geometry), st_crs(geometry) FROM countries', ['countries']],
    ['SELECT * EXCLUDE', 'SELECT * EXCLUDE (bbox) FROM countries', ['countries']],
    ['COLUMNS with a pattern', "SELECT COLUMNS('pop_.*') FROM countries", ['countries']],
    ['UNION ALL of two selects', 'SELECT name FROM countries UNION ALL SELECT name FROM cities', ['countries', 'cities']],
    ['ILIKE in WHERE', "SELECT name FROM countries WHERE name ILIKE 'a%'", ['countries']],
    ['operators', "SELECT 1 + 2 - 3 * 4 / 5 // 6 % 7, 2 ** 3, -pop_est, name LIKE 'a%', name NOT LIKE 'b%', name SIMILAR TO 'x.*', pop_est BETWEEN 1 AND 2, pop_est IN (1, 2), name IS NULL, name IS NOT NULL, NOT (true AND false OR true), pop_est <> 3, coalesce(name, ''), [1, 2][1], {'a': 1}.a FROM countries", ['countries']],
    ['lists, lambdas and unnest', 'SELECT list_transform([1, 2], x -> x + 1), list_filter([1, 2], x -> x > 1), list_sum([1, 2]), unnest([1, 2]) FROM countries', ['countries']],
    ['unnest in FROM', 'SELECT * FROM countries, unnest([1, 2]) AS u(x)', ['countries']],
    ['list_aggregate naming an allowed aggregate', "SELECT list_aggregate([1, 2], 'sum') FROM countries", ['countries']],
    ['a table written in another case', 'SELECT * FROM COUNTRIES JOIN "Cities" USING (name)', ['countries', 'cities']],
    ['VALUES', 'VALUES (1, 2), (3, 4)', []],
    ['a trailing semicolon', 'SELECT name FROM countries;', ['countries']],
  ])('accepts %s', async (_name, sql, tablesUsed) => {
    expect(await parser.check(sql, ALIASES)).toEqual({ ok: true, orderedAtTop: expect.any(Boolean), tablesUsed });
  });

  it.each([
    ['SELECT name FROM countries ORDER BY name', true],
    ['SELECT name FROM countries UNION ALL SELECT name FROM cities ORDER BY 1', true],
    ['WITH s AS (SELECT * FROM countries ORDER BY name) SELECT * FROM s ORDER BY pop_est LIMIT 5', true],
    ['SELECT name FROM countries', false],
    ['SELECT * FROM (SELECT name FROM countries ORDER BY name)', false],
    ['SELECT name, row_number() OVER (ORDER BY name) FROM countries', false],
    ['SELECT name FROM countries LIMIT 5', false],
  ])('reports whether the outermost query is ordered: %s', async (sql, orderedAtTop) => {
    expect(await parser.check(sql, ALIASES)).toMatchObject({ ok: true, orderedAtTop });
  });

  it('lists the aliases as the request declared them', async () => {
    expect(await parser.check('SELECT * FROM countries, CITIES', ['Cities', 'Countries', 'rivers'])).toMatchObject({ tablesUsed: ['Cities', 'Countries'] });
  });

  it('accepts a query that would only fail when run, because nothing is executed', async () => {
    expect(await parser.check("SELECT CAST('x' AS INTEGER), no_such_column FROM countries", ALIASES)).toMatchObject({ ok: true });
  });
});

describe('refused queries', () => {
  it.each([
    ["SELECT * FROM read_csv('/etc/passwd')", 'sql_table_function_not_allowed'],
    ["SELECT * FROM read_text('x')", 'sql_table_function_not_allowed'],
    ["SELECT * FROM glob('/*')", 'sql_table_function_not_allowed'],
    ["SELECT * FROM countries JOIN read_parquet('/data/secret.parquet') AS s ON true", 'sql_table_function_not_allowed'],
    ['SELECT * FROM duckdb_views()', 'sql_table_function_not_allowed'],
    ['SELECT * FROM generate_series(1, 1000000000)', 'sql_table_function_not_allowed'],
    ['SELECT * FROM range(10)', 'sql_table_function_not_allowed'],
    ["SELECT * FROM query('SELECT 1')", 'sql_table_function_not_allowed'],
    ["SELECT * FROM '/etc/passwd'", 'sql_file_not_allowed'],
    ["FROM 'data.parquet'", 'sql_file_not_allowed'],
    ['SELECT * FROM "/etc/passwd"', 'sql_file_not_allowed'],
    ['SELECT * FROM $$/etc/passwd$$', 'sql_file_not_allowed'],
    ["COPY (SELECT * FROM countries) TO '/tmp/out.csv'", 'sql_not_select'],
    ["ATTACH 'x.db'", 'sql_not_select'],
    ["ATTACH ':memory:' AS m", 'sql_not_select'],
    ['INSTALL spatial', 'sql_not_select'],
    ['LOAD spatial', 'sql_not_select'],
    ["SET memory_limit='1GB'", 'sql_not_select'],
    ['RESET memory_limit', 'sql_not_select'],
    ['RESET ALL', 'sql_syntax_error'],
    ['PRAGMA version', 'sql_not_select'],
    ['CALL enable_logging()', 'sql_not_select'],
    ['EXPLAIN SELECT 1', 'sql_not_select'],
    ['EXPLAIN ANALYZE SELECT * FROM countries', 'sql_not_select'],
    ["EXPORT DATABASE '/tmp/x'", 'sql_not_select'],
    ['CREATE TABLE t AS SELECT 1', 'sql_not_select'],
    ['DESCRIBE countries', 'sql_not_select'],
    ['SUMMARIZE countries', 'sql_not_select'],
    ['SHOW TABLES', 'sql_not_select'],
    ['SELECT enable_logging()', 'sql_function_not_allowed'],
    ["SELECT current_setting('allowed_paths')", 'sql_function_not_allowed'],
    ["SELECT getvariable('x')", 'sql_function_not_allowed'],
    ["SELECT repeat('x', 1000000000)", 'sql_function_not_allowed'],
    ["SELECT lpad('x', 1000000000, 'y')", 'sql_function_not_allowed'],
    ['SELECT sleep_ms(1000)', 'sql_function_not_allowed'],
    ['SELECT pg_sleep(1)', 'sql_function_not_allowed'],
    ['SELECT name FROM countries WHERE length(version()) > 0', 'sql_function_not_allowed'],
    ["SELECT list_transform([1], x -> repeat('y', 1000000000))", 'sql_function_not_allowed'],
    ["SELECT count(*) FILTER (WHERE current_setting('threads') = '1') FROM countries", 'sql_function_not_allowed'],
    ["SELECT list_aggregate([1], 'reservoir_quantile', 0.5, 1000000000)", 'sql_function_not_allowed'],
    ['SELECT list_aggregate([1], name) FROM countries', 'sql_function_not_allowed'],
    ['SELECT current_schema', 'sql_function_not_allowed'],
    ['SELECT 1; SELECT 2', 'sql_multiple_statements'],
    ["SELECT 1; SET memory_limit = '1GB'", 'sql_multiple_statements'],
    ['WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT * FROM t', 'sql_recursive_cte'],
    ['WITH RECURSIVE t(n) USING KEY (n) AS (SELECT 1 UNION SELECT n + 1 FROM t) SELECT * FROM t', 'sql_recursive_cte'],
    ['WITH RECURSIVE t AS (SELECT 1) SELECT * FROM t', 'sql_recursive_cte'],
    ['SELECT * FROM unknown_table', 'sql_unknown_table'],
    ['SELECT * FROM sqlite_master', 'sql_unknown_table'],
    ['SELECT * FROM pg_settings', 'sql_unknown_table'],
    ['SELECT * FROM duckdb_tables', 'sql_unknown_table'],
    ['WITH b AS (SELECT * FROM a), a AS (SELECT 1) SELECT * FROM b', 'sql_unknown_table'],
    ['SELECT * FROM (WITH s AS (SELECT 1) SELECT * FROM s), s', 'sql_unknown_table'],
    ['SELECT * FROM main.countries', 'sql_qualified_name'],
    ['SELECT * FROM system.main.duckdb_settings', 'sql_qualified_name'],
    ['SELECT * FROM information_schema.tables', 'sql_qualified_name'],
    ['SELECT main.lower(name) FROM countries', 'sql_qualified_name'],
    ["SELECT pg_catalog.current_setting('x')", 'sql_qualified_name'],
    ['SELECT * FROM countries WHERE name = ?', 'sql_parameter_not_allowed'],
    ['SELECT $name', 'sql_parameter_not_allowed'],
    ['SELECT * FROM countries AT (VERSION => 1)', 'sql_unsupported_syntax'],
    ['SELEC name FROM countries', 'sql_syntax_error'],
    ['', 'sql_empty'],
    ['  -- only a comment', 'sql_empty'],
  ])('refuses %s', async (sql, code) => {
    expectRefusal(await parser.check(sql, ALIASES), code, sql, ['passwd', 'allowed_paths', 'memory_limit', '1GB']);
  });

  it.each([
    ['a 50,000-term expression', `SELECT ${Array(50_000).fill('1').join(' + ')}`],
    ['an expression deeper than DuckDB parses', `SELECT ${Array(1_000).fill('1').join('+')}`],
    ['an expression deeper than the depth cap', `SELECT ${Array(300).fill('1').join('+')}`],
    ['a list with more nodes than the cap', `SELECT [${Array(25_000).fill('1').join(',')}]`],
  ])('refuses %s as too complex', async (_name, sql) => {
    expectRefusal(await parser.check(sql, ALIASES), 'sql_too_complex', sql);
  });

  it('names a refused function that is a plain identifier', async () => {
    expect(await parser.check("SELECT repeat('x', 3)", ALIASES)).toMatchObject({ message: expect.stringContaining('"repeat"') });
  });

  it('gives the character offset of a syntax error without quoting the SQL', async () => {
    const sql = "SELECT 'é😀', name FROM countries WHERE";
    const check = await parser.check(sql, ALIASES);
    expect(check).toMatchObject({ ok: false, code: 'sql_syntax_error', position: sql.length });
    expect(check.ok || check.message).not.toMatch(/WHERE|countries/);
  });

  it('refuses a NUL character', async () => {
    expect(await parser.check('SELECT 1\0; DROP TABLE x', ALIASES)).toMatchObject({ ok: false, code: 'sql_syntax_error' });
  });
});

describe('the parser', () => {
  it('answers concurrent checks as it answers them one by one', async () => {
    const queries = ['SELECT * FROM countries', 'SELECT * FROM nowhere', "SELECT repeat('a', 2)", 'SELECT 1; SELECT 2', 'FROM cities ORDER BY 1'];
    const alone: SqlCheck[] = [];
    for (const sql of queries) alone.push(await parser.check(sql, ALIASES));
    const together = await Promise.all(Array.from({ length: 50 }, (_, i) => parser.check(queries[i % queries.length]!, ALIASES)));
    expect(together).toEqual(Array.from({ length: 50 }, (_, i) => alone[i % queries.length]));
  });

  it('refuses to check once closed', async () => {
    const closed = await SqlParser.create();
    closed.close();
    await expect(closed.check('SELECT 1', ALIASES)).rejects.toThrow(/closed/);
  });
});

describe('the function allowlist', () => {
  it('names only functions this DuckDB has', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const rows = (await connection.runAndReadAll("SELECT DISTINCT lower(function_name) FROM duckdb_functions() WHERE schema_name = 'main'")).getRows();
    connection.closeSync();
    instance.closeSync();
    const known = new Set(rows.map((row) => String(row[0])));
    expect([...ALLOWED_FUNCTIONS].filter((name) => !known.has(name) && !SQL_VALUE_FUNCTIONS.has(name))).toEqual([]);
  });

  it.each([
    'read_csv', 'read_csv_auto', 'read_parquet', 'read_json', 'read_text', 'read_blob', 'glob', 'current_setting', 'getvariable',
    'range', 'generate_series', 'generate_subscripts', 'repeat', 'lpad', 'rpad', 'list_resize', 'array_resize', 'sleep_ms',
    'pg_sleep', 'enable_logging', 'disable_logging', 'write_log', 'duckdb_settings', 'duckdb_logs', 'pragma_version',
    'current_database', 'current_schema', 'current_schemas', 'current_catalog', 'current_query', 'version', 'getenv',
    'printf', 'format', 'bitstring', 'bitstring_agg', 'equi_width_bins', 'reservoir_quantile', 'list_reduce', 'reduce',
    'json_serialize_sql', 'json_execute_serialized_sql', 'query', 'query_table', 'nextval', 'setseed', 'error', 'stats',
    'icu_sort_key', 'which_secret', 'checkpoint', 'from_json',
  ])('leaves out %s', (name) => {
    expect(ALLOWED_FUNCTIONS.has(name)).toBe(false);
  });

  it('lets list_aggregate name only allowed aggregates', () => {
    expect([...ALLOWED_AGGREGATES].filter((name) => !ALLOWED_FUNCTIONS.has(name))).toEqual([]);
  });
});
