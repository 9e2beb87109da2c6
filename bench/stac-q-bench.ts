/**
 * `npm run bench -- stac-q-scale`: STAC free-text search at 10,000 and 100,000 datasets × 3 files, in process
 * (bench/stac-q-child.ts, a process per size with a heap large enough for the 100k model), with how each figure
 * grows from 10k to 100k. Over HTTP a search costs 1–4 ms more (section `stac-search`); a 100k × 3 tree to serve
 * it from is not built here (about 44 GB).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { writeSyntheticCatalog } from './synthetic-catalog.ts';
import type { BenchContext } from './run.ts';

const TARGET_P99_MS = 20;

interface ChildResult {
  items: number;
  loadMs: number;
  indexMs: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  matched: number;
  rssBytes: number;
}

export async function benchStacFreeText(bench: Pick<BenchContext, 'repo' | 'root' | 'section' | 'report'>): Promise<void> {
  bench.section('STAC free-text search at 10k and 100k datasets × 3 files, in process');
  const results: ChildResult[] = [];
  for (const datasets of [10_000, 100_000]) {
    const catalogDir = join(bench.root, `stac-q-${datasets}`, 'catalog');
    await writeSyntheticCatalog({ dir: catalogDir, datasets, filesPerDataset: 3, collections: datasets / 500, sampleCatalogDir: join(bench.repo, 'catalog-data') });
    const printed = execFileSync(process.execPath, ['--max-old-space-size=16000', join(bench.repo, 'bench', 'stac-q-child.ts'), catalogDir, join(bench.repo, 'catalog-data', 'data')], { encoding: 'utf8', maxBuffer: 1 << 20 });
    const result = JSON.parse(printed.trim().split('\n').at(-1)!) as ChildResult;
    results.push(result);
    bench.report(`${datasets / 1000}k × 3: q search p50 / p90 / p99 / max`, `${result.p50.toFixed(2)} / ${result.p90.toFixed(2)} / ${result.p99.toFixed(2)} / ${result.max.toFixed(2)} ms`,
      `${result.items.toLocaleString('en')} Items, ${result.matched.toLocaleString('en')} matched on average; 1,000 searches of 1–3 terms of 1–3 words${datasets === 100_000 ? `; target p99 ≤ ${TARGET_P99_MS} ms over HTTP: ${result.p99 <= TARGET_P99_MS ? 'met' : 'missed'} in process` : ''}`);
    bench.report(`${datasets / 1000}k × 3: loading the model / the indexes`, `${(result.loadMs / 1000).toFixed(1)} s / ${(result.indexMs / 1000).toFixed(1)} s`, `process RSS after ${(result.rssBytes / 2 ** 30).toFixed(2)} GiB (records read without the build's caches)`);
  }
  const [small, large] = results as [ChildResult, ChildResult];
  bench.report('10k → 100k growth: p50 / p99 / indexes / RSS', `${(large.p50 / small.p50).toFixed(1)}× / ${(large.p99 / small.p99).toFixed(1)}× / ${(large.indexMs / small.indexMs).toFixed(1)}× / ${(large.rssBytes / small.rssBytes).toFixed(1)}×`, 'for 10× the datasets; a search does work in proportion to the Items it matches, which is 10× too');
}
