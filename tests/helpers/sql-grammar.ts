import fc from 'fast-check';
import { ALLOWED_FUNCTIONS } from '../../query/sql-allowlist.ts';
import { DOMAIN_TEXTS, hostileText, sometimes } from './fuzz-values.ts';
import type { HarvestedSource } from './fuzz-routes.ts';

/**
 * SQL from a small grammar: SELECT lists, WHERE, GROUP BY, ORDER BY, LIMIT, CTEs, joins between the declared
 * aliases, set operations, VALUES and unnest, with functions taken from the query allowlist and literals of many
 * types; and forbidden constructs (file readers, statements other than SELECT, recursive CTEs, denied functions,
 * several statements, comments that hide a statement, qualified names, parameters, homoglyphs) placed alone or
 * inside an allowed query. A query body says which it holds, so a property can demand that a forbidden one is
 * refused before it runs.
 */

/** A table a query may read: the alias of a source and its columns. */
export interface SqlTable {
  alias: string;
  columns: { name: string; type: string }[];
}

/** A body of `POST /api/queries` and, when its SQL holds a forbidden construct, which one. */
export interface QueryBodyCase {
  body: Record<string, unknown>;
  forbidden?: string;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
const text = (value: string) => `'${value.replaceAll("'", "''")}'`;
/** Calls only functions the allowlist holds, so the grammar follows the allowlist when it changes. */
const allowed = (names: string[]) => names.filter((name) => ALLOWED_FUNCTIONS.has(name));

const NUMERIC = /^(integer|number|bigint|double|float|decimal|smallint|tinyint|hugeint)/i;
const columnsOf = (table: SqlTable, test: (type: string) => boolean) => table.columns.filter((column) => test(column.type));

/** Literals of many types: huge and negative numbers, escapes, unicode, NULL, dates, intervals, lists, structs. */
export const LITERAL = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom('99999999999999999999', '-9223372036854775808', '1e308', '-0.0', '0.1', 'NULL', 'TRUE', 'FALSE', "DATE '2024-02-29'",
    "TIMESTAMP '2026-01-01 00:00:00'", 'INTERVAL 1 DAY', '[1, 2, 3]', "{'a': 1, 'b': 'x'}", "'abc'::VARCHAR", "'\\x00'::BLOB", "'NaN'::DOUBLE", 'current_date'),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map(text),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => `${value}`),
);

function numericExpression(column: string): fc.Arbitrary<string> {
  const unary = allowed(['abs', 'ceil', 'floor', 'sign', 'sqrt', 'ln', 'round', 'even', 'degrees']);
  return fc.oneof(
    fc.constant(column),
    fc.constantFrom(...unary).map((name) => (name === 'sqrt' || name === 'ln' ? `${name}(abs(${column}) + 1)` : `${name}(${column})`)),
    fc.tuple(fc.constantFrom('+', '-', '*', '/', '%', '//'), fc.integer({ min: -1000, max: 1000 })).map(([operator, value]) => `(${column} ${operator} ${value})`),
    fc.constant(`CAST(${column} AS VARCHAR)`),
    fc.constant(`COALESCE(${column}, 0)`),
    fc.integer({ min: -5, max: 1e6 }).map((value) => `CASE WHEN ${column} > ${value} THEN 'big' ELSE 'small' END`),
  );
}

function textExpression(column: string): fc.Arbitrary<string> {
  const unary = allowed(['lower', 'upper', 'length', 'trim', 'md5', 'reverse', 'strip_accents', 'ascii', 'hash', 'nfc_normalize', 'to_base64']);
  const withPattern = allowed(['starts_with', 'contains', 'ends_with', 'regexp_matches', 'levenshtein', 'jaccard']);
  return fc.oneof(
    fc.constant(column),
    fc.constantFrom(...unary).map((name) => `${name}(${column})`),
    fc.tuple(fc.constantFrom(...withPattern), fc.string({ maxLength: 6 })).map(([name, pattern]) => `${name}(${column}, ${text(pattern)})`),
    fc.integer({ min: -3, max: 50 }).map((count) => `left(${column}, ${count})`),
    fc.string({ maxLength: 5 }).map((pattern) => `${column} LIKE ${text(`%${pattern}%`)}`),
    fc.constant(`concat(${column}, '-', ${column})`),
  );
}

