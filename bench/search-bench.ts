import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { close as closePagefind, createIndex } from 'pagefind';
import type { Browser, Page } from 'playwright-core';
import { rolldown } from 'rolldown';
import sirv from 'sirv';
import type { TreeFile } from '../core/static-files.ts';
import { contentTypeOf } from '../generator/emit/site/content-types.ts';
import { buildSearchIndex, type SearchRecord } from '../generator/emit/site/search-index.ts';
import { median } from './build-bench.ts';
import type { BenchContext } from './run.ts';
import { createRandom, WORDS } from './synthetic-catalog.ts';
import { startChromium } from '../tests/helpers/chromium.ts';

const TAGS = ['boundaries', 'transport', 'hydrography', 'environment', 'land-use', 'demographics', 'elevation', 'infrastructure', 'agriculture', 'geology', 'climate', 'health', 'energy', 'buildings', 'hazards', 'ecology', 'cadastre', 'utilities', 'marine', 'forestry'];
const SAMPLE_COLUMNS = [['id', 'name', 'geometry', 'bbox'], ['city_id', 'name', 'alt_country', 'country', 'feature_code', 'admin_code', 'population', 'municipality', 'geometry', 'bbox']];

/** Queries a person might type: a rare title number, column names, the most common words, a prefix, two letters. */
const QUERIES = ['4243', 'glacier_depth', 'harbour', 'flood zone', 'quarr', 'feature_code', 'Collection 7', 'co'];
const SHOWN = 10;
/** Rounds of each cold query, each in a fresh browser context; the median is reported. */
const ROUNDS = 3;
const DATASETS = 10_000;

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
    id: d + 1,
    url: `/collections/collection-${d % 20}/datasets/dataset-${d}/`,
    title: `${phrase(3)} ${d}`,
    collection: `Collection ${d % 20}`,
    description: `${phrase(40)}.`,
    tags: [...new Set([pick(TAGS), pick(TAGS), pick(TAGS)])],
    columns: [...new Set([...pick(SAMPLE_COLUMNS), `${pick(WORDS)}_depth`, `${pick(WORDS)}_count`])],
    files: [0, 1, 2].map((f) => `Layer ${f} ${phrase(2)}`),
  }));
}

/** A search engine under test: how to build its files and the bench page that times its queries. */
interface Engine {
  name: string;
  build(records: SearchRecord[]): Promise<TreeFile[]>;
  /** Files the page needs besides the index (the page itself, a bundled client); `repo` is the repository root. */
  page(repo: string): Promise<TreeFile[]>;
}

