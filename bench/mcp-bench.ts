import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { buildCatalog } from '../generator/build.ts';
import type { Config } from '../runtime/config.ts';
import { createServer } from '../server/app.ts';
import { listen } from '../server/listen.ts';
import { benchConfig, median } from './build-bench.ts';
import type { BenchContext } from './run.ts';

const ROUNDS = 40;
const WARM_UP = 5;
const PORT = 39_881;
const CLIENTS = 50;
const CALLS_PER_CLIENT = 10;
/** Load waves against one server process: bounded memory levels off over them. */
const WAVES = 6;
const SQL = 'SELECT name FROM countries ORDER BY name LIMIT 20';

/** The sample catalog, built with its links pointing at the bench port; the ledger is read, never written. */
async function buildSample(bench: BenchContext): Promise<Config> {
  const catalog = join(bench.repo, 'catalog-data');
  const config = {
    ...benchConfig(bench.root, catalog, join(catalog, 'data'), 'mcp-dist'),
    baseUrl: `http://127.0.0.1:${PORT}`,
    ledgerMode: 'frozen' as const,
    queryKeys: 'k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE',
  };
  await buildCatalog({ config });
  return config;
}

/** The query body both surfaces run: the countries-110m GeoParquet source, ids read from /api as an agent would. */
async function queryBody(origin: string) {
  const { collection, dataset } = await (await fetch(`${origin}/api/collections/natural-earth/datasets/countries`)).json() as {
    collection: { id: number };
    dataset: { id: number; files: { id: number; slug: string; formats: { format: { format_type: string }; sources: { id: number }[] }[] }[] };
  };
  const file = dataset.files.find((candidate) => candidate.slug === 'countries-110m')!;
  const source = file.formats.find((format) => format.format.format_type === 'geoparquet')!.sources[0]!;
  return { sources: [{ alias: 'countries', collection_id: collection.id, dataset_id: dataset.id, file_id: file.id, file_source_id: source.id }], sql: SQL };
}

async function connectClient(origin: string): Promise<Client> {
  const client = new Client({ name: 'geoshelf-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
  return client;
}

/** The code of a failed tool call, from its `{code, message}` text. */
function codeOf(result: CallToolResult): string {
  try {
    return (JSON.parse((result.content[0] as { text: string }).text) as { code?: string }).code ?? 'no code';
  } catch {
    return 'unreadable';
  }
}

type Outcome = 'ok' | 'busy' | 'http 429' | string;

/** One call, classified: ok, the documented overload (query_service_busy), the rate bound (429), or a failure. */
async function classify(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    const result = (await call()) as CallToolResult;
    if (!result.isError) return 'ok';
    const code = codeOf(result);
    return code === 'query_service_busy' ? 'busy' : `failure: ${code}`;
  } catch (error) {
    if (error instanceof StreamableHTTPError && error.code === 429) return 'http 429';
    return `failure: ${error instanceof Error ? error.message.slice(0, 80) : String(error)}`;
  }
}

/**
 * `CLIENTS` MCP clients at once, each connecting and making `CALLS_PER_CLIENT` tool calls (search, a file's
 * dictionary, a query, in turn); the outcomes counted, and the server's RSS (it runs in this process) around them.
 */
async function loadMcp(origin: string, body: Awaited<ReturnType<typeof queryBody>>, rss: () => number) {
  const outcomes = new Map<Outcome, number>();
  const count = (outcome: Outcome) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  const calls = [
    { name: 'search_datasets', arguments: { collection: 'natural-earth', search: 'countries', limit: 5 } },
    { name: 'get_file', arguments: { collection: 'natural-earth', dataset: 'countries', file: 'countries-110m' } },
    { name: 'run_query', arguments: body },
  ];
  const rssBefore = rss();
  const started = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async (_, index) => {
    let client: Client;
    try {
      client = await connectClient(origin);
    } catch (error) {
      count(error instanceof StreamableHTTPError && error.code === 429 ? 'connect: http 429' : 'connect: failure');
      return;
    }
    for (let call = 0; call < CALLS_PER_CLIENT; call++) count(await classify(() => client.callTool(calls[(index + call) % calls.length]!)));
    await client.close();
  }));
  const seconds = (performance.now() - started) / 1000;
  const rssAfter = rss();
  return { outcomes, seconds, rssBefore, rssAfter };
}

