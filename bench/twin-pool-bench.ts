/**
 * `npm run bench -- twins`: the build's twin stage on the sample's 27 GeoParquet files, one after another on one
 * DuckDB instance (as before issue 28) against the twin pool (`generator/tiles/twin-pool.ts`: worker threads under
 * a memory budget), alternated in 3 rounds with a random side first, each side in a process of its own so that
 * its peak RSS is its own. Every archive of both sides must be the same bytes.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { writePmTilesTwin } from '../generator/tiles/pmtiles-twin.ts';
import { createTwinPool } from '../generator/tiles/twin-pool.ts';
import type { BenchContext } from './run.ts';

const ROUNDS = 3;

type Bench = Pick<BenchContext, 'repo' | 'root' | 'section' | 'report'>;
type Side = 'one-by-one' | 'pool';

export async function benchTwinPool(bench: Bench): Promise<void> {
  bench.section('PMTiles twins of the sample: one after another against the twin pool');
  const data = join(bench.repo, 'catalog-data/data');
  const files = readdirSync(data, { recursive: true }).map(String).filter((file) => file.endsWith('.parquet')).sort();
  const megabytes = files.reduce((sum, file) => sum + statSync(join(data, file)).size, 0) / 1e6;
  for (let round = 1; round <= ROUNDS; round++) {
    const sides: Side[] = Math.random() < 0.5 ? ['one-by-one', 'pool'] : ['pool', 'one-by-one'];
    const timed = {} as Record<Side, { ms: number; peakMb: number }>;
    for (const side of sides) {
      const out = join(bench.root, `twins-${round}-${side}`);
      const load = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
      const printed = execFileSync(process.execPath, [new URL(import.meta.url).pathname, side, data, out], { encoding: 'utf8' });
      timed[side] = JSON.parse(printed.trim().split('\n').at(-1)!) as { ms: number; peakMb: number };
      bench.report(`round ${round}, ${side}`, `${(timed[side].ms / 1000).toFixed(1)} s`, `peak RSS ${timed[side].peakMb} MB; 1-minute load before ${load.toFixed(1)}`);
    }
    const same = files.every((_, index) => readFileSync(join(bench.root, `twins-${round}-pool`, `${index}.pmtiles`)).equals(readFileSync(join(bench.root, `twins-${round}-one-by-one`, `${index}.pmtiles`))));
    bench.report(`round ${round}, pool / one by one`, `${(timed.pool.ms / timed['one-by-one'].ms).toFixed(2)}×`, `${files.length} twins of ${megabytes.toFixed(1)} MB of GeoParquet; the same bytes: ${same ? 'yes' : 'NO'}`);
  }
}

/** One side, in its own process: prints its time and peak RSS as JSON. */
async function runSide(side: Side, data: string, out: string): Promise<void> {
  const files = readdirSync(data, { recursive: true }).map(String).filter((file) => file.endsWith('.parquet')).sort();
  mkdirSync(out, { recursive: true });
  const jobs = files.map((file, index) => ({ source: join(data, file), target: join(out, `${index}.pmtiles`), stamp: 'bench', name: `twin-${index}` }));
  const started = performance.now();
  if (side === 'one-by-one') {
    const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
    for (const job of jobs) await writePmTilesTwin({ instance, ...job });
  } else {
    // Largest file first, as the build asks (generator/tiles/twins.ts).
    const sized = jobs.map((job) => ({ job, size: statSync(job.source).size })).sort((a, b) => b.size - a.size);
    const pool = createTwinPool();
    const outcomes = await Promise.all(sized.map(({ job, size }) => pool.make(job, size)));
    await pool.close();
    const failed = outcomes.find((outcome) => !outcome.ok);
    if (failed && !failed.ok) throw new Error(failed.message);
  }
  const ms = performance.now() - started;
  const peakKb = Number(/VmHWM:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
  console.log(JSON.stringify({ ms: Math.round(ms), peakMb: Math.round(peakKb / 1024) }));
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const [side, data, out] = process.argv.slice(2);
  await runSide(side as Side, data!, out!);
}
