import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_LIST_LIMIT } from '../core/constants.ts';
import { settingsEnvironment, type Config } from '../runtime/config.ts';
import { hasCommand } from '../scripts/fleet.ts';
import { loadSnapshot } from '../server/catalog.ts';
import { benchConfig, median } from './build-bench.ts';
import { writePointsCatalog } from './query-bench.ts';
import type { BenchContext } from './run.ts';
import { WORDS } from './synthetic-catalog.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';
import { countFailures, REPLAY_SCRIPT, requestsPerSecond, startWrk, type WrkFigures } from './wrk.ts';

const PORT = 18_095;
const KEYS = 'k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE';
/** Catalog readers: one wrk thread (the machine has two cores, shared with the server and the build), 16 connections. */
const READS = { threads: 1, connections: 16 };
/** Light queries: two at a time, a steady trickle beside the reads. */
const QUERIES = { threads: 1, connections: 2 };
const IDLE_SECONDS = 20;
const INCREMENTAL_SECONDS = 30;
/**
 * Load kept on after a build ends: the server looks for a new manifest every 2 s, then loads it, which takes seconds
 * at 10k datasets. Requests still waiting when wrk stops are never counted, so the phase also waits for the server
 * to answer a health check before stopping wrk.
 */
const TAIL_SECONDS = 20;
/** The dataset the incremental phase edits. */
const EDITED = join('datasets', 'collection-3', 'dataset-43.yaml');

/** A phase's figures: catalog reads, light queries, and the times of the builds that ran meanwhile. */
interface Phase {
  label: string;
  reads: WrkFigures;
  queries: WrkFigures;
  builds: number[];
}

/** The environment that makes `loadConfig()` in a child process give back `config`. */
function environmentOf(config: Config): NodeJS.ProcessEnv {
  return { ...process.env, ...settingsEnvironment(config) };
}

/**
 * A copy of the builds section's 10k-dataset synthetic catalog plus the one-dataset `bench` collection over the
 * 1M-point file, with its own data folder and dist, so rebuilding it here leaves the kept trees alone.
 */
async function prepareCatalog(bench: BenchContext): Promise<Config> {
  const root = join(bench.root, 'build-load');
  const synthetic = bench.kept('synthetic');
  const catalogDir = join(root, 'catalog');
  const dataDir = join(root, 'data');
  await cp(synthetic.catalogDir, catalogDir, { recursive: true });
  await cp(synthetic.dataDir, dataDir, { recursive: true });
  await writeSyntheticPoints(join(dataDir, 'points-1m.parquet'), 1_000_000);
  await writePointsCatalog(catalogDir, bench.repo, [{ slug: 'points', path: 'points-1m.parquet' }]);
  return { ...benchConfig(root, catalogDir, dataDir), queryKeys: KEYS, host: '127.0.0.1', port: PORT };
}

