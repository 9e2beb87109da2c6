import { fork, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildCatalog } from '../generator/build.ts';
import { settingsEnvironment, type Config } from '../runtime/config.ts';
import { loadSnapshot } from '../server/catalog.ts';
import { findFreePort } from '../tests/helpers/web-app.ts';
import { benchConfig, median } from './build-bench.ts';
import type { CaseRound, Mode, QueryClientOrder, QueryClientReport, Side, SourceRef, TimedRun } from './query-client.ts';
import type { BenchContext } from './run.ts';
import { writeSyntheticPoints } from './synthetic-parquet.ts';

const ROUNDS = 3;
const RUNS = 21;
/**
 * Idle time before each timed run in the `pause` mode, as for a request reaching an idle server: long enough that
 * a query worker has made its next instance (10 ms) and both sides start from the same idle machine.
 */
const PAUSE_MS = 100;
const KEYS = 'k1:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE';
/** The server's deadline of a query: long, so that a slow spell of a shared machine never turns a run into a 504. */
const QUERY_TIMEOUT_MS = 120_000;
/** Issue 23's target, in each round: service p50 ≤ 1.3 × plain p50 + 10 ms. */
const TARGET = { factor: 1.3, plusMs: 10 };

/** Median milliseconds of `rounds` runs, after one untimed run. */
export async function timeIt(rounds: number, run: () => Promise<unknown>): Promise<number> {
  await run();
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return median(times);
}

/**
 * Records of a one-dataset catalog (collection `bench`, dataset `points`) whose files are GeoParquet files of the
 * bench's data folder, with the sample's formats and storage locations. Every bench over the 1M-point file uses it.
 */
export async function writePointsCatalog(catalogDir: string, repo: string, files: { slug: string; path: string }[]): Promise<void> {
  await mkdir(join(catalogDir, 'collections'), { recursive: true });
  await mkdir(join(catalogDir, 'datasets'), { recursive: true });
  for (const name of ['formats.yaml', 'storage-locations.yaml']) await writeFile(join(catalogDir, name), await readFile(join(repo, 'catalog-data', name), 'utf8'));
  await writeFile(join(catalogDir, 'collections/bench.yaml'), 'slug: bench\nname: Bench\n');
  const file = ({ slug, path }: { slug: string; path: string }) => [
    `  - slug: ${slug}`, `    name: ${slug}`, '    formats:', '      - format: geoparquet', '        sources:', '          - version: 1', `            path: ${path}`,
  ];
  await writeFile(join(catalogDir, 'datasets/points.yaml'), ['slug: points', 'collection: bench', 'name: One million points', 'files:', ...files.flatMap(file), ''].join('\n'));
}

/** A one-dataset catalog over the two synthetic 1M-point files (spatial and random order), built into the bench folder. */
async function buildPointsCatalog(root: string, repo: string, dataDir: string): Promise<Config> {
  const catalogDir = join(root, 'points-catalog');
  await writePointsCatalog(catalogDir, repo, [{ slug: 'points', path: 'points-1m.parquet' }, { slug: 'points-random', path: 'points-1m-random.parquet' }]);
  const config = { ...benchConfig(root, catalogDir, dataDir, 'points-dist'), queryKeys: KEYS };
  await buildCatalog({ config });
  return config;
}

/**
 * The server as `bench/serve.ts` runs it, in its own process on 127.0.0.1, with the settings of the bench's build
 * (so its DuckDB threads are the plain side's), no tile cache (every tile is made) and a long query deadline.
 */
