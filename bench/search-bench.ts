import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { createIndex } from 'pagefind';
import type { Browser, Page } from 'playwright-core';
import sirv from 'sirv';
import type { TreeFile } from '../core/static-files.ts';
import { buildSearchIndex, closeSearchIndexer, SEARCH_INDEX_PREFIX, type SearchRecord } from '../generator/emit/site/search-index.ts';
import { median } from './build-bench.ts';
import type { BenchContext } from './run.ts';
import { createRandom } from './synthetic-catalog.ts';

const WORDS = [
  'river', 'basin', 'coast', 'parcel', 'road', 'rail', 'forest', 'soil', 'flood', 'zone', 'census', 'tract', 'school',
  'district', 'harbour', 'airport', 'land', 'cover', 'elevation', 'contour', 'building', 'footprint', 'wetland', 'lake',
  'glacier', 'municipal', 'boundary', 'protected', 'area', 'habitat', 'transit', 'stop', 'power', 'line', 'pipeline',
  'well', 'mine', 'quarry', 'vineyard', 'orchard', 'crop', 'field', 'survey', 'station', 'weather', 'noise', 'air',
  'quality', 'population', 'grid', 'hexagon', 'village', 'city', 'region', 'province', 'county', 'state', 'nation',
];
const TAGS = ['boundaries', 'transport', 'hydrography', 'environment', 'land-use', 'demographics', 'elevation', 'infrastructure', 'agriculture', 'geology', 'climate', 'health', 'energy', 'buildings', 'hazards', 'ecology', 'cadastre', 'utilities', 'marine', 'forestry'];
const SAMPLE_COLUMNS = [['id', 'name', 'geometry', 'bbox'], ['city_id', 'name', 'alt_country', 'country', 'feature_code', 'admin_code', 'population', 'municipality', 'geometry', 'bbox']];

/** Queries a person might type, from one rare word to a common one; each is timed cold and warm. */
const QUERIES = ['4243', 'glacier_depth', 'harbour', 'flood zone', 'quarr', 'feature_code', 'Collection 7'];
const SHOWN = 10;

/**
 * Search records shaped like the synthetic catalog's datasets (bench/synthetic-catalog.ts): a three-word name
 * with its number, a forty-word description, three tags, three files whose columns are the sample files' real
 * columns plus two made-up measure columns (`glacier_depth`), in 20 collections.
 */
export function makeSearchRecords(count: number, seed = 7): SearchRecord[] {
  const random = createRandom(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const phrase = (words: number) => Array.from({ length: words }, () => pick(WORDS)).join(' ');
  return Array.from({ length: count }, (_, d) => ({
    url: `/collections/collection-${d % 20}/datasets/dataset-${d}/`,
    title: `${phrase(3)} ${d}`,
    collection: `Collection ${d % 20}`,
    description: `${phrase(40)}.`,
    tags: [...new Set([pick(TAGS), pick(TAGS), pick(TAGS)])],
    columns: [...new Set([...pick(SAMPLE_COLUMNS), `${pick(WORDS)}_depth`, `${pick(WORDS)}_count`])],
    files: [0, 1, 2].map((f) => `Layer ${f} ${phrase(2)}`),
  }));
}

/** Writes an index with the `.br`/`.gz` siblings a CDN would serve for its text files, and the bench page. */
async function writeSite(dir: string, files: TreeFile[]): Promise<number> {
  let bytes = 0;
  for (const file of files) {
    const path = join(dir, file.key);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.body);
    bytes += file.body.byteLength;
    if (/\.(js|json)$/.test(file.key)) {
      await writeFile(`${path}.br`, brotliCompressSync(file.body));
      await writeFile(`${path}.gz`, gzipSync(file.body));
    }
  }
  await writeFile(join(dir, 'index.html'), PAGE);
  return bytes;
}