/** Runs `npm run build` (with `--full`: every file rewritten, caches ignored) as its own process; resolves its time in ms. */
async function runBuild(bench: BenchContext, config: Config, full: boolean): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [join(bench.repo, 'generator', 'cli.ts'), ...(full ? ['--full'] : [])], { env: environmentOf(config), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the build exited with ${code}: ${stderr.slice(-2000)}`);
  return performance.now() - started;
}

/** Edits the description of one dataset, a little differently each round, and rebuilds incrementally. */
async function editAndBuild(bench: BenchContext, config: Config, round: number): Promise<number> {
  const path = join(config.catalogDir, EDITED);
  const record = await readFile(path, 'utf8');
  await writeFile(path, record.replace(/description: >-\n(  Edited in round \d+\.\n)?/, `description: >-\n  Edited in round ${round}.\n`));
  return runBuild(bench, config, false);
}

/** `npm run serve` (server/main.ts --no-build, reloading the tree when its manifest changes) in its own process. */
async function startServer(bench: BenchContext, config: Config): Promise<ChildProcess> {
  const log = openSync(join(bench.root, 'build-load', 'server.log'), 'a');
  const child = spawn(process.execPath, [join(bench.repo, 'server', 'main.ts'), '--no-build'], { env: environmentOf(config), stdio: ['ignore', log, log] });
  for (let waited = 0; waited < 120_000; waited += 250) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}; see server.log`);
    if (await fetch(`http://127.0.0.1:${PORT}/api/health`).then((response) => response.ok, () => false)) return child;
    await sleep(250);
  }
  child.kill();
  throw new Error('the server did not answer /api/health within 120 s');
}

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(`http://127.0.0.1:${PORT}${path}`);
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`);
  return response.json() as Promise<T>;
}

interface DatasetDetail {
  dataset: { id: number; collection_id: number; files: { id: number; slug: string; formats: { sources: { id: number }[] }[] }[] };
}

/**
 * Real catalog paths of the served tree, a mix of what readers ask for: entry documents; per collection the first
 * and second listing pages, a tag slice, prebuilt and computed searches and the tags; per dataset (five of each
 * collection) the detail, by id, a file, its schema, its STAC Item and its OGC collection. All answer 200.
 */
async function collectCatalogPaths(): Promise<string[]> {
  const paths = ['/api', '/api/collections', '/api/datasets', '/api/datasets/stats', '/stac/api', '/features'];
  const collections = await getJson<{ slug: string }[]>('/api/collections');
  // The `bench` collection only holds the points that the light queries read.
  for (const { slug } of collections.filter((collection) => collection.slug !== 'bench')) {
    const base = `/api/collections/${slug}`;
    paths.push(base, `${base}?offset=${DEFAULT_LIST_LIMIT}`, `${base}?${new URLSearchParams({ tag_filters: 'categories:transport' })}`, `${base}/datasets/tags`);
    for (const search of [WORDS[0]!, WORDS[7]!, `${WORDS[1]} ${WORDS[9]}`]) paths.push(`${base}?${new URLSearchParams({ search })}`);
    const listing = await getJson<{ datasets: { slug: string }[] }>(base);
    for (const { slug: dataset } of listing.datasets.slice(0, 5)) {
      const detailPath = `${base}/datasets/${dataset}`;
      const { dataset: detail } = await getJson<DatasetDetail>(detailPath);
      const file = detail.files[0]!.slug;
      paths.push(detailPath, `/api/datasets/${detail.id}`, `${detailPath}/files/${file}`, `${detailPath}/files/${file}/schema`,
        `/stac/api/collections/${slug}.${dataset}/items/${file}`, `/features/collections/${slug}.${dataset}.${file}`);
    }
  }
  for (const path of paths) await getJson(path);
  return paths;
}

/** Light queries on the 1M points: `SELECT id, score … WHERE score > t LIMIT 10` for 100 thresholds, as POST /api/queries bodies. */
async function lightQueryBodies(): Promise<string[]> {
  const { dataset } = await getJson<DatasetDetail>('/api/collections/bench/datasets/points');
  const file = dataset.files[0]!;
  const source = { alias: 'points', collection_id: dataset.collection_id, dataset_id: dataset.id, file_id: file.id, file_source_id: file.formats[0]!.sources[0]!.id };
  return Array.from({ length: 100 }, (_, index) => JSON.stringify({ sources: [source], sql: `SELECT id, score FROM points WHERE score > ${index * 9.5} LIMIT 10`, limit: 10 }));
}

/** Runs catalog reads and light queries together while `during` runs (resolving build times), then `tailSeconds` more. */
async function runPhase(files: { reads: string; queries: string }, label: string, during: () => Promise<number[]>, tailSeconds = TAIL_SECONDS): Promise<Phase> {
  const url = `http://127.0.0.1:${PORT}`;
  const reads = startWrk({ url, script: REPLAY_SCRIPT, args: [files.reads], ...READS, seconds: 3600 });
  const queries = startWrk({ url, script: REPLAY_SCRIPT, args: [files.queries], ...QUERIES, seconds: 3600 });
  let builds: number[];
  try {
    builds = await during();
    await sleep(tailSeconds * 1000);
    await fetch(`http://127.0.0.1:${PORT}/api/health`);
  } finally {
    reads.stop();
    queries.stop();
  }
  return { label, reads: await reads.result, queries: await queries.result, builds };
}


const ms = (us: number) => `${(us / 1000).toFixed(us < 10_000 ? 2 : 0)} ms`;

function describe(figures: WrkFigures, idle: WrkFigures | undefined): string {
  const busy = figures.statuses['503'] ?? 0;
  const versus = idle ? `, ${(figures.p99_us / idle.p99_us).toFixed(1)}× idle p99` : '';
  return `p50 ${ms(figures.p50_us)}, p90 ${ms(figures.p90_us)}, max ${ms(figures.max_us)}${versus}; ${Math.round(requestsPerSecond(figures))} req/s over ${(figures.duration_us / 1e6).toFixed(0)} s; `
    + `errors ${countFailures(figures) - busy} (non-2xx but 503, socket errors, timeouts), 503 ${busy}`;
}