function geometryExpression(column: string, other: string): fc.Arbitrary<string> {
  const unary = allowed(['st_astext', 'st_asbinary', 'st_aswkb', 'st_aswkt']);
  return fc.oneof(
    fc.constant(column),
    fc.constantFrom(...unary).map((name) => `${name}(${column})`),
    fc.constant(`st_geomfromwkb(st_asbinary(${column}))`),
    fc.constant(`st_intersects_extent(${column}, ${other})`),
  );
}

/** An expression over one table's columns, typed by the column, or a literal. */
function expression(table: SqlTable, prefix: string): fc.Arbitrary<string> {
  const choices: fc.Arbitrary<string>[] = [LITERAL];
  const name = (column: { name: string }) => `${prefix}${quote(column.name)}`;
  const numbers = columnsOf(table, (type) => NUMERIC.test(type));
  const strings = columnsOf(table, (type) => /^(string|varchar|text)/i.test(type));
  const geometries = columnsOf(table, (type) => /^geometry/i.test(type));
  if (numbers.length) choices.push(fc.constantFrom(...numbers).chain((column) => numericExpression(name(column))));
  if (strings.length) choices.push(fc.constantFrom(...strings).chain((column) => textExpression(name(column))));
  if (geometries.length) choices.push(fc.constantFrom(...geometries).chain((column) => geometryExpression(name(column), name(geometries[0]!))));
  if (table.columns.length) choices.push(fc.constantFrom(...table.columns).map(name));
  return fc.oneof(...choices);
}

function condition(table: SqlTable, prefix: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.tuple(expression(table, prefix), fc.constantFrom('=', '<>', '<', '>=', 'IS NOT DISTINCT FROM'), LITERAL).map(([left, operator, right]) => `${left} ${operator} ${right}`),
    expression(table, prefix).map((value) => `${value} IS NOT NULL`),
    fc.constant('TRUE'),
    fc.tuple(expression(table, prefix), fc.array(LITERAL, { minLength: 1, maxLength: 4 })).map(([value, list]) => `${value} IN (${list.join(', ')})`),
  );
}

const AGGREGATES = allowed(['count', 'sum', 'avg', 'min', 'max', 'approx_count_distinct', 'median', 'any_value', 'string_agg']);

/** One SELECT over one table: a plain listing, an aggregate by group, or a window. */
function select(table: SqlTable, from: string): fc.Arbitrary<string> {
  const items = fc.array(expression(table, ''), { minLength: 1, maxLength: 4 }).map((list) => list.map((item, index) => `${item} AS c${index}`).join(', '));
  const limit = fc.option(fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.constant(2 ** 40)).map((count) => ` LIMIT ${count}`), { nil: '' });
  const where = fc.option(condition(table, '').map((test) => ` WHERE ${test}`), { nil: '' });
  const plain = fc.tuple(fc.constantFrom('', 'DISTINCT '), fc.oneof(items, fc.constant('*')), where, fc.option(fc.constantFrom(' ORDER BY 1', ' ORDER BY 1 DESC NULLS LAST'), { nil: '' }), limit)
    .map(([distinct, list, test, order, cut]) => `SELECT ${distinct}${list} FROM ${from}${test}${order}${cut}`);
  const grouped = fc.tuple(expression(table, ''), fc.constantFrom(...AGGREGATES), fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined }), limit)
    .map(([key, aggregate, having, cut]) => {
      const measure = aggregate === 'count' ? 'count(*)' : aggregate === 'string_agg' ? `string_agg(CAST(${key} AS VARCHAR), ',')` : `${aggregate}(${key})`;
      return `SELECT ${key} AS k, ${measure} AS m FROM ${from} GROUP BY 1${having === undefined ? '' : ` HAVING count(*) > ${having}`} ORDER BY 2 DESC${cut}`;
    });
  const windowed = fc.tuple(expression(table, ''), fc.constantFrom(...allowed(['row_number', 'rank', 'dense_rank', 'percent_rank'])))
    .map(([key, name]) => `SELECT ${key} AS k, ${name}() OVER (ORDER BY ${key}) AS r FROM ${from} LIMIT 50`);
  return fc.oneof({ weight: 4, arbitrary: plain }, { weight: 2, arbitrary: grouped }, { weight: 1, arbitrary: windowed });
}

