import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { buildCatalog } from '../generator/build.ts';
import type { Config } from '../runtime/config.ts';
import { loadSnapshot } from '../server/catalog.ts';
import { QueryPool, type PoolOptions } from '../query/pool.ts';
import type { QueryTask, TaskOutcome } from '../query/protocol.ts';
import { benchConfig } from './build-bench.ts';
import { writePointsCatalog } from './query-bench.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';

const PORT = 18_090;
const KEYS = 'k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE';
/** A small aggregate: 60–120 ms alone. */
const LIGHT_SQL = 'SELECT colour, count(*) AS n FROM points GROUP BY colour ORDER BY colour';
/** A heavy aggregate: 800 million comparisons, several seconds alone. */
const SLOW_SQL = 'SELECT count(*) AS n FROM points a, (SELECT score FROM points LIMIT 800) b WHERE a.score < b.score';
const TILE_SQL = 'SELECT id, colour, geometry, bbox FROM points';
/** All 256 tiles of z=4, row by row. */
const Z4_TILES = Array.from({ length: 256 }, (_, index) => ({ x: index % 16, y: Math.floor(index / 16) }));

/** One scenario's answers: a status (or error code) and a latency per request. */
interface Answers {
  statuses: string[];
  ms: number[];
}

/** Runs `count` calls of `send`, at most `concurrency` at once. */
async function runLimited(count: number, concurrency: number, send: (index: number) => Promise<string>): Promise<Answers> {
  const answers: Answers = { statuses: Array(count), ms: Array(count) };
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, async () => {
    while (next < count) {
      const index = next++;
      const started = performance.now();
      answers.statuses[index] = await send(index);
      answers.ms[index] = performance.now() - started;
    }
  }));
  return answers;
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? NaN;
}

/** "200 × 98, 503 × 2" */
function countStatuses(statuses: string[]): string {
  const counts = new Map<string, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return [...counts].sort().map(([status, count]) => `${status} × ${count}`).join(', ');
}

const latency = (ms: number[]) => `p50 ${percentile(ms, 0.5).toFixed(0)} ms, p95 ${percentile(ms, 0.95).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms`;

/** The three load scenarios, against any way of sending a light query, a tile or a slow query. */
interface Target {
  light: () => Promise<string>;
  /** A fresh query's tiles, so that no tile comes from a cache. */
  tiles: () => Promise<(x: number, y: number) => Promise<string>>;
  slow: () => Promise<string>;
}

async function runScenarios(bench: BenchContext, label: string, target: Target, budget: string): Promise<void> {
  for (let index = 0; index < 4; index++) await target.light();
  const burst = await runLimited(100, 50, () => target.light());
  bench.report(`${label}: 100 light queries, 50 at once`, countStatuses(burst.statuses), `${latency(burst.ms)}${budget}`);
  const tile = await target.tiles();
  const tiles = await runLimited(256, 256, (index) => tile(Z4_TILES[index]!.x, Z4_TILES[index]!.y));
  bench.report(`${label}: 256 tiles of one query at once (z=4)`, countStatuses(tiles.statuses), latency(tiles.ms));
  await lightBehindSlow(bench, label, target, 2, 'a new slow query');
  await lightBehindSlow(bench, label, target, 4, 'the same slow query again, now known to be slow');
}