function reportPhase(bench: BenchContext, phase: Phase, idle: Phase | undefined, alone: number | undefined): void {
  bench.report(`${phase.label}: catalog reads, p99 (wrk -t${READS.threads} -c${READS.connections})`, ms(phase.reads.p99_us), describe(phase.reads, idle?.reads));
  bench.report(`${phase.label}: light queries, p99 (wrk -t${QUERIES.threads} -c${QUERIES.connections})`, ms(phase.queries.p99_us), describe(phase.queries, idle?.queries));
  if (alone === undefined || phase.builds.length === 0) return;
  const loaded = median(phase.builds);
  bench.report(`${phase.label}: build time under load / alone`, `${(loaded / alone).toFixed(2)}×`,
    `${(loaded / 1000).toFixed(2)} s against ${(alone / 1000).toFixed(2)} s alone${phase.builds.length > 1 ? ` (medians; ${phase.builds.length} builds under load)` : ''}`);
}

/**
 * Catalog reads and light queries against `npm run serve` on the 10k-dataset catalog (plus 1M points to query),
 * with wrk, in three phases: idle, during a full rebuild into the served dist/, and during a loop of one-dataset
 * rebuilds. The server, the builds and each wrk are separate processes; the server reloads each new build.
 */
export async function benchLoadWhileBuilding(bench: BenchContext): Promise<void> {
  bench.section(`Load while building: 10k × 3 catalog served by npm run serve, catalog reads wrk -t${READS.threads} -c${READS.connections}, light queries wrk -t${QUERIES.threads} -c${QUERIES.connections}`);
  if (!hasCommand('wrk')) {
    bench.report('skipped', '-', 'needs Debian\'s wrk: apt-get install -y wrk');
    return;
  }
  const config = await prepareCatalog(bench);
  await runBuild(bench, config, false);
  const fullAlone = await runBuild(bench, config, true);
  const incrementalAlone = median(await sequence(3, (round) => editAndBuild(bench, config, round)));
  const loadStarted = performance.now();
  loadSnapshot(config.distDir, { budgetBytes: config.staticCacheMb * 2 ** 20, cacheMaxAge: config.cacheMaxAge });
  bench.report('loading the served build (manifest, model, index, body cache)', `${((performance.now() - loadStarted) / 1000).toFixed(2)} s`,
    'what the server does synchronously, on its one thread, when it notices a new manifest');
  const server = await startServer(bench, config);
  try {
    const files = { reads: join(bench.root, 'build-load', 'reads.tsv'), queries: join(bench.root, 'build-load', 'queries.tsv') };
    const paths = await collectCatalogPaths();
    await writeFile(files.reads, paths.map((path) => `GET\t${path}\n`).join(''));
    await writeFile(files.queries, (await lightQueryBodies()).map((body) => `POST\t/api/queries\t${body}\n`).join(''));
    bench.report('catalog paths cycled', `${paths.length}`, 'entry documents, listing pages, tag and search slices (prebuilt and computed), tags, dataset details, files, schemas, STAC Items, OGC collections; Accept-Encoding: br, gzip');
    await runPhase(files, 'warm-up', async () => [], 5);
    const idle = await runPhase(files, 'idle', async () => [], IDLE_SECONDS);
    reportPhase(bench, idle, undefined, undefined);
    const full = await runPhase(files, 'full rebuild (--full)', async () => [await runBuild(bench, config, true)]);
    reportPhase(bench, full, idle, fullAlone);
    const incremental = await runPhase(files, 'one-dataset rebuilds in a loop', async () => {
      const times: number[] = [];
      for (const started = performance.now(); performance.now() - started < INCREMENTAL_SECONDS * 1000;) times.push(await editAndBuild(bench, config, times.length + 3));
      return times;
    });
    reportPhase(bench, incremental, idle, incrementalAlone);
  } finally {
    server.kill('SIGTERM');
  }
}

/** Runs `count` rounds one after the other; resolves their results. */
async function sequence<T>(count: number, run: (round: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let round = 0; round < count; round++) results.push(await run(round));
  return results;
}
