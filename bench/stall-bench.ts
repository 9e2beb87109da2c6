import { fork, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { MAX_FREE_TEXT_TERMS, MAX_INTERSECTS_POSITIONS, MAX_ITEM_LIMIT } from '../schemas/stac-api.ts';
import { createServer } from '../server/app.ts';
import { listen } from '../server/listen.ts';
import { findFreePort } from '../tests/helpers/web-app.ts';
import type { BenchContext } from './run.ts';
import type { AttackReport, StallOrder, StallRequest } from './stall-client.ts';

/** How long each request type is repeated while the event loop and health are measured. */
const ATTACK_MS = 4000;
/** The budget for the event loop: no request may hold it longer. */
const LOOP_BUDGET_MS = 50;
const KEYS = 'k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE';
const JSON_HEADERS = { 'content-type': 'application/json' };
const MCP_HEADERS = { ...JSON_HEADERS, accept: 'application/json, text/event-stream' };

type SourceRef = { alias: string; collection_id: number; dataset_id: number; file_id: number; file_source_id: number };

/** What the scenarios need from the running server: its origin and the ids of the sources they query. */
interface Scene {
  origin: string;
  cities: SourceRef;
  /** Makes a query and answers its id and token. */
  makeQuery: (sql: string) => Promise<{ id: string; token: string }>;
}

/** One kind of request, the heaviest a surface accepts, built against the running server. */
interface Scenario {
  name: string;
  build: (scene: Scene) => Promise<StallRequest[]>;
}

const post = (path: string, body: unknown, headers: Record<string, string> = JSON_HEADERS): StallRequest => ({ method: 'POST', path, headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
const words = (count: number) => Array.from({ length: count }, (_, index) => (index % 7 === 0 ? 'countries' : `w${index.toString(36)}`)).join(' ');

/** A closed ring of `vertices` points and the closing one, an ellipse 80° by 40° round (10, 10). */
function ellipse(vertices: number) {
  const ring = Array.from({ length: vertices }, (_, index) => {
    const angle = (2 * Math.PI * index) / vertices;
    return [10 + 40 * Math.cos(angle), 10 + 20 * Math.sin(angle)];
  });
  return { type: 'Polygon', coordinates: [[...ring, ring[0]]] };
}

const SCENARIOS: Scenario[] = [
  { name: 'nothing (baseline)', build: async () => [] },
  { name: '/api: a computed search of 1,000 words', build: async () => [{ method: 'GET', path: `/api/collections/geonames?search=${encodeURIComponent(words(1000))}` }] },
  { name: '/api/queries: a first page of 1,000 rows of 135k cities', build: async ({ cities }) => [post('/api/queries', { sources: [cities], sql: 'SELECT * FROM c ORDER BY population DESC', limit: 1000 })] },
  {
    name: '/api/queries: bounds and the z0 tile of 135k cities',
    build: async ({ makeQuery }) => {
      const { id, token } = await makeQuery('SELECT * FROM c');
      const headers = { 'x-service-query-token': token };
      return [{ method: 'GET', path: `/api/queries/${id}/bounds`, headers }, { method: 'GET', path: `/api/queries/${id}/tiles/0/0/0.mvt`, headers }];
    },
  },
  {
    name: '/api/queries: a GeoJSON download of 50,000 cities',
    build: async ({ makeQuery }) => {
      const { id, token } = await makeQuery('SELECT * FROM c ORDER BY city_id LIMIT 50000');
      return [{ method: 'GET', path: `/api/queries/${id}/download.geojson`, headers: { 'x-service-query-token': token } }];
    },
  },
  { name: `/stac/api/search: free text of ${MAX_FREE_TEXT_TERMS} one-letter prefixes, a page of ${MAX_ITEM_LIMIT}`, build: async () => [post('/stac/api/search', { q: 'abcdefghijklmnopqrstuvwxyz'.slice(0, MAX_FREE_TEXT_TERMS).split('').join(','), limit: MAX_ITEM_LIMIT })] },
  { name: '/stac/api/search: free text of 16,000 words (refused)', build: async () => [post('/stac/api/search', { q: words(16_000), limit: 10 })] },
  { name: `/stac/api/search: intersects a polygon of ${MAX_INTERSECTS_POSITIONS.toLocaleString('en')} positions`, build: async () => [post('/stac/api/search', { intersects: ellipse(MAX_INTERSECTS_POSITIONS - 1), limit: MAX_ITEM_LIMIT })] },
  { name: '/stac/api/search: 1 MiB of nested arrays (refused)', build: async () => [post('/stac/api/search', '['.repeat(512 * 1024) + ']'.repeat(512 * 1024))] },
  { name: '/features: 10,000 cities in one page', build: async () => [{ method: 'GET', path: '/features/collections/geonames.cities.cities-1000/items?limit=10000' }] },
  { name: '/mcp: tools/list', build: async () => [post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, MCP_HEADERS)] },
  {
    name: '/mcp: run_query of 1,000 rows',
    build: async ({ cities }) => [post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_query', arguments: { sources: [cities], sql: 'SELECT * FROM c ORDER BY population DESC', limit: 1000 } } }, MCP_HEADERS)],
  },
  { name: '/mcp: a batch of 100 tools/list', build: async () => [post('/mcp', Array.from({ length: 100 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/list' })), MCP_HEADERS)] },
];

/** A client process that has its orders; `go` starts it and resolves with what it reports when done. */
interface BenchClient<T> {
  child: ChildProcess;
  go: () => Promise<T>;
}

/** Starts a client process in a role, and resolves once it has taken its orders. */
async function startClient<T>(order: Exclude<StallOrder, 'go' | 'stop'>): Promise<BenchClient<T>> {
  const child = fork(new URL('./stall-client.ts', import.meta.url), [], { stdio: 'inherit' });
  const messages: unknown[] = [];
  let wake = () => undefined as void;
  child.on('message', (message) => {
    messages.push(message);
    wake();
  });
  const next = () => new Promise<unknown>((resolve, reject) => {
    if (messages.length > 0) return resolve(messages.shift());
    wake = () => resolve(messages.shift());
    child.once('exit', (code) => reject(new Error(`the bench client exited (${code}) before reporting`)));
  });
  child.send(order);
  await next();
  return { child, go: () => (child.send('go' satisfies StallOrder), next() as Promise<T>) };
}

function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

async function sourceOf(origin: string, collection: string, dataset: string, file: string, alias: string): Promise<SourceRef> {
  const detail = await (await fetch(`${origin}/api/collections/${collection}/datasets/${dataset}`)).json() as {
    collection: { id: number };
    dataset: { id: number; files: { id: number; slug: string; formats: { format: { format_type: string }; sources: { id: number }[] }[] }[] };
  };
  const target = detail.dataset.files.find((candidate) => candidate.slug === file)!;
  const source = target.formats.find((format) => format.format.format_type === 'geoparquet')!.sources[0]!;
  return { alias, collection_id: detail.collection.id, dataset_id: detail.dataset.id, file_id: target.id, file_source_id: source.id };
}

/**
 * Issue 22's budget of the main thread: while one client sends each surface's heaviest request again and again for
 * 4 s (from another process), the server's event-loop delay (perf_hooks.monitorEventLoopDelay, in this process) and
 * the latency of `/api/health` asked by a third process every 20 ms. Target: event-loop delay p99 ≤ 50 ms.
 */
export async function benchStalls(bench: BenchContext): Promise<void> {
  bench.section('The main thread under the heaviest request of each surface (issue 22)');
  const port = await findFreePort();
  const origin = `http://127.0.0.1:${port}`;
  const geoshelf = createServer({ config: { ...bench.kept('sample'), queryKeys: KEYS, mcpRate: 0, tileCacheMb: 0 }, serveData: true });
  const server = await listen(geoshelf, { port, hostname: '127.0.0.1' });
  try {
    const cities = await sourceOf(origin, 'geonames', 'cities', 'cities-1000', 'c');
    const makeQuery = async (sql: string) => {
      const page = await (await fetch(`${origin}/api/queries`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ sources: [cities], sql, limit: 1 }) })).json() as { query_id: string; query_token: string };
      return { id: page.query_id, token: page.query_token };
    };
    const scene: Scene = { origin, cities, makeQuery };
    for (const scenario of SCENARIOS) {
      const requests = await scenario.build(scene);
      // One untimed run first: the first use of a path loads its modules and warms its caches.
      if (requests.length > 0) await (await startClient<AttackReport>({ role: 'attack', origin, requests, ms: 0 })).go();
      const probe = await startClient<number[]>({ role: 'probe', origin });
      const attacker = requests.length > 0 ? await startClient<AttackReport>({ role: 'attack', origin, requests, ms: ATTACK_MS }) : undefined;
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      const probing = probe.go();
      const attack = attacker
        ? await attacker.go()
        : await new Promise<AttackReport>((resolve) => setTimeout(() => resolve({ sent: 0, statuses: {}, bytes: 0 }), ATTACK_MS));
      loop.disable();
      probe.child.send('stop' satisfies StallOrder);
      const health = await probing;
      const p99 = loop.percentile(99) / 1e6;
      // One long block is one sample of the histogram, so p99 can hide it: the longest delay is shown beside it.
      const max = loop.max / 1e6;
      const statuses = Object.entries(attack.statuses).map(([status, count]) => `${count}× ${status}`).join(', ') || 'none';
      bench.report(
        scenario.name,
        `loop p99 ${p99.toFixed(1)} ms, max ${max.toFixed(0)} ms; health p50 ${percentile(health, 0.5).toFixed(1)} ms, p99 ${percentile(health, 0.99).toFixed(1)} ms`,
        `${attack.sent} requests (${statuses}), ${(attack.bytes / 1e6).toFixed(1)} MB read; target loop p99 ≤ ${LOOP_BUDGET_MS} ms ${p99 <= LOOP_BUDGET_MS ? 'met' : 'NOT met'}; longest stall ${max <= 2 * LOOP_BUDGET_MS ? '≤' : '>'} ${2 * LOOP_BUDGET_MS} ms`,
      );
    }
  } finally {
    await server.close(true);
    await geoshelf.close();
  }
}
