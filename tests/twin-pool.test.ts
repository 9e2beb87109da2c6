import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { readTwinStamp } from '../generator/tiles/pmtiles-twin.ts';
import { createTwinPool, twinMemoryEstimate, type TwinJob } from '../generator/tiles/twin-pool.ts';
import { makeTempDir } from './helpers/catalog.ts';
import { sampleConfig } from './helpers/sample.ts';

/** The sample's data folder, where the global setup's build made every twin. */
const DATA = join(sampleConfig().dataDir, 'natural-earth');
const SOURCES = ['countries/2.0.2/countries-110m', 'land/2.0.2/land-110m'];

/** The job that makes a twin again into `dir`, with the stamp of the twin the sample build made. */
async function jobOf(dir: string, name: string): Promise<TwinJob & { made: string; size: number }> {
  const made = join(DATA, `${name}.pmtiles`);
  const source = join(DATA, `${name}.parquet`);
  return { source, target: join(dir, `${name.replaceAll('/', '-')}.pmtiles`), stamp: (await readTwinStamp(made))!, name: name.split('/').at(-1)!, made, size: (await stat(source)).size };
}

describe('the twin pool', () => {
  const pools: { close: () => Promise<void> }[] = [];
  afterAll(() => Promise.all(pools.map((pool) => pool.close())));

  it('makes two twins at once, each byte for byte the twin the sample build made', async () => {
    const dir = await makeTempDir();
    const pool = createTwinPool({ threads: 2 });
    pools.push(pool);
    const jobs = await Promise.all(SOURCES.map((name) => jobOf(dir, name)));
    const outcomes = await Promise.all(jobs.map((job) => pool.make(job, job.size)));
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true]);
    expect(pool.peak).toBe(2);
    for (const job of jobs) expect((await readFile(job.target)).equals(await readFile(job.made))).toBe(true);
  });

  it('tells how far a twin is, from reading its file to its last zoom, before it answers', async () => {
    const dir = await makeTempDir();
    const pool = createTwinPool({ threads: 1 });
    pools.push(pool);
    const job = await jobOf(dir, 'countries/2.0.2/countries-50m');
    const heard: number[] = [];
    const outcome = await pool.make(job, job.size, (fraction) => heard.push(fraction));
    expect(outcome.ok).toBe(true);
    // countries-50m goes to zoom 2: the file read is the first quarter, then three zooms, a quarter each.
    expect(heard.filter((fraction) => fraction <= 0.25).length).toBeGreaterThan(0);
    expect(heard.filter((fraction) => fraction > 0.25)).toEqual([0.5, 0.75, 1]);
    expect(heard).toEqual([...heard].sort((a, b) => a - b));
  });

  it('makes a twin alone when two would pass the memory budget', async () => {
    const dir = await makeTempDir();
    const jobs = await Promise.all(SOURCES.map((name) => jobOf(dir, name)));
    const pool = createTwinPool({ threads: 2, budgetBytes: Math.max(...jobs.map((job) => twinMemoryEstimate(job.size))) * 1.5 });
    pools.push(pool);
    const outcomes = await Promise.all(jobs.map((job) => pool.make(job, job.size)));
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([true, true]);
    expect(pool.peak).toBe(1);
  });

  it('answers why a twin cannot be made, telling a file without geometry apart, and goes on', async () => {
    const dir = await makeTempDir();
    const flat = join(dir, 'flat.parquet');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(`COPY (SELECT 1 AS a) TO '${flat}' (FORMAT parquet)`);
    connection.closeSync();
    const pool = createTwinPool({ threads: 2 });
    pools.push(pool);
    const good = await jobOf(dir, SOURCES[0]!);
    const [missing, noGeometry, made] = await Promise.all([
      pool.make({ source: join(dir, 'absent.parquet'), target: join(dir, 'absent.pmtiles'), stamp: 'x', name: 'absent' }, 0),
      pool.make({ source: flat, target: join(dir, 'flat.pmtiles'), stamp: 'x', name: 'flat' }, 0),
      pool.make(good, good.size),
    ]);
    expect(missing).toMatchObject({ ok: false, noGeometry: false, message: expect.stringContaining('absent.parquet') });
    expect(noGeometry).toMatchObject({ ok: false, noGeometry: true });
    expect(made.ok).toBe(true);
  });
});