/** `count` slow queries sent at once, then, a second later, 10 light queries at once. */
async function lightBehindSlow(bench: BenchContext, label: string, target: Target, count: number, what: string): Promise<void> {
  const slow = Array.from({ length: count }, async () => {
    const started = performance.now();
    return { status: await target.slow(), ms: performance.now() - started };
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const light = await runLimited(10, 10, () => target.light());
  const slowAnswers = await Promise.all(slow);
  bench.report(`${label}: 10 light queries while ${count} slow ones run (${what})`, countStatuses(light.statuses),
    `each: ${light.ms.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s; p50 ${percentile(light.ms, 0.5).toFixed(0)} ms, max ${Math.max(...light.ms).toFixed(0)} ms; `
    + `slow ones: ${slowAnswers.map(({ status, ms }) => `${status} in ${(ms / 1000).toFixed(1)} s`).join(', ')}`);
}

/** A one-dataset catalog over the synthetic 1M-point file, built into the bench folder. */
async function buildLoadCatalog(bench: BenchContext): Promise<Config> {
  const dataDir = join(bench.root, 'points-data');
  await mkdir(dataDir, { recursive: true });
  if (!existsSync(join(dataDir, 'points-1m.parquet'))) await writeSyntheticPoints(join(dataDir, 'points-1m.parquet'), 1_000_000);
  const catalogDir = join(bench.root, 'load-catalog');
  await writePointsCatalog(catalogDir, bench.repo, [{ slug: 'points', path: 'points-1m.parquet' }]);
  const config = { ...benchConfig(bench.root, catalogDir, dataDir, 'load-dist'), queryKeys: KEYS };
  await buildCatalog({ config });
  return config;
}

/** The query service as `npm run serve` runs it (default settings), in its own process on 127.0.0.1. */
async function startServer(config: Config): Promise<ChildProcess> {
  const env = {
    ...process.env, PORT: String(PORT), GEOSHELF_DIST_DIR: config.distDir, GEOSHELF_DATA_DIR: config.dataDir, GEOSHELF_CATALOG_DIR: config.catalogDir,
    GEOSHELF_CACHE_DIR: config.cacheDir, GEOSHELF_QUERY_KEYS: KEYS, CI: 'true',
  };
  const child = fork(new URL('./serve.ts', import.meta.url), [], { env, stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
  return child;
}

/** An HTTP target on 127.0.0.1: POST /api/queries and GET tiles, answering the status. */
function httpTarget(source: unknown): Target {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => new Promise<{ status: number; text: string }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const call = request({ host: '127.0.0.1', port: PORT, method, path, agent, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    call.on('error', reject);
    call.end(payload);
  });
  const query = (sql: string, limit = 10) => send('POST', '/api/queries', { sources: [source], sql, limit });
  return {
    light: async () => String((await query(LIGHT_SQL)).status),
    slow: async () => String((await query(SLOW_SQL)).status),
    tiles: async () => {
      const created = await query(TILE_SQL, 1);
      if (created.status !== 200) throw new Error(`the tile query answered ${created.status}: ${created.text}`);
      const { query_id: id, query_token: token } = JSON.parse(created.text) as { query_id: string; query_token: string };
      return async (x, y) => String((await send('GET', `/api/queries/${id}/tiles/4/${x}/${y}.mvt`, undefined, { 'x-service-query-token': token })).status);
    },
  };
}

/** A target straight on a worker pool, for comparing pool designs without HTTP. */
function poolTarget(pool: QueryPool, config: Config): Target {
  const base = {
    sources: [{ alias: 'points', path: join(config.dataDir, 'points-1m.parquet') }], geometryColumn: undefined,
    settings: { threads: config.queryThreads, memoryLimitMb: config.queryMemoryMb, maxResponseBytes: config.queryMaxResponseBytes, tileMaxFeatures: config.tileMaxFeatures },
  };
  const status = (outcome: TaskOutcome) => (outcome.ok ? '200' : String(outcome.error.status));
  const page = (sql: string): QueryTask => ({ ...base, kind: 'page', sql, offset: 0, limit: 10, resultCrs: undefined });
  let round = 0;
  return {
    light: async () => status(await pool.run(page(LIGHT_SQL))),
    slow: async () => status(await pool.run(page(SLOW_SQL))),
    tiles: async () => {
      // A new cost key per round, as a new query would have.
      const costKey = `round-${round++}`;
      return async (x, y) => {
        const outcome = await pool.run({ ...base, costKey, kind: 'tile', sql: TILE_SQL, z: 4, x, y });
        return outcome.ok && 'features' in outcome.value && outcome.value.features === 0 ? '204' : status(outcome);
      };
    },
  };
}

/** Pool designs compared, each on the three scenarios: from today's fixed queue to the defaults. */
const VARIANTS: [string, Partial<PoolOptions>][] = [
  ['queue of 16, no spares, no tile batches (the old admission)', { queue: 16, spareWorkers: 0, maxTileBatch: 1 }],
  ['admission by expected wait, no spares, no tile batches', { spareWorkers: 0, maxTileBatch: 1 }],
  ['+ tile batches, no spares', { spareWorkers: 0 }],
  ['4 workers, no spares (more processes instead)', { workers: 4, spareWorkers: 0 }],
  ['+ 2 spare workers (the defaults)', {}],
];

/**
 * Load on the query service over HTTP on 127.0.0.1 (a burst of light queries, a map's worth of tiles at once,
 * light queries behind slow ones), then the same scenarios straight on the worker pool for several designs.
 */
export async function benchQueryLoad(bench: BenchContext): Promise<void> {
  const config = await buildLoadCatalog(bench);
  bench.section(`Query load on 1,000,000 points over HTTP (127.0.0.1, ${config.queryWorkers} workers, default settings)`);
  const server = await startServer(config);
  try {
    const ids = loadSnapshot(config.distDir, { budgetBytes: 1 << 20, cacheMaxAge: 0 }).context.index.collections.get('bench')!.collection.datasets[0]!;
    const source = { alias: 'points', collection_id: ids.collection_id, dataset_id: ids.id, file_id: ids.files[0]!.id, file_source_id: ids.files[0]!.formats[0]!.sources[0]!.id };
    const target = httpTarget(source);
    const alone: number[] = [];
    for (let index = 0; index < 10; index++) {
      const started = performance.now();
      await target.light();
      alone.push(performance.now() - started);
    }
    bench.report('one light query alone (baseline)', `${percentile(alone, 0.5).toFixed(0)} ms`, `p50 of 10; ${LIGHT_SQL}`);
    await runScenarios(bench, 'HTTP', target, '; target all 200');
  } finally {
    server.kill('SIGTERM');
  }
  bench.section('Query load straight on the worker pool: designs compared on the same scenarios');
  for (const [label, options] of VARIANTS) {
    const pool = new QueryPool({ workers: config.queryWorkers, queue: config.queryQueue, timeoutMs: config.queryTimeoutMs, memoryCapMb: config.queryMemoryMb + 512, ...options });
    await pool.ready();
    try {
      await runScenarios(bench, label, poolTarget(pool, config), '');
    } finally {
      await pool.close();
    }
  }
}
