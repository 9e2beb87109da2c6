/**
 * `npm run bench -- server-scale`: the server over 10k and 100k datasets × 3 files, each in a process of its own
 * (bench/serve.ts) over a tree that holds the model and no prebuilt file (bench/model-tree-child.ts): its start
 * until it listens and until its first STAC search is answered, its RSS, STAC `q` over HTTP (the searches of
 * `stac-q-scale`), and the longest wait of requests sent back to back while it reloads after a one-dataset edit.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSyntheticCatalog, createRandom, WORDS } from './synthetic-catalog.ts';
import type { BenchContext } from './run.ts';

const TARGETS = { rssBytes: 1.5e9, readyMs: 10_000, p99Ms: 20, reloadWaitMs: 100 };

interface Figures {
  listenMs: number;
  readyMs: number;
  rssBytes: number;
  peakRssBytes: number;
  p50: number;
  p99: number;
  reloadWaitMs: number;
  baselineWaitMs: number;
  reloaded: boolean;
}

export async function benchServerScale(bench: Pick<BenchContext, 'repo' | 'root' | 'section' | 'report'>): Promise<void> {
  bench.section('The server at 10k and 100k datasets × 3 files: memory, start, STAC q over HTTP, a reload after an edit');
  const results: Figures[] = [];
  for (const datasets of [10_000, 100_000]) {
    const root = join(bench.root, `server-${datasets}`);
    const catalogDir = join(root, 'catalog');
    const distDir = join(root, 'dist');
    await writeSyntheticCatalog({ dir: catalogDir, datasets, filesPerDataset: 3, collections: datasets / 500, sampleCatalogDir: join(bench.repo, 'catalog-data') });
    execFileSync(process.execPath, ['--max-old-space-size=16000', join(bench.repo, 'bench', 'model-tree-child.ts'), 'write', catalogDir, join(bench.repo, 'catalog-data', 'data'), distDir], { stdio: 'inherit' });
    const figures = await measureServer(bench.repo, catalogDir, distDir);
    results.push(figures);
    const size = `${datasets / 1000}k × 3`;
    const met = (ok: boolean) => (ok ? 'met' : 'missed');
    const large = datasets === 100_000;
    bench.report(`${size}: start until listening / until the first STAC q is answered`, `${(figures.listenMs / 1000).toFixed(1)} s / ${(figures.readyMs / 1000).toFixed(1)} s`, large ? `target ≤ 10 s to ready: ${met(figures.readyMs <= TARGETS.readyMs)}` : '');
    bench.report(`${size}: server RSS, ready / peak`, `${(figures.rssBytes / 2 ** 30).toFixed(2)} / ${(figures.peakRssBytes / 2 ** 30).toFixed(2)} GiB`, large ? `target ≤ 1.5 GB: ${met(figures.peakRssBytes <= TARGETS.rssBytes)}` : '');
    bench.report(`${size}: STAC q over HTTP, p50 / p99`, `${figures.p50.toFixed(1)} / ${figures.p99.toFixed(1)} ms`, `1,000 searches, one at a time${large ? `; target p99 ≤ 20 ms: ${met(figures.p99 <= TARGETS.p99Ms)}` : ''}`);
    bench.report(`${size}: longest wait of a request during a reload after one edit`, `${figures.reloadWaitMs.toFixed(0)} ms`, `${figures.reloaded ? 'the edit was served after it' : 'THE EDIT WAS NOT SERVED'}; ${figures.baselineWaitMs.toFixed(1)} ms longest before the edit${large ? `; target ≤ 100 ms: ${met(figures.reloadWaitMs <= TARGETS.reloadWaitMs)}` : ''}`);
  }
  const [small, large] = results as [Figures, Figures];
  bench.report('10k → 100k growth: ready / peak RSS / q p99 / reload wait', `${(large.readyMs / small.readyMs).toFixed(1)}× / ${(large.peakRssBytes / small.peakRssBytes).toFixed(1)}× / ${(large.p99 / small.p99).toFixed(1)}× / ${(large.reloadWaitMs / small.reloadWaitMs).toFixed(1)}×`, 'for 10× the datasets');
}

async function measureServer(repo: string, catalogDir: string, distDir: string): Promise<Figures> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const origin = `http://127.0.0.1:${port}`;
  const env = { ...process.env, GEOSHELF_DIST_DIR: distDir, GEOSHELF_CATALOG_DIR: catalogDir, GEOSHELF_DATA_DIR: join(repo, 'catalog-data', 'data'), GEOSHELF_BASE_URL: 'https://catalog.example.org', PORT: String(port), BENCH_RELOAD_MS: '250', GEOSHELF_QUERY_KEYS: '' };
  const started = performance.now();
  const child = spawn(process.execPath, [join(repo, 'bench', 'serve.ts')], { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  try {
    await once(child, 'message');
    const listenMs = performance.now() - started;
    await (await fetch(`${origin}/stac/api/search?q=river&limit=1`)).arrayBuffer();
    const readyMs = performance.now() - started;
    const rssBytes = memoryOf(child.pid!, 'VmRSS');
    const random = createRandom(5);
    const word = () => {
      const whole = WORDS[Math.floor(random() * WORDS.length)]!.toLowerCase();
      return random() < 0.1 ? whole.slice(0, 2 + Math.floor(random() * (whole.length - 1))) : whole;
    };
    const queries = Array.from({ length: 1100 }, (_, k) => Array.from({ length: 1 + (k % 3) }, () => Array.from({ length: 1 + ((k >> 2) % 3) }, word).join(' ')).join(','));
    const times: number[] = [];
    for (const [k, q] of queries.entries()) {
      const at = performance.now();
      const response = await fetch(`${origin}/stac/api/search?q=${encodeURIComponent(q)}`);
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`a search answered ${response.status}`);
      if (k >= 100) times.push(performance.now() - at);
    }
    times.sort((a, b) => a - b);
    const longestWait = async (until: () => boolean, ms: number) => {
      let longest = 0;
      const end = performance.now() + ms;
      while (performance.now() < end && !until()) {
        const at = performance.now();
        await (await fetch(`${origin}/api/health`)).arrayBuffer();
        longest = Math.max(longest, performance.now() - at);
      }
      return longest;
    };
    const baselineWaitMs = await longestWait(() => false, 2000);
    // The edit lands while requests go back to back; they go on until the server answers with it, or for 60 s.
    const editedId = Number(JSON.parse(readFileSync(join(distDir, '_geoshelf', 'model.json'), 'utf8')).collections[0].datasets[0]);
    const description = `Edited while the server ran, ${Date.now()}.`;
    const edit = spawn(process.execPath, [join(repo, 'bench', 'model-tree-child.ts'), 'edit', distDir, String(editedId), description], { stdio: 'inherit' });
    await once(edit, 'exit');
    let reloaded = false;
    const check = setInterval(() => {
      void fetch(`${origin}/api/datasets/${editedId}`).then((response) => response.text()).then((text) => {
        if (text.includes(description)) reloaded = true;
      }, () => undefined);
    }, 50);
    const reloadWaitMs = await longestWait(() => reloaded, 60_000);
    clearInterval(check);
    return { listenMs, readyMs, rssBytes, peakRssBytes: memoryOf(child.pid!, 'VmHWM'), p50: times[Math.floor(times.length / 2)]!, p99: times[Math.floor(times.length * 0.99)]!, reloadWaitMs, baselineWaitMs, reloaded };
  } finally {
    child.kill();
  }
}

/** A line of /proc/<pid>/status, in bytes (VmRSS: now; VmHWM: the peak). */
function memoryOf(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((text) => text.startsWith(`${field}:`))!;
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}
