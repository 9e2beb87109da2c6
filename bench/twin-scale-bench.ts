/**
 * `npm run bench -- twin-scale`: the PMTiles twins of synthetic files of 1M and 10M points (and of 100M with
 * `BENCH_TWIN_100M=1`: a file of about 6 GB, one round of about 80 minutes, which needs about 35 GB in the
 * temporary folder; see README "PMTiles twins"), each made in a process of its own as a build's twin thread makes
 * it (bench/twin-child.ts: one DuckDB thread, the twin instance's memory limit), for its peak RSS, its time and its
 * features per minute of processor time. The files have the ten columns of the other point benches, in random
 * order, and are made once into bench/.work/scale-files (their size is printed).
 */
import { execFileSync } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cachedPointsFile } from './synthetic-parquet.ts';
import type { BenchContext } from './run.ts';

const ROUNDS = 3;
const TARGET_RSS = 1024 ** 3;
const TARGET_PER_MINUTE = 1_000_000;

interface ChildResult {
  ms: number;
  cpuMs: number;
  peakRssBytes: number;
  maxZoom: number;
  tiles: number;
  bytes: number;
}

export async function benchTwinScale(bench: Pick<BenchContext, 'repo' | 'root' | 'section' | 'report'>): Promise<void> {
  bench.section('PMTiles twins of 1M to 100M points, each in a process of its own');
  const sizes = [1_000_000, 10_000_000, ...(process.env.BENCH_TWIN_100M === '1' ? [100_000_000] : [])];
  for (const points of sizes) {
    const source = await cachedPointsFile(bench.repo, points);
    const rounds = points >= 100_000_000 ? 1 : ROUNDS;
    const results: ChildResult[] = [];
    for (let round = 1; round <= rounds; round++) {
      const target = join(bench.root, `twin-${points}.pmtiles`);
      const printed = execFileSync(process.execPath, [join(bench.repo, 'bench', 'twin-child.ts'), source, target], { encoding: 'utf8', maxBuffer: 1 << 20 });
      const result = JSON.parse(printed.trim().split('\n').at(-1)!) as ChildResult;
      results.push(result);
      rmSync(target, { force: true });
      const perMinute = points / (result.cpuMs / 60_000);
      bench.report(`${points / 1e6}M points, round ${round}`,
        `${(result.ms / 1000).toFixed(1)} s, peak RSS ${(result.peakRssBytes / 2 ** 20).toFixed(0)} MiB, ${(perMinute / 1e6).toFixed(2)}M features per processor minute`,
        `processor ${(result.cpuMs / 1000).toFixed(1)} s; zooms 0–${result.maxZoom}, ${result.tiles} tiles, ${(result.bytes / 1e6).toFixed(1)} MB; file ${(statSync(source).size / 1e6).toFixed(0)} MB`);
    }
    const rssMet = results.every((result) => result.peakRssBytes <= TARGET_RSS);
    const rateMet = results.every((result) => points / (result.cpuMs / 60_000) >= TARGET_PER_MINUTE);
    bench.report(`${points / 1e6}M points: targets`, `peak RSS ≤ 1 GiB: ${rssMet ? 'met' : 'missed'}; ≥ 1M features per processor minute: ${rateMet ? 'met' : 'missed'}`, `${rounds} round(s); met only if every round is`);
  }
}