/** An allowed query over the tables: SELECTs, CTEs, equality joins, subqueries, unions, VALUES, unnest, FROM-first. */
export function allowedQuery(tables: readonly SqlTable[]): fc.Arbitrary<string> {
  const table = fc.constantFrom(...tables);
  const single = table.chain((chosen) => select(chosen, chosen.alias));
  const cte = table.chain((chosen) => select(chosen, chosen.alias).map((inner) => `WITH c AS (${inner}) SELECT * FROM c LIMIT 20`));
  const subquery = table.chain((chosen) => select(chosen, chosen.alias).map((inner) => `SELECT count(*) AS n FROM (${inner}) AS s`));
  const join = fc.tuple(table, table).chain(([left, right]) => {
    const shared = left.columns.filter((column) => right.columns.some((other) => other.name === column.name && other.type === column.type && !/geometry|struct/i.test(column.type)));
    if (shared.length === 0) return fc.constant(`SELECT count(*) AS n FROM ${left.alias}`);
    // Each side is cut to 1,000 rows first, so a join on a column with few values stays small.
    return fc.constantFrom(...shared).map((column) =>
      `SELECT a.${quote(column.name)} AS k, count(*) AS n FROM (SELECT * FROM ${left.alias} LIMIT 1000) AS a JOIN (SELECT * FROM ${right.alias} LIMIT 1000) AS b ON a.${quote(column.name)} = b.${quote(column.name)} GROUP BY 1 ORDER BY 2 DESC LIMIT 10`);
  });
  const union = fc.tuple(table, table).map(([left, right]) => `SELECT CAST(count(*) AS VARCHAR) AS v FROM ${left.alias} UNION ALL SELECT 'x' FROM ${right.alias} LIMIT 5`);
  const exists = fc.tuple(table, table).map(([left, right]) => `SELECT count(*) AS n FROM ${left.alias} WHERE EXISTS (SELECT 1 FROM ${right.alias} LIMIT 1)`);
  const literalOnly = fc.oneof(
    fc.array(LITERAL, { minLength: 1, maxLength: 5 }).map((values) => `SELECT ${values.map((value, index) => `${value} AS v${index}`).join(', ')}`),
    fc.array(fc.integer({ min: -100, max: 100 }), { minLength: 1, maxLength: 10 }).map((values) => `SELECT unnest([${values.join(', ')}]) AS x`),
    fc.constant("SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(x, y)"),
    fc.constant('SELECT x FROM unnest([1, 2, 3]) AS u(x)'),
  );
  const fromFirst = table.map((chosen) => `FROM ${chosen.alias} SELECT * LIMIT 3`);
  return fc.oneof(
    { weight: 6, arbitrary: single }, { weight: 2, arbitrary: cte }, { weight: 2, arbitrary: subquery }, { weight: 2, arbitrary: join },
    { weight: 1, arbitrary: union }, { weight: 1, arbitrary: exists }, { weight: 2, arbitrary: literalOnly }, { weight: 1, arbitrary: fromFirst },
  );
}

const HOSTILE_PATHS = ['/etc/passwd', '/proc/self/environ', '../../etc/passwd', 'catalog-data/data/geonames/cities/cities-15000.parquet', '/tmp', '*', 'http://169.254.169.254/latest/meta-data'];

/** Whole statements other than one SELECT. */
const FORBIDDEN_STATEMENTS = [
  "COPY (SELECT 1) TO '/tmp/geoshelf-fuzz.csv'", "COPY t TO '/tmp/geoshelf-fuzz.parquet' (FORMAT parquet)", "ATTACH '/tmp/geoshelf-fuzz.db' AS x",
  'DETACH x', 'PRAGMA database_list', 'PRAGMA version', "SET memory_limit = '1TB'", 'SET enable_external_access = true', 'RESET allowed_paths',
  'INSTALL spatial', 'LOAD spatial', 'CALL enable_logging()', "EXPORT DATABASE '/tmp/geoshelf-fuzz'", "IMPORT DATABASE '/tmp'", 'CREATE TABLE x AS SELECT 1',
  'CREATE MACRO m(x) AS x', 'INSERT INTO t VALUES (1)', 'UPDATE t SET a = 1', 'DELETE FROM t', 'DROP TABLE t', 'ALTER TABLE t RENAME TO u',
  'EXPLAIN ANALYZE SELECT 1', 'EXPLAIN SELECT 1', 'DESCRIBE t', 'SHOW TABLES', 'SUMMARIZE t', 'USE memory', 'CHECKPOINT', 'VACUUM', 'BEGIN TRANSACTION',
  "CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')", 'PREPARE p AS SELECT 1', 'EXECUTE p',
];