const encoder = new TextEncoder();
const html = (body: string): TreeFile => ({ key: 'index.html', body: encoder.encode(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>search bench</title></head><body><script type="module">${body}</script></body></html>`), type: 'text/html' });

/** Both pages define `runQuery` the same way: the first result's data, then all shown, as the search page loads them. */
const RUN_QUERY = `
window.runQuery = async (query, typed) => {
  if (typed) {
    // As the search page does: the chunks are preloaded while the person types, the search runs after the pause.
    preload(query);
    await new Promise((resolve) => setTimeout(resolve, 120));
  }
  const started = performance.now();
  const hits = await search(query);
  const loading = hits.slice(0, ${SHOWN}).map(load);
  await loading[0];
  const first = performance.now() - started;
  await Promise.all(loading);
  return { first, all: performance.now() - started, count: hits.length };
};
document.body.dataset.ready = 'true';`;

/** geoshelf's own index, with the search page's client bundled and minified as the site's build does. */
const OURS: Engine = {
  name: 'ours',
  build: (records) => buildSearchIndex(records),
  async page(repo) {
    const bundle = await rolldown({ input: join(repo, 'src', 'client', 'search', 'search-engine.ts'), platform: 'browser', logLevel: 'silent' });
    const { output } = await bundle.generate({ format: 'esm', minify: true });
    await bundle.close();
    const client: TreeFile = { key: 'client.js', body: encoder.encode(output[0].code), type: 'text/javascript' };
    const page = html(`import { loadSearchEngine } from './client.js';
const engine = await loadSearchEngine();
const search = (query) => engine.search(query);
const preload = (query) => engine.preload(query);
const load = (hit) => hit.load();${RUN_QUERY}`);
    return [client, page];
  },
};

/** Files Pagefind writes that a site using its JS API on the main thread never loads. */
const PAGEFIND_UNUSED = /^pagefind-(ui|modular-ui|component-ui|highlight|worker)\.|^wasm\.(?!en\.)[a-z-]+\.pagefind$/;

/** Pagefind 1.6, as the site used it until it was replaced: one custom record per dataset, title weighed by Pagefind. */
const PAGEFIND: Engine = {
  name: 'Pagefind',
  async build(records) {
    const { index, errors } = await createIndex({ forceLanguage: 'en' });
    if (!index) throw new Error(`Pagefind could not create an index: ${errors.join('; ')}`);
    try {
      const sorted = records.toSorted((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
      for (let start = 0; start < sorted.length; start += 1000) {
        await Promise.all(sorted.slice(start, start + 1000).map((record) => index.addCustomRecord(toPagefindRecord(record))));
      }
      const { files } = await index.getFiles();
      return files.filter((file) => !PAGEFIND_UNUSED.test(file.path)).map((file) => ({ key: `_site/pagefind/${file.path}`, body: file.content, type: contentTypeOf(file.path) }));
    } finally {
      await index.deleteIndex();
    }
  },
  async page() {
    return [html(`const pagefind = await import('./_site/pagefind/pagefind.js');
await pagefind.options({ baseUrl: '/', excerptLength: 24, noWorker: true });
await pagefind.init();
// init() returns before the wasm and metadata arrive; an empty search waits for them and fetches nothing more.
await pagefind.search('');
const search = async (query) => (await pagefind.search(query)).results;
const preload = (query) => pagefind.preload(query);
const load = (result) => result.data();${RUN_QUERY}`)];
  },
};

function toPagefindRecord(record: SearchRecord) {
  const list = (label: string, items: string[]) => (items.length > 0 ? `${label}: ${items.join(' · ')}` : '');
  const lists = [list('Columns', record.columns), list('Files', record.files), list('Tags', record.tags)].filter((line) => line !== '').join(' — ');
  return {
    url: record.url,
    content: [record.description, lists].join('\n'),
    language: 'en',
    meta: { title: record.title, collection: record.collection, tags: record.tags.join('\n') },
    filters: { collection: [record.collection], tag: record.tags },
  };
}

/**
 * Bytes a file costs over the wire from the static tree: brotli for text files of 1 KB or more (as the tree
 * precompresses them), its own bytes otherwise (Pagefind's chunks are gzip inside and served as they are).
 */
function servedBytes(file: TreeFile): number {
  if (file.body.byteLength < 1024 || !/json|javascript|html/.test(file.type)) return file.body.byteLength;
  return Math.min(file.body.byteLength, brotliCompressSync(file.body).byteLength);
}

/** Writes a site with `.br`/`.gz` siblings for its text files, and returns each path's served bytes. */
async function writeSite(dir: string, files: TreeFile[]): Promise<Map<string, number>> {
  const served = new Map<string, number>();
  for (const file of files) {
    const path = join(dir, file.key);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.body);
    served.set(`/${file.key}`, servedBytes(file));
    if (file.body.byteLength >= 1024 && /json|javascript/.test(file.type)) {
      await writeFile(`${path}.br`, brotliCompressSync(file.body));
      await writeFile(`${path}.gz`, gzipSync(file.body));
    }
  }
  return served;
}

/** What one engine's build gave, and the figures to print. */
interface Built {
  engine: Engine;
  files: TreeFile[];
  buildMs: number;
  identical: boolean;
  changed: string[];
}

/** Builds an index three times (median time, same bytes each time), then once with one description edited. */
async function buildEngine(engine: Engine, records: SearchRecord[]): Promise<Built> {
  const builds: { ms: number; files: TreeFile[] }[] = [];
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    builds.push({ files: await engine.build(records), ms: performance.now() - started });
  }
  const files = builds[0]!.files;
  const identical = builds.every((build) => diffFiles(files, build.files).length === 0);
  const edited = records.map((record, index) => (index === 4242 ? { ...record, description: `${record.description} A new sentence about volcanic craters.` } : record));
  return { engine, files, buildMs: median(builds.map((build) => build.ms)), identical, changed: diffFiles(files, await engine.build(edited)) };
}

/** Keys added, removed or with other bytes. */
function diffFiles(before: TreeFile[], after: TreeFile[]): string[] {
  const old = new Map(before.map((file) => [file.key, file.body]));
  const now = new Map(after.map((file) => [file.key, file.body]));
  const keys = new Set([...old.keys(), ...now.keys()]);
  return [...keys]
    .filter((key) => {
      const [a, b] = [old.get(key), now.get(key)];
      return !a || !b || !Buffer.from(a).equals(Buffer.from(b));
    })
    .sort();
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;
const ms = (value: number) => `${value.toFixed(0)} ms`;

/**
 * Full-text search over 10,000 datasets, geoshelf's own index against Pagefind from the same records: build
 * time, size, files an edit rewrites, then in headless Chromium over loopback the time to the first results
 * and the bytes each query transfers (brotli sizes, as the static tree serves them).
 */
export async function benchSearch(bench: BenchContext): Promise<void> {
  bench.section('Search (10,000 datasets): geoshelf\'s index against Pagefind 1.6');
  const records = makeSearchRecords(DATASETS);
  const built: Built[] = [];
  for (const engine of [OURS, PAGEFIND]) built.push(await buildEngine(engine, records));
  await closePagefind();
  const sites: { built: Built; origin: string; served: Map<string, number>; server: Server }[] = [];
  for (const entry of built) {
    const dir = join(bench.root, 'search', entry.engine.name);
    const served = await writeSite(dir, [...entry.files, ...(await entry.engine.page(bench.repo))]);
    const server = createServer(sirv(dir, { brotli: true, gzip: true, etag: true })).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    sites.push({ built: entry, served, server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` });
  }
  for (const { built: entry, served } of sites) reportBuild(bench, entry, served);
  const browser = await startChromium();
  try {
    const measured = await measureEngines(browser, sites);
    for (const [index, { built: entry }] of sites.entries()) {
      const result = measured[index]!;
      bench.report(`page load to search ready, ${entry.engine.name}`, ms(result.loadMs), `${kb(result.loadBytes)} transferred once per page (page, script, ${entry.engine === OURS ? 'meta.json' : 'wasm and metadata'})`);
    }
    for (const [position, query] of QUERIES.entries()) {
      for (const [index, { built: entry }] of sites.entries()) {
        const figure = measured[index]!.figures[position]!;
        bench.report(
          `“${query}”, ${entry.engine.name}`,
          `first results ${ms(figure.coldFirstMs)} cold, ${ms(figure.typedFirstMs)} after typing`,
          `${figure.count} hits; ${kb(figure.coldBytes)} in ${figure.coldRequests} requests; all ${SHOWN} shown in ${ms(figure.coldMs)} cold, ${ms(figure.warmMs)} warm`,
        );
      }
    }
    for (const [index, { built: entry }] of sites.entries()) {
      const figures = measured[index]!.figures;
      const worst = (pick: (figure: QueryFigure) => number) => Math.max(...figures.map(pick));
      bench.report(
        `first results after load, ${entry.engine.name}`,
        `median ${ms(median(figures.map((figure) => figure.coldFirstMs)))} cold, ${ms(median(figures.map((figure) => figure.typedFirstMs)))} after typing`,
        `worst ${ms(worst((figure) => figure.coldFirstMs))} cold, ${ms(worst((figure) => figure.typedFirstMs))} after typing; ≤ ${kb(worst((figure) => figure.coldBytes))} per query; target ≤ 100 ms and ≤ 100 KB`,
      );
    }
    bench.report('machine load (1-minute average) at the end', loadavg()[0]!.toFixed(1), `${availableParallelism()} CPUs; browser timings stretch with it`);
  } finally {
    await browser.close();
    for (const site of sites) site.server.close();
  }
}

