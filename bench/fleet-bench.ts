import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../runtime/config.ts';
import { hasCommand } from '../scripts/fleet.ts';
import { childEnvironment, runScript, type WatchedProcess } from '../tests/helpers/processes.ts';
import type { BenchContext } from './run.ts';
import { countFailures, requestsPerSecond, startWrk, WITH_TOKEN_SCRIPT, type WrkFigures } from './wrk.ts';

const PORT = 18_110;
const ORIGIN = `http://127.0.0.1:${PORT}`;
const SECONDS = 10;
/** Two wrk threads over 16 connections: the machine has two cores, shared with nginx, the replicas and their workers. */
const LOAD = { threads: 2, connections: 16 };
/** A light query: the places of more than 5 million people among 135,233, by population. */
const LIGHT_SQL = 'SELECT name, country, population FROM c WHERE population > 5000000 ORDER BY population DESC';
/** Catalog reads: documents of each kind, prebuilt in dist/. */
const CATALOG_PATHS = ['/api/collections', '/api/collections/geonames', '/api/collections/geonames/datasets/cities', '/api/collections/natural-earth/datasets/countries/files/countries-110m', '/stac/geonames', '/api/health'];

/** A running `npm run fleet` and the query its load pages through. */
interface RunningFleet {
  fleet: WatchedProcess;
  token: string;
  files: { pages: string; reads: string; mixed: string };
}

/** Starts `npm run fleet` over the sample build, makes the light query and writes wrk's request files. */
async function startFleet(bench: BenchContext, config: Config, replicas: number): Promise<RunningFleet> {
  const env = childEnvironment(config, { HOST: '127.0.0.1', GEOSHELF_QUERY_KEYS: '' });
  const fleet = runScript(['scripts/fleet.ts', '--no-build', '--replicas', String(replicas), '--port', String(PORT)], env);
  await fleet.waitFor(/fleet ready/, 120_000);
  const file = await (await fetch(`${ORIGIN}/api/collections/geonames/datasets/cities/files/cities-1000`)).json() as {
    collection: { id: number }; dataset: { id: number }; file: { id: number; formats: { sources: { id: number }[] }[] };
  };
  const source = { alias: 'c', collection_id: file.collection.id, dataset_id: file.dataset.id, file_id: file.file.id, file_source_id: file.file.formats[0]!.sources[0]!.id };
  const created = await fetch(`${ORIGIN}/api/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sources: [source], sql: LIGHT_SQL, limit: 20 }) });
  if (created.status !== 200) throw new Error(`the light query failed: ${created.status} ${await created.text()}`);
  const { query_id: id, query_token: token } = await created.json() as { query_id: string; query_token: string };
  const pageLine = `POST\t/api/queries/${id}/pages\t{"offset":0,"page_size":20}`;
  const readLines = CATALOG_PATHS.map((path) => `GET\t${path}`);
  const files = { pages: join(bench.root, 'fleet-pages.tsv'), reads: join(bench.root, 'fleet-reads.tsv'), mixed: join(bench.root, 'fleet-mixed.tsv') };
  await writeFile(files.pages, `${pageLine}\n`);
  await writeFile(files.reads, `${readLines.join('\n')}\n`);
  await writeFile(files.mixed, `${readLines.flatMap((line) => [pageLine, line]).join('\n')}\n`);
  return { fleet, token, files };
}

async function stopFleet(running: RunningFleet): Promise<void> {
  running.fleet.child.kill('SIGTERM');
  await running.fleet.exitCode();
}

function runLoad(running: RunningFleet, file: string, seconds = SECONDS): { result: Promise<WrkFigures>; stop: () => void } {
  return startWrk({ url: ORIGIN, script: WITH_TOKEN_SCRIPT, args: [file, running.token], ...LOAD, seconds });
}

const ms = (us: number) => `${(us / 1000).toFixed(us < 10_000 ? 2 : 0)} ms`;
const describeRun = (figures: WrkFigures) => `p50 ${ms(figures.p50_us)}, p99 ${ms(figures.p99_us)}; ${figures.requests} requests, ${countFailures(figures)} failed`;

/**
 * Kills replica 1 (SIGKILL) a third of the way through a run of pages and catalog reads over two replicas, and
 * counts what the clients saw fail; nginx retries what the dead replica held on the other one
 * (`proxy_next_upstream … non_idempotent`), and the fleet starts the replica again.
 */
async function benchKill(bench: BenchContext, running: RunningFleet): Promise<void> {
  const pid = Number(/replica 1 \(pid (\d+)\) is up/.exec(running.fleet.output())?.[1]);
  const load = runLoad(running, running.files.mixed);
  await sleep((SECONDS * 1000) / 3);
  process.kill(pid, 'SIGKILL');
  const figures = await load.result;
  const statuses = Object.entries(figures.statuses).map(([status, count]) => `${status} × ${count}`).join(', ');
  const { connect, read, write, timeout } = figures.errors;
  bench.report('2 replicas, replica 1 killed at 1/3: failed requests', `${countFailures(figures)} of ${figures.requests}`,
    `statuses ${statuses}; socket errors: connect ${connect}, read ${read}, write ${write}, timeout ${timeout}; p99 ${ms(figures.p99_us)}`);
}

/**
 * Light query pages (POST …/pages with the token) and catalog reads through nginx, over one replica and then
 * two, with wrk; then a run over two in which one replica is killed a third of the way through. On this two-core machine the
 * replicas share the cores, so two replicas measure the proxy's overhead and fault handling more than scale.
 */
export async function benchFleet(bench: BenchContext): Promise<void> {
  bench.section(`Fleet: npm run fleet, nginx round robin over replicas (wrk -t${LOAD.threads} -c${LOAD.connections} -d${SECONDS}s)`);
  if (!hasCommand('nginx') || !hasCommand('wrk')) {
    bench.report('skipped', '-', 'needs Debian packages: apt-get install -y nginx wrk');
    return;
  }
  const config = bench.kept('sample');
  const baseline: Record<string, number> = {};
  for (const replicas of [1, 2]) {
    const running = await startFleet(bench, config, replicas);
    try {
      for (const [kind, file] of [['light query pages', running.files.pages], ['catalog reads', running.files.reads]] as const) {
        await runLoad(running, file, 3).result;
        const figures = await runLoad(running, file).result;
        const perSecond = requestsPerSecond(figures);
        baseline[kind] ??= perSecond;
        const ratio = replicas === 1 ? 'baseline' : `${(perSecond / baseline[kind]!).toFixed(2)}× one replica`;
        bench.report(`${replicas} replica(s): ${kind}, requests/s`, `${Math.round(perSecond)}`, `${ratio}; ${describeRun(figures)}`);
      }
      if (replicas === 2) await benchKill(bench, running);
    } finally {
      await stopFleet(running);
    }
  }
}