/** Table expressions in FROM that read files, settings or the catalog, or that build huge tables. */
const FORBIDDEN_TABLES = [
  ...HOSTILE_PATHS.flatMap((path) => [`read_parquet(${text(path)})`, `read_csv(${text(path)})`, `read_text(${text(path)})`, text(path)]),
  "read_csv_auto('/etc/passwd')", "read_json_auto('/etc/passwd')", "read_blob('/etc/passwd')", "glob('/*')", "parquet_metadata('/etc/passwd')",
  "sniff_csv('/etc/passwd')", 'range(1000000000)', 'generate_series(1, 1000000000)', 'duckdb_settings()', 'duckdb_views()', 'duckdb_tables()',
  'pragma_database_list()', "query('SELECT 1')", "query_table('t')", 'main.t', 'memory.main.t', 'system.main.duckdb_settings()', 'test_all_types()',
  '"read_parquet"(\'/etc/passwd\')', "READ_PARQUET('/etc/passwd')", "rеad_parquet('/etc/passwd')",
];

/** Expressions that call denied functions, directly, in lambdas, by aggregate name, qualified or disguised. */
const FORBIDDEN_EXPRESSIONS = [
  'range(1000000000)', 'generate_series(1, 1000000000)', "repeat('a', 1000000000)", "lpad('a', 1000000000, 'b')", "rpad('a', 1000000000, 'b')",
  'list_resize([1], 1000000000)', 'array_resize([1], 1000000000)', 'sleep_ms(60000)', 'pg_sleep(60)', "current_setting('allowed_paths')",
  "getvariable('x')", 'enable_logging()', "write_log('x')", 'version()', 'current_query()', 'current_database()', "json_serialize_sql('SELECT 1')",
  "printf('%1000000000d', 1)", "format('{:>1000000000}', 1)", 'setseed(0.5)', "nextval('s')", "error('boom')", 'list_reduce([1, 2], (a, b) -> a + b)',
  "list_transform([1], x -> repeat('a', 1000000000))", "list_aggregate([1], 'repeat')", "list_aggregate([1], 'read_parquet')", 'main.abs(1)',
  'pg_catalog.abs(1)', '$1', '?', '$name', '"sleep_ms"(60000)', 'SLEEP_MS(60000)', "rеpeat('a', 1000000000)", 'ѕleep_ms(60000)', 'bitstring(\'1\', 1000000000)',
  "equi_width_bins(0, 1, 1000000000, false)", "(SELECT current_setting('allowed_paths'))", "(SELECT count(*) FROM read_parquet('/etc/passwd'))",
];

/** A SELECT made of an allowed skeleton with a forbidden part in it, or a forbidden statement on its own or hidden. */
export function forbiddenQuery(tables: readonly SqlTable[]): fc.Arbitrary<{ sql: string; construct: string }> {
  const allowedSql = allowedQuery(tables);
  const alias = fc.constantFrom(...tables.map((table) => table.alias));
  const named = (construct: string) => (sql: string) => ({ sql, construct });
  const statement = fc.constantFrom(...FORBIDDEN_STATEMENTS);
  const table = fc.constantFrom(...FORBIDDEN_TABLES);
  const call = fc.constantFrom(...FORBIDDEN_EXPRESSIONS);
  return fc.oneof(
    statement.map(named('statement')),
    fc.tuple(table, fc.constantFrom('SELECT * FROM %', 'WITH c AS (SELECT * FROM %) SELECT 1 AS one FROM c', 'SELECT * FROM (SELECT * FROM %) AS s', 'SELECT 1 AS one WHERE EXISTS (SELECT 1 FROM %)'))
      .map(([source, shape]) => ({ sql: shape.replace('%', source), construct: `table ${source}` })),
    fc.tuple(alias, table).map(([name, source]) => ({ sql: `SELECT * FROM ${name} JOIN ${source} AS f ON TRUE LIMIT 1`, construct: `joined ${source}` })),
    fc.tuple(call, alias, fc.constantFrom('SELECT % AS x FROM @', 'SELECT * FROM @ WHERE % IS NOT NULL', 'SELECT * FROM @ ORDER BY % LIMIT 1', 'WITH c AS (SELECT % AS x) SELECT * FROM c', 'SELECT count(*) FROM @ GROUP BY ALL HAVING % IS NULL'))
      .map(([expression, name, shape]) => ({ sql: shape.replace('%', expression).replace('@', name), construct: `call ${expression}` })),
    fc.constantFrom(
      'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000000000) SELECT count(*) FROM r',
      'WITH RECURSIVE r(n) USING KEY (n) AS (SELECT 1 UNION SELECT n + 1 FROM r) SELECT * FROM r',
      'WITH RECURSIVE r AS (SELECT 1 AS n) SELECT * FROM r',
    ).map(named('recursive CTE')),
    fc.tuple(allowedSql, fc.oneof(allowedSql, statement), fc.constantFrom('; ', ';\n', ' /* ; */ ; ', ' -- x\n; ', ';/**/')).map(([first, second, glue]) => ({ sql: `${first}${glue}${second}`, construct: 'several statements' })),
    fc.tuple(statement, fc.constantFrom('/* SELECT 1 */ %', '-- SELECT 1\n%', '/* /* */ % */', '%; -- SELECT 1', '\ufeff%')).map(([hidden, shape]) => ({ sql: shape.replace('%', hidden), construct: 'hidden statement' })),
    fc.constantFrom('ＳＥＬＥＣＴ 1', 'SEL\u200bECT 1', 'SELECT 1 FROM t\u037e DROP TABLE t', 'ꜱELECT 1').map(named('homoglyph')),
  );
}