/** `npm run serve` of a built tree in a process of its own, so its memory is measured without the clients'. */
async function startServerProcess(bench: BenchContext, config: Config, rate: number) {
  const env = {
    ...process.env, HOST: '127.0.0.1', PORT: String(PORT), GEOSHELF_BASE_URL: config.baseUrl, GEOSHELF_DIST_DIR: config.distDir,
    GEOSHELF_DATA_DIR: config.dataDir, GEOSHELF_CATALOG_DIR: config.catalogDir, GEOSHELF_CACHE_DIR: config.cacheDir,
    GEOSHELF_QUERY_KEYS: config.queryKeys, GEOSHELF_MCP_RATE: String(rate),
  };
  const child = spawn(process.execPath, [join(bench.repo, 'server', 'main.ts'), '--no-build'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  for (let attempt = 0; ; attempt++) {
    const up = await fetch(`${config.baseUrl}/api/health`).then((response) => response.ok, () => false);
    if (up) break;
    if (attempt > 200 || child.exitCode !== null) throw new Error('the server process did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    /** Resident memory of the server's own process (its query workers are processes of their own, with their own cap). */
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024,
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** Outcome counts as `ok 480, busy 20`. */
function describeOutcomes(outcomes: Map<Outcome, number>): string {
  return [...outcomes].sort((a, b) => b[1] - a[1]).map(([outcome, n]) => `${outcome} ${n}`).join(', ');
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/**
 * The cost of MCP over the HTTP API on the sample catalog, both served over a socket in this run: p50 of
 * `POST /api/queries` against an MCP `tools/call` of run_query with the same body (one reused client; rounds
 * interleaved so both see the same machine), then 50 concurrent MCP clients with the rate bound off and on.
 */
export async function benchMcp(bench: BenchContext): Promise<void> {
  bench.section(`MCP at /mcp on the sample catalog: p50 of ${ROUNDS} interleaved rounds, then ${CLIENTS} concurrent clients × ${CALLS_PER_CLIENT} tool calls`);
  const config = await buildSample(bench);
  const unbounded = createServer({ config: { ...config, mcpRate: 0 } });
  const server = await listen(unbounded, { port: PORT, hostname: '127.0.0.1' });
  const origin = config.baseUrl;
  const body = await queryBody(origin);
  const client = await connectClient(origin);
  const viaHttp = async () => {
    const response = await fetch(`${origin}/api/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (response.status !== 200) throw new Error(`POST /api/queries answered ${response.status}`);
    await response.json();
  };
  const viaMcp = async () => {
    const result = (await client.callTool({ name: 'run_query', arguments: body })) as CallToolResult;
    if (result.isError) throw new Error(`run_query failed: ${codeOf(result)}`);
  };
  const times = { http: [] as number[], mcp: [] as number[] };
  for (let round = 0; round < WARM_UP + ROUNDS; round++) {
    for (const [kind, run] of [['http', viaHttp], ['mcp', viaMcp]] as const) {
      const started = performance.now();
      await run();
      if (round >= WARM_UP) times[kind].push(performance.now() - started);
    }
  }
  await client.close();
  const http = median(times.http);
  const mcp = median(times.mcp);
  bench.report('POST /api/queries (20 countries)', `${http.toFixed(1)} ms`, 'baseline');
  bench.report('MCP tools/call run_query, same body', `${mcp.toFixed(1)} ms`, `+${(mcp - http).toFixed(1)} ms over HTTP; target ≤ +10 ms: ${mcp - http <= 10 ? 'met' : 'missed'}`);

  await server.close(true);
  await unbounded.close();

  // The load runs against a server process of its own, so its RSS is the server's alone. Memory that is bounded
  // levels off: later waves add little to the first.
  const open = await startServerProcess(bench, config, 0);
  try {
    for (let wave = 1; wave <= WAVES; wave++) {
      const result = await loadMcp(origin, body, open.rss);
      bench.report(`${CLIENTS} clients × ${CALLS_PER_CLIENT} calls, rate bound off, wave ${wave}`, `${result.seconds.toFixed(1)} s`,
        `${describeOutcomes(result.outcomes)}; server RSS ${mib(result.rssBefore)} → ${mib(result.rssAfter)}`);
    }
  } finally {
    await open.close();
  }

  // Every bench client shares 127.0.0.1, so with the default bound they share one bucket: most calls meet the 429.
  const bounded = await startServerProcess(bench, config, config.mcpRate);
  try {
    const limited = await loadMcp(origin, body, bounded.rss);
    bench.report(`${CLIENTS} clients × ${CALLS_PER_CLIENT} calls, GEOSHELF_MCP_RATE ${config.mcpRate}, one address`, `${limited.seconds.toFixed(1)} s`,
      `${describeOutcomes(limited.outcomes)}; server RSS ${mib(limited.rssBefore)} → ${mib(limited.rssAfter)}`);
  } finally {
    await bounded.close();
  }
}
