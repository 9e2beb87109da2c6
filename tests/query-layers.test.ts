import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toSafeError } from '../query/engine-errors.ts';
import { QueryPool } from '../query/pool.ts';
import { runBounds } from '../query/bounds.ts';
import { runPage } from '../query/page-rows.ts';
import type { PageValue, QueryTask, SandboxSettings } from '../query/protocol.ts';
import { openSandbox } from '../query/sandbox.ts';
import { runTile } from '../query/tiles.ts';
import { stripTrailingSemicolons } from '../query/sql-source.ts';
import { ROOT } from './helpers/catalog.ts';

const DATA = join(ROOT, 'catalog-data/data');
const countries = { alias: 'countries', path: join(DATA, 'natural-earth/countries/2.0.2/countries-110m.parquet') };
const settings: SandboxSettings = { threads: 1, memoryLimitMb: 256, maxResponseBytes: 1_000_000, tileMaxFeatures: 100 };

async function failure(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a failure');
}

describe('layer 2: a sandboxed DuckDB instance', () => {
  it('reads its own sources through their views, and no other file, whatever the SQL', async () => {
    const sandbox = await openSandbox([countries], settings);
    expect((await sandbox.connection.runAndReadAll('SELECT count(*) FROM countries')).getRows()).toEqual([[177n]]);
    const other = join(DATA, 'geonames/megacities/3.1.0/megacities.parquet');
    for (const sql of [`SELECT * FROM read_parquet('${other}')`, "SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM read_text('/etc/hostname')", "COPY (SELECT 1) TO '/tmp/geoshelf-escape.csv'", "ATTACH '/tmp/geoshelf-escape.db'"]) {
      const message = await failure(() => sandbox.connection.run(sql));
      expect(message, sql).toMatch(/Permission Error|disabled/);
      expect(toSafeError(new Error(message)).message).not.toMatch(/\/etc|\/tmp|parquet/);
    }
    sandbox.close();
  });

  it('cannot be unlocked, nor load extensions', async () => {
    const sandbox = await openSandbox([countries], settings);
    for (const sql of ['SET enable_external_access = true', "SET allowed_paths = ['/']", 'SET lock_configuration = false', "SET temp_directory = '/tmp'", 'INSTALL spatial', 'LOAD spatial']) {
      expect(await failure(() => sandbox.connection.run(sql)), sql).toMatch(/locked|disabled|Permission|extension/i);
    }
    sandbox.close();
  });
});

describe('layer 2 on a kept sandbox: every later connection of the instance', () => {
  it('reads its sources and no other file, cannot unlock, and keeps nothing a connection made', async () => {
    const sandbox = await openSandbox([countries], settings);
    sandbox.connection.closeSync();
    const later = await sandbox.instance.connect();
    expect((await later.runAndReadAll('SELECT count(*) FROM countries')).getRows()).toEqual([[177n]]);
    const other = join(DATA, 'geonames/megacities/3.1.0/megacities.parquet');
    for (const sql of [`SELECT * FROM read_parquet('${other}')`, "SELECT * FROM read_text('/etc/hostname')", "COPY (SELECT 1) TO '/tmp/geoshelf-escape.csv'"]) {
      expect(await failure(() => later.run(sql)), sql).toMatch(/Permission Error|disabled/);
    }
    for (const sql of ['SET enable_external_access = true', "SET allowed_paths = ['/']", 'SET lock_configuration = false', 'SET threads = 64', "SET memory_limit = '64GB'"]) {
      expect(await failure(() => later.run(sql)), sql).toMatch(/locked/i);
    }
    // What a connection holds (a temporary table, a macro; layer 1 lets no query make them) goes with it.
    await later.run('CREATE TEMP TABLE left_behind AS SELECT 1 AS n');
    later.closeSync();
    const next = await sandbox.instance.connect();
    expect(await failure(() => next.run('SELECT * FROM left_behind'))).toMatch(/does not exist/);
    next.closeSync();
    sandbox.close();
  });
});

describe('layer 3: the worker pool', () => {
  const task = (sql: string): QueryTask => ({ kind: 'page', sql, sources: [countries], offset: 0, limit: 10, geometryColumn: undefined, resultCrs: undefined, settings });

  it('kills and replaces a worker that ignores its deadline, and answers 504', async () => {
    const pool = new QueryPool({ workers: 1, spareWorkers: 0, queue: 2, timeoutMs: 500, memoryCapMb: 8192, graceMs: 500 });
    await pool.ready();
    const started = performance.now();
    // Not allowed by layer 1; run here directly to show layer 3 stops what interrupt() cannot.
    const outcome = await pool.run(task("SELECT length(repeat('x', 900000000)) AS n"));
    expect(outcome).toMatchObject({ ok: false, error: { status: 504, code: 'query_timeout' } });
    expect(performance.now() - started).toBeLessThan(2500);
    expect(pool.restarts).toBe(1);
    await pool.ready();
    const next = await pool.run(task('SELECT count(*) AS n FROM countries'));
    expect(next.ok && JSON.parse(new TextDecoder().decode((next.value as PageValue).rowsJson))).toEqual([{ n: 177 }]);
    await pool.close();
  });

  it('kills and replaces a worker past its memory cap', async () => {
    const pool = new QueryPool({ workers: 1, spareWorkers: 0, queue: 2, timeoutMs: 20_000, memoryCapMb: 400 });
    const outcome = await pool.run({ ...task("SELECT length(repeat('x', 900000000)) AS n"), settings: { ...settings, memoryLimitMb: 4096 } });
    expect(outcome).toMatchObject({ ok: false, error: { status: 422, code: 'query_out_of_memory' } });
    expect(pool.restarts).toBe(1);
    await pool.close();
  });

  it('answers 503 with a retry time when the queue is full', async () => {
    const pool = new QueryPool({ workers: 1, spareWorkers: 0, queue: 1, timeoutMs: 3000, memoryCapMb: 4096 });
    const slow = task('SELECT sum(length(a.name || b.name || c.name || d.name)) AS n FROM countries a, countries b, countries c, countries d');
    const outcomes = await Promise.all([pool.run(slow), pool.run(slow), pool.run(slow), pool.run(slow)]);
    const busy = outcomes.filter((outcome) => !outcome.ok && outcome.error.status === 503);
    expect(busy.length).toBeGreaterThanOrEqual(2);
    for (const outcome of busy) expect(outcome).toMatchObject({ retryAfter: expect.any(Number) });
    await pool.close();
  });
});