function reportBuild(bench: BenchContext, entry: Built, served: Map<string, number>): void {
  const { engine, files } = entry;
  const raw = files.reduce((sum, file) => sum + file.body.byteLength, 0);
  const wire = files.reduce((sum, file) => sum + served.get(`/${file.key}`)!, 0);
  const largest = Math.max(...files.filter((file) => /\/t\/|\.pf_index$/.test(file.key)).map((file) => served.get(`/${file.key}`)!));
  const meta = files.find((file) => /search\/meta\.json$|\.pf_meta$/.test(file.key))!;
  bench.report(`index build, 10k datasets, ${engine.name} (median of 3)`, `${(entry.buildMs / 1000).toFixed(2)} s`, `the three builds gave ${entry.identical ? 'identical' : 'DIFFERENT'} bytes`);
  bench.report(`index size, ${engine.name}`, `${files.length} files, ${(wire / 1e6).toFixed(2)} MB served`, `${(raw / 1e6).toFixed(1)} MB uncompressed; metadata ${kb(served.get(`/${meta.key}`)!)}, largest posting chunk ${kb(largest)} (served sizes)`);
  const shown = entry.changed.length <= 8 ? `: ${entry.changed.map((key) => key.replace(/^_site\//, '')).join(', ')}` : '';
  bench.report(`files rewritten after one description edit, ${engine.name}`, `${entry.changed.length}`, `added, removed or changed${shown}`);
}

