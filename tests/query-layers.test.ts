import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toSafeError } from '../query/engine-errors.ts';
import { QueryPool } from '../query/pool.ts';
import type { QueryTask } from '../query/protocol.ts';
import { openSandbox, type SandboxSettings } from '../query/sandbox.ts';
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

describe('layer 3: the worker pool', () => {
  const task = (sql: string): QueryTask => ({ kind: 'page', sql, sources: [countries], offset: 0, limit: 10, geometryColumn: undefined, resultCrs: undefined, settings });

  it('kills and replaces a worker that ignores its deadline, and answers 504', async () => {
    const pool = new QueryPool({ workers: 1, queue: 2, timeoutMs: 500, memoryCapMb: 8192, graceMs: 500 });
    const started = performance.now();
    // Not allowed by layer 1; run here directly to show layer 3 stops what interrupt() cannot.
    const outcome = await pool.run(task("SELECT length(repeat('x', 900000000)) AS n"));
    expect(outcome).toMatchObject({ ok: false, error: { status: 504, code: 'query_timeout' } });
    expect(performance.now() - started).toBeLessThan(2500);
    expect(pool.restarts).toBe(1);
    expect(await pool.run(task('SELECT count(*) AS n FROM countries'))).toMatchObject({ ok: true, value: { rows: [{ n: 177 }] } });
    await pool.close();
  });

  it('kills and replaces a worker past its memory cap', async () => {
    const pool = new QueryPool({ workers: 1, queue: 2, timeoutMs: 20_000, memoryCapMb: 400 });
    const outcome = await pool.run({ ...task("SELECT length(repeat('x', 900000000)) AS n"), settings: { ...settings, memoryLimitMb: 4096 } });
    expect(outcome).toMatchObject({ ok: false, error: { status: 422, code: 'query_out_of_memory' } });
    expect(pool.restarts).toBe(1);
    await pool.close();
  });

  it('answers 503 when the queue is full', async () => {
    const pool = new QueryPool({ workers: 1, queue: 1, timeoutMs: 3000, memoryCapMb: 4096 });
    const slow = task('SELECT count(*) FROM countries a, countries b, countries c, countries d');
    const outcomes = await Promise.all([pool.run(slow), pool.run(slow), pool.run(slow), pool.run(slow)]);
    expect(outcomes.filter((outcome) => !outcome.ok && outcome.error.status === 503).length).toBeGreaterThanOrEqual(2);
    await pool.close();
  });
});