describe('running a page', () => {
  const page = (sql: string, maxResponseBytes = 1_000_000) => ({
    kind: 'page' as const, sql, sources: [countries], offset: 0, limit: 10, geometryColumn: undefined, resultCrs: undefined, settings: { ...settings, maxResponseBytes },
  });

  it('refuses a page whose first row alone passes the response cap, rather than send an empty page that points at itself', async () => {
    const sandbox = await openSandbox([countries], settings);
    const sql = "SELECT name, repeat('x', 5000) AS padding FROM countries ORDER BY name";
    await expect(runPage(sandbox.connection, page(sql, 2000), () => false)).rejects.toMatchObject({ body: { status: 422, code: 'row_too_large' } });
    const cut = await runPage(sandbox.connection, page(sql, 12_000), () => false);
    expect(cut).toMatchObject({ truncated: true, hasMore: true });
    expect(cut.rowCount).toBe(2);
    expect(JSON.parse(new TextDecoder().decode(cut.rowsJson))).toHaveLength(2);
    sandbox.close();
  });

  it.each([
    'SELECT 1 AS n /* note; -- see */',
    'SELECT 1 AS n; -- done',
    "SELECT 1 AS n -- a ';' here\n;",
    'SELECT 1 AS n /* outer /* inner; */ still comment; */ ;',
  ])('runs %j, whose end holds comments and semicolons', async (sql) => {
    const sandbox = await openSandbox([countries], settings);
    expect(JSON.parse(new TextDecoder().decode((await runPage(sandbox.connection, page(sql), () => false)).rowsJson))).toEqual([{ n: 1 }]);
    sandbox.close();
  });
});

describe('bounds and tiles in a kept sandbox', () => {
  it('bind a result once to learn its columns, and answer as a sandbox that has not seen it', async () => {
    const sandbox = await openSandbox([countries], settings);
    const base = { sql: 'SELECT name, geometry FROM countries', sources: [countries], geometryColumn: undefined, settings };
    const fresh = await runBounds(sandbox.connection, { ...base, kind: 'bounds' }, () => false);
    const first = await runBounds(sandbox.connection, { ...base, kind: 'bounds' }, () => false, sandbox.columns);
    expect(sandbox.columns.get(base.sql)).toEqual({ names: ['name', 'geometry'], types: ['VARCHAR', 'GEOMETRY'] });
    const again = await runBounds(sandbox.connection, { ...base, kind: 'bounds' }, () => false, sandbox.columns);
    expect([first, again]).toEqual([fresh, fresh]);
    const tile = (memo?: typeof sandbox.columns) => runTile(sandbox.connection, { ...base, kind: 'tile', z: 1, x: 1, y: 0 }, () => false, memo);
    expect(await tile(sandbox.columns)).toEqual(await tile());
    // A geometry column the request names is checked against the remembered columns too.
    await expect(runBounds(sandbox.connection, { ...base, kind: 'bounds', geometryColumn: 'name' }, () => false, sandbox.columns)).rejects.toMatchObject({ body: { code: 'geometry_column_not_geometry' } });
    expect(sandbox.columns.size).toBe(1);
    sandbox.close();
  });
});

describe('stripTrailingSemicolons', () => {
  it.each([
    ['SELECT 1;', 'SELECT 1'],
    ['SELECT 1 ; ;\n', 'SELECT 1'],
    ['SELECT 1 /* note; -- see */', 'SELECT 1'],
    ['SELECT 1 -- note; see\n', 'SELECT 1'],
    ["SELECT ';' AS semi;", "SELECT ';' AS semi"],
    ["SELECT 'a -- b;'", "SELECT 'a -- b;'"],
    ["SELECT E'\\';' AS quote ;", "SELECT E'\\';' AS quote"],
    ['SELECT $$ ; -- $$ AS d;', 'SELECT $$ ; -- $$ AS d'],
    ['SELECT $tag$ $$; $tag$ AS d ; /* x */', 'SELECT $tag$ $$; $tag$ AS d'],
    ['SELECT 1 /* a /* b; */ c; */;', 'SELECT 1'],
    ['SELECT "odd;name" FROM t;', 'SELECT "odd;name" FROM t'],
    ['SELECT 1 /* inside */ + 2 -- end', 'SELECT 1 /* inside */ + 2'],
    ['SELECT 1; SELECT 2', 'SELECT 1; SELECT 2'],
    ['SELECT 1', 'SELECT 1'],
    [';', ''],
  ])('%j becomes %j', (sql, stripped) => {
    expect(stripTrailingSemicolons(sql)).toBe(stripped);
  });
});