async function startServer(config: Config, port: number): Promise<ChildProcess> {
  const settings = { ...config, port, queryKeys: KEYS, tileCacheMb: 0, queryTimeoutMs: QUERY_TIMEOUT_MS };
  const env = { ...process.env, ...settingsEnvironment(settings) };
  const server = fork(new URL('./serve.ts', import.meta.url), [], { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    server.once('message', () => resolve());
    server.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
  return server;
}

async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  await exited;
}

/** Forks `bench/query-client.ts` with its order and resolves with its report. */
function runClient(order: QueryClientOrder): Promise<QueryClientReport> {
  const client = fork(new URL('./query-client.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    client.once('message', (message: QueryClientReport | { error: string }) => ('error' in message ? reject(new Error(`the query bench client failed: ${message.error}`)) : resolve(message)));
    client.once('exit', (code) => reject(new Error(`the query bench client exited (${code}) before reporting`)));
    client.send(order);
  });
}

/** Nearest-rank percentile. */
function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

const ms = (value: number) => value.toFixed(1);
const signed = (value: number) => `${value < 0 ? '−' : '+'}${ms(Math.abs(value))}`;
const timesOf = (runs: TimedRun[], side: Side) => runs.filter((run) => run.side === side).map((run) => run.ms);
const roundsOf = (report: QueryClientReport, name: string, mode: Mode) => report.rounds.filter((round) => round.name === name && round.mode === mode).sort((a, b) => a.round - b.round);

/** p50 of a side's runs by the side that ran just before (back to back, one side's leftover work lands on the next run). */
function describeNeighbours(rounds: CaseRound[]): string {
  const after = (side: Side, before: Side) => rounds.flatMap(({ runs }) => runs.slice(1).filter((run, index) => run.side === side && runs[index]!.side === before).map((run) => run.ms));
  const cell = (side: Side, before: Side) => {
    const times = after(side, before);
    return `after ${before} ${times.length > 0 ? `${ms(percentile(times, 0.5))} ms` : '—'} (${times.length})`;
  };
  return `p50 by the run before: service ${cell('service', 'service')}, ${cell('service', 'plain')}; plain ${cell('plain', 'service')}, ${cell('plain', 'plain')}`;
}

/** One table of a mode: each case's rounds, then its verdict. Answers how many cases met the target. */
function reportMode(bench: BenchContext, report: QueryClientReport, mode: Mode): number {
  let met = 0;
  for (const name of report.names) {
    const rounds = roundsOf(report, name, mode);
    const p50s: Record<Side, number[]> = { service: [], plain: [] };
    let roundsMet = 0;
    for (const round of rounds) {
      const [service, plain] = [timesOf(round.runs, 'service'), timesOf(round.runs, 'plain')];
      const [serviceP50, plainP50] = [percentile(service, 0.5), percentile(plain, 0.5)];
      const target = plainP50 * TARGET.factor + TARGET.plusMs;
      p50s.service.push(serviceP50);
      p50s.plain.push(plainP50);
      if (serviceP50 <= target) roundsMet++;
      bench.report(`${name}, round ${round.round}`, `service ${ms(serviceP50)} ms (p90 ${ms(percentile(service, 0.9))}), plain ${ms(plainP50)} ms (p90 ${ms(percentile(plain, 0.9))})`,
        `${(serviceP50 / plainP50).toFixed(2)}×, ${signed(serviceP50 - plainP50)} ms; target ≤ ${ms(target)} ms ${serviceP50 <= target ? 'met' : 'missed'}`);
    }
    const allMet = rounds.length > 0 && roundsMet === rounds.length;
    if (allMet) met++;
    const spread = (side: Side) => `${side} ${ms(Math.min(...p50s[side]))}–${ms(Math.max(...p50s[side]))} ms`;
    const answers = report.answers[name]!;
    const same = answers.service === answers.plain ? `same answer (${answers.service})` : `answers differ: service ${answers.service}, plain ${answers.plain}`;
    bench.report(`**${name}**`, allMet ? '**met**' : '**missed**', `in ${roundsMet} of ${rounds.length} rounds; p50 across rounds ${spread('service')}, ${spread('plain')}; ${same}${mode === 'back to back' ? `; ${describeNeighbours(rounds)}` : ''}`);
  }
  return met;
}

/** p50 of each Server-Timing step of the service's timed runs in the pause mode, per case; or why there is none. */
function reportSteps(bench: BenchContext, report: QueryClientReport): void {
  bench.section(`Where the service's time goes: p50 of each Server-Timing step, pause mode, ${ROUNDS} rounds × ${RUNS} runs`);
  if (!report.rounds.some((round) => round.runs.some((run) => run.steps))) {
    bench.report('Server-Timing', 'none', 'the server sent no Server-Timing header on any query response: no per-step profile');
    return;
  }
  for (const name of report.names) {
    const runs = roundsOf(report, name, 'pause').flatMap((round) => round.runs.filter((run) => run.side === 'service'));
    const timed = runs.filter((run) => run.steps);
    if (timed.length === 0) {
      bench.report(name, 'no Server-Timing', `none of ${runs.length} answers had the header`);
      continue;
    }
    const steps = [...new Set(timed.flatMap((run) => Object.keys(run.steps!)))].map((step) => {
      const values = timed.flatMap((run) => run.steps![step] ?? []);
      return `${step} ${ms(percentile(values, 0.5))}${values.length < timed.length ? ` (in ${values.length} of ${timed.length})` : ''}`;
    });
    const outside = timed.filter((run) => run.steps!.total !== undefined).map((run) => run.ms - run.steps!.total!);
    const client = `client-measured total p50 ${ms(percentile(timed.map((run) => run.ms), 0.5))} ms`;
    bench.report(name, `${steps.join(' · ')} ms`, outside.length > 0 ? `${client}; minus the server's total: p50 ${ms(percentile(outside, 0.5))} ms (HTTP and the client)` : `${client}; no total step`);
  }
}

/**
 * Issue 23: each query kind on 1,000,000 points through the query service over HTTP, from a client process that
 * also does the same work with plain in-process DuckDB, in 3 rounds of both modes (a pause before each run, or
 * back to back). A target is met only when every round meets it.
 */
export async function benchQueries(bench: BenchContext): Promise<void> {
  const dataDir = join(bench.root, 'points-data');
  await mkdir(dataDir, { recursive: true });
  const paths = { points: join(dataDir, 'points-1m.parquet'), random: join(dataDir, 'points-1m-random.parquet') };
  if (!existsSync(paths.points)) await writeSyntheticPoints(paths.points, 1_000_000);
  if (!existsSync(paths.random)) await writeSyntheticPoints(paths.random, 1_000_000, { spatialOrder: false });
  const config = await buildPointsCatalog(bench.root, bench.repo, dataDir);
  const ids = loadSnapshot(config.distDir, { budgetBytes: 1 << 20, cacheMaxAge: 0 }).context.index.collections.get('bench')!.collection.datasets[0]!;
  const sourceOf = (index: number): SourceRef => ({ alias: 'points', collection_id: ids.collection_id, dataset_id: ids.id, file_id: ids.files[index]!.id, file_source_id: ids.files[index]!.formats[0]!.sources[0]!.id });
  const seed = Number(process.env.BENCH_SEED) || randomInt(2 ** 31);
  const port = await findFreePort();
  const server = await startServer(config, port);
  const started = performance.now();
  const report = await runClient({
    origin: `http://127.0.0.1:${port}`, paths, sources: { points: sourceOf(0), random: sourceOf(1) }, threads: config.queryThreads,
    tileMaxFeatures: config.tileMaxFeatures, seed, rounds: ROUNDS, runs: RUNS, pauseMs: PAUSE_MS,
  }).finally(() => stopServer(server));
  const seconds = (performance.now() - started) / 1000;
  const met: Record<Mode, number> = { pause: 0, 'back to back': 0 };
  bench.section(`Queries on 1,000,000 points, ${PAUSE_MS} ms pause before each run: the service over HTTP from a client process against plain DuckDB in that process; `
    + `${ROUNDS} rounds (cases in random order, seed ${seed}; BENCH_SEED=${seed} repeats the order), ${RUNS} runs per side alternated with a random side first, after one untimed run of each; `
    + 'the service answer is read whole but not parsed, plain rows are read whole (getRows) but not turned into JSON');
  met.pause = reportMode(bench, report, 'pause');
  bench.section(`Queries on 1,000,000 points, back to back (no pause, as a page of map tiles or a paging client arrives): same cases, rounds and seed ${seed}`);
  met['back to back'] = reportMode(bench, report, 'back to back');
  reportSteps(bench, report);
  bench.section(`Queries: issue 23's target, service p50 ≤ ${TARGET.factor} × plain p50 + ${TARGET.plusMs} ms in every round`);
  bench.report('cases met', `${met.pause + met['back to back']} of ${2 * report.names.length}`,
    `pause ${met.pause} of ${report.names.length}, back to back ${met['back to back']} of ${report.names.length}; seed ${seed}; measured in ${seconds.toFixed(0)} s`);
}