const ALIASES = ['t', 'a', 'b', 'src', 'T', '_x', 'select', 'x'.repeat(63)];

/**
 * Bodies of `POST /api/queries`: one to three harvested sources under aliases (sometimes with wrong or repeated
 * ids or aliases), an allowed or forbidden SQL over those aliases, and limit, geometry_column and result_crs
 * valid or hostile.
 */
export function queryBody(sources: readonly HarvestedSource[]): fc.Arbitrary<QueryBodyCase> {
  const source = fc.constantFrom(...sources);
  const reference = fc.tuple(source, sometimes(fc.constantFrom('collection_id', 'dataset_id', 'file_id', 'file_source_id'), 1 / 10), fc.oneof(fc.integer({ min: 1, max: 60 }), fc.constant(2 ** 53 - 1)))
    .map(([chosen, wrong, value]) => {
      const { columns: _columns, ...ids } = chosen;
      return wrong ? { ...ids, [wrong]: value } : ids;
    });
  const references = fc.oneof({ weight: 7, arbitrary: fc.tuple(reference) }, { weight: 2, arbitrary: fc.tuple(reference, reference) }, { weight: 1, arbitrary: fc.tuple(reference, reference, reference) });
  return fc.tuple(references, fc.shuffledSubarray(ALIASES, { minLength: 3, maxLength: 3 }), sometimes(fc.constant(true), 0.1, false)).chain(([references, aliases, repeatAlias]) => {
    const named = references.map((reference, index) => ({ alias: repeatAlias && index > 0 ? aliases[0]! : aliases[index]!, ...reference }));
    const tables = named.map(({ alias, file_source_id }) => ({ alias, columns: sources.find((candidate) => candidate.file_source_id === file_source_id)?.columns ?? [] }));
    const geometry = tables.flatMap((table) => columnsOf(table, (type) => /^geometry/i.test(type)).map((column) => column.name));
    const sql = fc.oneof(
      { weight: 3, arbitrary: allowedQuery(tables).map((query) => ({ sql: query, forbidden: undefined as string | undefined })) },
      { weight: 2, arbitrary: forbiddenQuery(tables).map(({ sql: query, construct }) => ({ sql: query, forbidden: construct })) },
    );
    return fc.record({
      sql,
      limit: sometimes(fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: 1000 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 1001, -1, 1.5, '10', null) }), 0.7),
      geometry_column: sometimes(fc.oneof({ weight: 3, arbitrary: fc.constantFrom('geometry', ...geometry) }, { weight: 1, arbitrary: hostileText() }), 1 / 5),
      result_crs: sometimes(DOMAIN_TEXTS.result_crs!, 1 / 4),
      extra: sometimes(fc.constantFrom('__proto__', 'query', 'params'), 1 / 20),
    }).map(({ sql: { sql: query, forbidden }, limit, geometry_column, result_crs, extra }) => {
      const body: Record<string, unknown> = { sources: named, sql: query };
      if (limit !== undefined) body.limit = limit;
      if (geometry_column !== undefined) body.geometry_column = geometry_column;
      if (result_crs !== undefined) body.result_crs = result_crs;
      if (extra !== undefined) Object.defineProperty(body, extra, { value: 1, enumerable: true });
      return { body, ...(forbidden ? { forbidden } : {}) };
    });
  });
}