interface QueryFigure {
  /** Query to the first result's data, and to all shown results, with nothing of the query loaded yet. */
  coldFirstMs: number;
  coldMs: number;
  coldBytes: number;
  coldRequests: number;
  /** The same after the chunks were preloaded during a 120 ms typing pause, as the search page does. */
  typedFirstMs: number;
  /** The same query again, everything in memory. */
  warmMs: number;
  count: number;
}

type QueryTiming = { first: number; all: number; count: number };

/** Counts the served bytes (brotli sizes, see `servedBytes`) of every request the page makes. */
function countBytes(page: Page, served: Map<string, number>): { take: () => Promise<{ bytes: number; requests: number }> } {
  let bytes = 0;
  let requests = 0;
  page.on('requestfinished', (request) => {
    bytes += served.get(new URL(request.url()).pathname) ?? 0;
    requests += 1;
  });
  return {
    async take() {
      // Playwright reports a finished request a moment after the page has its body; let the events arrive.
      await page.waitForTimeout(100);
      const taken = { bytes, requests };
      bytes = 0;
      requests = 0;
      return taken;
    },
  };
}

/** Opens the bench page in a fresh context (empty cache) and waits until the engine is ready to search. */
async function openPage(browser: Browser, origin: string, served: Map<string, number>) {
  const page = await (await browser.newContext()).newPage();
  const counter = countBytes(page, served);
  const started = performance.now();
  await page.goto(`${origin}/index.html`);
  await page.waitForSelector('body[data-ready]', { state: 'attached' });
  const loadMs = performance.now() - started;
  return { page, counter, loadMs, loadBytes: (await counter.take()).bytes };
}

function runQuery(page: Page, query: string, typed: boolean): Promise<QueryTiming> {
  return page.evaluate(([q, t]) => (window as unknown as { runQuery: (q: string, t: boolean) => Promise<QueryTiming> }).runQuery(q, t), [query, typed] as const);
}

/**
 * Every query, ROUNDS times, on both engines: cold on a fresh page, again warm, and on another fresh page
 * after a typing pause. The engines take turns within each round, so a busy moment falls on both.
 */
async function measureEngines(browser: Browser, sites: { origin: string; served: Map<string, number> }[]) {
  const loads = sites.map(() => [] as { loadMs: number; loadBytes: number }[]);
  const figures = sites.map(() => [] as QueryFigure[]);
  for (const query of QUERIES) {
    const rounds = sites.map(() => [] as QueryFigure[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, site] of sites.entries()) {
        const opened = await openPage(browser, site.origin, site.served);
        loads[index]!.push(opened);
        const cold = await runQuery(opened.page, query, false);
        const transfer = await opened.counter.take();
        const warm = await runQuery(opened.page, query, false);
        await opened.page.context().close();
        const again = await openPage(browser, site.origin, site.served);
        const typed = await runQuery(again.page, query, true);
        await again.page.context().close();
        rounds[index]!.push({ coldFirstMs: cold.first, coldMs: cold.all, coldBytes: transfer.bytes, coldRequests: transfer.requests, typedFirstMs: typed.first, warmMs: warm.all, count: cold.count });
      }
    }
    for (const [index, measured] of rounds.entries()) {
      const typical = (pick: (figure: QueryFigure) => number) => median(measured.map(pick));
      figures[index]!.push({ ...measured[0]!, coldFirstMs: typical((f) => f.coldFirstMs), coldMs: typical((f) => f.coldMs), typedFirstMs: typical((f) => f.typedFirstMs), warmMs: typical((f) => f.warmMs) });
    }
  }
  return sites.map((_, index) => ({ loadMs: median(loads[index]!.map((load) => load.loadMs)), loadBytes: median(loads[index]!.map((load) => load.loadBytes)), figures: figures[index]! }));
}
