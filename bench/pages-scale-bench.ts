/**
 * `npm run bench -- pages-scale`: what the web app's catalog-wide files weigh at 10k and 100k datasets × 3 files
 * (bench/pages-scale-child.ts, a process per size): the home page, one collection's first page, the search page
 * and its index's `meta.json` (fetched by the first search), and what the console's dataset picker fetches for a
 * query through that index. Sizes whole and with brotli, and how each grows.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { writeSyntheticCatalog } from './synthetic-catalog.ts';
import type { BenchContext } from './run.ts';

interface ChildResult {
  datasets: number;
  sizes: Record<string, { bytes: number; br: number }>;
  chunks: { count: number; median: number; max: number };
  picker: { query: string; matches: number; files: number; br: number }[];
}

/** What a page may weigh, compressed, on first load: the dataset page's budget (tests/web-app.test.ts). */
const PAGE_BUDGET = 60_000;

export async function benchPagesScale(bench: Pick<BenchContext, 'repo' | 'root' | 'section' | 'report'>): Promise<void> {
  bench.section('The web app\'s catalog-wide files at 10k and 100k datasets × 3 files');
  const results: ChildResult[] = [];
  for (const datasets of [10_000, 100_000]) {
    const catalogDir = join(bench.root, `pages-${datasets}`, 'catalog');
    await writeSyntheticCatalog({ dir: catalogDir, datasets, filesPerDataset: 3, collections: datasets / 500, sampleCatalogDir: join(bench.repo, 'catalog-data') });
    const printed = execFileSync(process.execPath, ['--max-old-space-size=16000', join(bench.repo, 'bench', 'pages-scale-child.ts'), catalogDir], { encoding: 'utf8', maxBuffer: 1 << 20 });
    const result = JSON.parse(printed.trim().split('\n').at(-1)!) as ChildResult;
    results.push(result);
    for (const [key, size] of Object.entries(result.sizes)) {
      const note = key.endsWith('.html') ? `the HTML ${size.br <= PAGE_BUDGET ? 'within' : 'over'} a page's 60 KB compressed (its styles and scripts do not grow with the catalog)` : 'fetched by the first search, with the chunks of its words';
      bench.report(`${datasets / 1000}k × 3: ${key.replace(/^collections\/[^/]+\//, 'collections/{c}/')}`, `${(size.bytes / 1000).toFixed(1)} KB, ${(size.br / 1000).toFixed(1)} KB with brotli`, note);
    }
    bench.report(`${datasets / 1000}k × 3: search index chunks`, `${result.chunks.count} chunks, median ${(result.chunks.median / 1000).toFixed(1)} KB, largest ${(result.chunks.max / 1000).toFixed(1)} KB with brotli`, 'a search fetches the chunks of its words');
    for (const { query, matches, files, br } of result.picker) {
      bench.report(`${datasets / 1000}k × 3: the console's dataset picker, "${query}"`, `${files} files, ${(br / 1000).toFixed(1)} KB with brotli`, `${matches} datasets match; the index's metadata, the chunks of the words and the first 20 matches`);
    }
  }
  const [small, large] = results as [ChildResult, ChildResult];
  for (const key of Object.keys(small.sizes)) {
    bench.report(`10k → 100k growth: ${key.replace(/^collections\/[^/]+\//, 'collections/{c}/')}`, `${(large.sizes[key]!.br / small.sizes[key]!.br).toFixed(1)}× with brotli`, 'for 10× the datasets');
  }
}