/** The minimal page: loads Pagefind as the search page does, then times queries on request. */
const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>search bench</title></head><body><script type="module">
const worker = new URLSearchParams(location.search).get('worker') !== '0';
const pagefind = await import('./_site/pagefind/pagefind.js');
await pagefind.options({ baseUrl: '/', excerptLength: 24, noWorker: !worker });
await pagefind.init();
// init() returns before the wasm and metadata arrive; an empty search waits for them and fetches nothing more.
await pagefind.search('');
window.runQuery = async (query, typed) => {
  if (typed) {
    // As the search page does: the chunk is preloaded while the person types, the search runs after the pause.
    pagefind.preload(query);
    await new Promise((resolve) => setTimeout(resolve, 120));
  }
  const started = performance.now();
  const search = await pagefind.search(query);
  const loading = search.results.slice(0, ${SHOWN}).map((result) => result.data());
  await loading[0];
  const first = performance.now() - started;
  await Promise.all(loading);
  return { first, all: performance.now() - started, count: search.results.length };
};
document.body.dataset.ready = 'true';
</script></body></html>`;

/** Counts the bytes (headers and body, as transferred) of every request the page and its worker make. */
function countBytes(page: Page): { take: () => Promise<{ bytes: number; requests: number }> } {
  let pending: Promise<number>[] = [];
  page.on('requestfinished', (request) => {
    pending.push(request.sizes().then((sizes) => sizes.responseBodySize + sizes.responseHeadersSize).catch(() => 0));
  });
  return {
    async take() {
      // Playwright reports a finished request a moment after the page has its body; let the events arrive.
      await page.waitForTimeout(100);
      const sizes = await Promise.all(pending);
      pending = [];
      return { bytes: sizes.reduce((sum, size) => sum + size, 0), requests: sizes.length };
    },
  };
}

interface QueryFigure {
  query: string;
  /** Query to the first result's data, and to all shown results, with nothing of the query loaded yet. */
  coldFirstMs: number;
  coldMs: number;
  coldBytes: number;
  coldRequests: number;
  /** The same after the index chunk was preloaded during a 120 ms typing pause, as the search page does. */
  typedFirstMs: number;
  /** The same query again, everything in memory. */
  warmMs: number;
  count: number;
}

type QueryTiming = { first: number; all: number; count: number };

/** Rounds of each cold query, each in a fresh browser context; the median is reported. */
const ROUNDS = 3;

/**
 * Times one query on a freshly loaded page: cold (its index chunk and result fragments fetched), again warm
 * (all in memory), and on another fresh page after a typing pause in which its chunk was preloaded.
 */
async function measureQuery(browser: Browser, url: string, query: string): Promise<{ loadMs: number; loadBytes: number; figure: QueryFigure }> {
  const opened = await openPage(browser, url);
  const cold = await runQuery(opened.page, query, false);
  const transfer = await opened.counter.take();
  const warm = await runQuery(opened.page, query, false);
  await opened.page.context().close();
  const again = await openPage(browser, url);
  const typed = await runQuery(again.page, query, true);
  await again.page.context().close();
  return {
    loadMs: opened.loadMs,
    loadBytes: opened.loadBytes,
    figure: { query, coldFirstMs: cold.first, coldMs: cold.all, coldBytes: transfer.bytes, coldRequests: transfer.requests, typedFirstMs: typed.first, warmMs: warm.all, count: cold.count },
  };
}

/** Opens the bench page in a fresh context (empty cache) and waits until Pagefind has its wasm and metadata. */
async function openPage(browser: Browser, url: string): Promise<{ page: Page; counter: ReturnType<typeof countBytes>; loadMs: number; loadBytes: number }> {
  const page = await (await browser.newContext()).newPage();
  const counter = countBytes(page);
  const started = performance.now();
  await page.goto(url);
  await page.waitForSelector('body[data-ready]', { state: 'attached' });
  const loadMs = performance.now() - started;
  return { page, counter, loadMs, loadBytes: (await counter.take()).bytes };
}

function runQuery(page: Page, query: string, typed: boolean): Promise<QueryTiming> {
  return page.evaluate(([q, t]) => (window as unknown as { runQuery: (q: string, t: boolean) => Promise<QueryTiming> }).runQuery(q, t), [query, typed] as const);
}

/** A page to measure: which index, and whether Pagefind searches in its web worker. */
interface Variant {
  site: 'big' | 'small';
  worker: boolean;
}

/** What one variant measured: the median page load, and per query the median of each figure over the rounds. */
interface Measured {
  loadMs: number;
  loadBytes: number;
  figures: QueryFigure[];
}

/**
 * Every query, ROUNDS times, in every variant; the variants take turns within each round, so that a busy
 * moment of the machine falls on all of them rather than on one.
 */
async function measureVariants(browser: Browser, origin: string, variants: Variant[]): Promise<Measured[]> {
  const loads = variants.map(() => [] as { loadMs: number; loadBytes: number }[]);
  const figures = variants.map(() => [] as QueryFigure[]);
  for (const query of QUERIES) {
    const rounds = variants.map(() => [] as QueryFigure[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, variant] of variants.entries()) {
        const measured = await measureQuery(browser, `${origin}/${variant.site}/index.html?worker=${variant.worker ? 1 : 0}`, query);
        loads[index]!.push(measured);
        rounds[index]!.push(measured.figure);
      }
    }
    for (const [index, measured] of rounds.entries()) {
      const typical = (pick: (figure: QueryFigure) => number) => median(measured.map(pick));
      figures[index]!.push({
        ...measured[0]!,
        coldFirstMs: typical((figure) => figure.coldFirstMs),
        coldMs: typical((figure) => figure.coldMs),
        typedFirstMs: typical((figure) => figure.typedFirstMs),
        warmMs: typical((figure) => figure.warmMs),
      });
    }
  }
  return variants.map((_, index) => ({
    loadMs: median(loads[index]!.map((load) => load.loadMs)),
    loadBytes: median(loads[index]!.map((load) => load.loadBytes)),
    figures: figures[index]!,
  }));
}

async function launchChromium(): Promise<Browser> {
  const sparticuz = (await import('@sparticuz/chromium')).default;
  const { chromium } = await import('playwright-core');
  // One process per browser, not per page: --single-process would end the browser with the first context.
  const args = sparticuz.args.filter((arg) => !/^--(single-process|headless)\b/.test(arg));
  return chromium.launch({ executablePath: await sparticuz.executablePath(), args, headless: true });
}

function digest(files: TreeFile[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(file.key).update(file.body);
  return hash.digest('hex');
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;
const ms = (value: number) => `${value.toFixed(0)} ms`;

/**
 * Search over 10,000 datasets in the browser: the index build time and size, then, in headless Chromium over
 * loopback, the time to the first results and the bytes each query transfers, against a 100-dataset index
 * in the same run.
 */
export async function benchSearch(bench: BenchContext): Promise<void> {
  bench.section('Search (Pagefind, 10,000 datasets)');
  const root = join(bench.root, 'search');
  await benchIndexBuild(bench, root);
  const server: Server = createServer(sirv(root, { brotli: true, gzip: true, etag: true })).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const browser = await launchChromium();
  try {
    const [large, baseline, worker] = (await measureVariants(browser, origin, [
      { site: 'big', worker: false },
      { site: 'small', worker: false },
      { site: 'big', worker: true },
    ])) as [Measured, Measured, Measured];
    bench.report('page load to search ready, 10k', ms(large.loadMs), `${kb(large.loadBytes)} transferred once per page: page, pagefind.js, wasm, metadata; 100-dataset index: ${kb(baseline.loadBytes)}`);
    for (const [index, figure] of large.figures.entries()) {
      const base = baseline.figures[index]!;
      bench.report(
        `“${figure.query}”, 10k`,
        `first result ${ms(figure.coldFirstMs)} cold, ${ms(figure.typedFirstMs)} after typing`,
        `${figure.count} hits; all ${SHOWN} in ${ms(figure.coldMs)} cold, ${ms(figure.warmMs)} warm; ${kb(figure.coldBytes)} in ${figure.coldRequests} requests; 100-dataset index: first ${ms(base.coldFirstMs)} cold, ${kb(base.coldBytes)}`,
      );
    }
    reportSummary(bench, 'first result after load, 10k, main thread (as the search page runs)', large.figures);
    reportSummary(bench, 'first result after load, 100-dataset baseline', baseline.figures);
    reportSummary(bench, 'first result after load, 10k, in Pagefind\'s web worker (not shipped)', worker.figures);
    bench.report('machine load (1-minute average) at the end', loadavg()[0]!.toFixed(1), `${availableParallelism()} CPUs; browser timings stretch with it, the 100-dataset baseline shows by how much`);
  } finally {
    await browser.close();
    server.close();
  }
}

/** Builds the 10k index three times (time, size, same bytes each time) and a 100-dataset one, and writes both. */
async function benchIndexBuild(bench: BenchContext, root: string): Promise<void> {
  const records = makeSearchRecords(10_000);
  const builds: { ms: number; files: TreeFile[] }[] = [];
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    const files = await buildSearchIndex(records);
    builds.push({ ms: performance.now() - started, files });
  }
  const small = await buildSearchIndex(makeSearchRecords(100));
  await writeWorkerScript(join(root, 'big', SEARCH_INDEX_PREFIX));
  await closeSearchIndexer();
  const big = builds[0]!.files;
  const same = new Set(builds.map((build) => digest(build.files))).size === 1;
  const bigBytes = await writeSite(join(root, 'big'), big);
  await writeSite(join(root, 'small'), small);
  const sizeOf = (suffix: string) => big.filter((file) => file.key.endsWith(suffix)).map((file) => file.body.byteLength);
  bench.report('index build, 10k datasets (median of 3)', `${(median(builds.map((build) => build.ms)) / 1000).toFixed(2)} s`, `${big.length} files (${sizeOf('.pf_fragment').length} fragments); the three builds gave ${same ? 'identical' : 'DIFFERENT'} bytes`);
  bench.report('index size, 10k datasets', `${(bigBytes / 1e6).toFixed(1)} MB`, `metadata ${kb(sizeOf('.pf_meta')[0]!)}, largest index chunk ${kb(Math.max(...sizeOf('.pf_index')))}, wasm ${kb(sizeOf('.pagefind')[0]!)}`);
}

/** Pagefind's web worker script, which the site does not ship, taken from Pagefind for the comparison. */
async function writeWorkerScript(dir: string): Promise<void> {
  const { index } = await createIndex();
  const { files } = await index!.getFiles();
  const worker = files.find((file) => file.path === 'pagefind-worker.js')!;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, worker.path), worker.content);
  await writeFile(join(dir, `${worker.path}.br`), brotliCompressSync(worker.content));
  await writeFile(join(dir, `${worker.path}.gz`), gzipSync(worker.content));
  await index!.deleteIndex();
}

function reportSummary(bench: BenchContext, name: string, figures: QueryFigure[]): void {
  const pick = (choose: (figure: QueryFigure) => number) => figures.map(choose);
  bench.report(
    name,
    `median ${ms(median(pick((figure) => figure.coldFirstMs)))} cold, ${ms(median(pick((figure) => figure.typedFirstMs)))} after typing`,
    `worst ${ms(Math.max(...pick((figure) => figure.coldFirstMs)))} cold, ${ms(Math.max(...pick((figure) => figure.typedFirstMs)))} after typing; ≤ ${kb(Math.max(...pick((figure) => figure.coldBytes)))} per query; target ≤ 100 ms and ≤ 100 KB`,
  );
}
