/**
 * `npm run bench -- enrich-scale`: the enrichment of synthetic GeoParquet files of 10M points (and of 100M with
 * `BENCH_ENRICH_100M=1`: a file of about 6 GB), each round in a process of its own (bench/enrich-child.ts) as
 * the build reads a data file for its facts: every column's statistics and dictionary, and every geometry's
 * type, validity and extent. Per round: its time, its peak RSS and how many times the file's size it read,
 * beside plain DuckDB counting every column of the same file in the same run (the baseline, in a random order
 * with it). The files are the ones `twin-scale` uses, made once into bench/.work/scale-files.
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { cachedPointsFile } from './synthetic-parquet.ts';
import type { BenchContext } from './run.ts';

const ROUNDS = 3;
const TARGET_RSS = 1024 ** 3;
const TARGET_READS = 2;

interface ChildResult {
  ms: number;
  peakRssBytes: number;
  bytesRead: number;
  columns: number;
}

function runChild(repo: string, mode: 'enrich' | 'scan', path: string): ChildResult {
  const printed = execFileSync(process.execPath, [join(repo, 'bench', 'enrich-child.ts'), mode, path], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return JSON.parse(printed.trim().split('\n').at(-1)!) as ChildResult;
}

export async function benchEnrichScale(bench: Pick<BenchContext, 'repo' | 'section' | 'report'>): Promise<void> {
  bench.section('Enrichment of 10M and 100M points, each in a process of its own');
  const sizes = [10_000_000, ...(process.env.BENCH_ENRICH_100M === '1' ? [100_000_000] : [])];
  for (const points of sizes) {
    const path = await cachedPointsFile(bench.repo, points);
    const fileBytes = statSync(path).size;
    const results: ChildResult[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const order = Math.random() < 0.5 ? (['enrich', 'scan'] as const) : (['scan', 'enrich'] as const);
      const run = Object.fromEntries(order.map((mode) => [mode, runChild(bench.repo, mode, path)])) as Record<'enrich' | 'scan', ChildResult>;
      results.push(run.enrich);
      const reads = run.enrich.bytesRead / fileBytes;
      bench.report(`${points / 1e6}M points, round ${round}`,
        `${(run.enrich.ms / 1000).toFixed(1)} s, peak RSS ${(run.enrich.peakRssBytes / 2 ** 20).toFixed(0)} MiB, ${reads.toFixed(2)} × the file read`,
        `${run.enrich.columns} columns; plain count of every column ${(run.scan.ms / 1000).toFixed(1)} s (${(run.enrich.ms / run.scan.ms).toFixed(1)}×), its peak RSS ${(run.scan.peakRssBytes / 2 ** 20).toFixed(0)} MiB, ${(run.scan.bytesRead / fileBytes).toFixed(2)} × the file read; ${order.join(' first, then ')}; file ${(fileBytes / 1e6).toFixed(0)} MB`);
    }
    const rssMet = results.every((result) => result.peakRssBytes <= TARGET_RSS);
    const readsMet = results.every((result) => result.bytesRead / fileBytes <= TARGET_READS);
    bench.report(`${points / 1e6}M points: targets`, `peak RSS ≤ 1 GiB: ${rssMet ? 'met' : 'missed'}; at most ${TARGET_READS} full reads: ${readsMet ? 'met' : 'missed'}`, `${ROUNDS} rounds; met only if every round is`);
  }
}
