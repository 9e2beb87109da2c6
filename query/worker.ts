import { statSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { toSafeError } from './engine-errors.ts';
import { describeQueryError, QueryFailure } from './errors.ts';
import type { FromWorker, SandboxSettings, TaskOutcome, ToWorker, WorkerTask } from './protocol.ts';
import { runArrowPage } from './arrow.ts';
import { runExport } from './export.ts';
import { runFeatures } from './features.ts';
import { runBounds } from './bounds.ts';
import { runPage } from './page-rows.ts';
import { runTile, runTiles } from './tiles.ts';
import { STEP, startSteps } from './steps.ts';
import { createBlankInstance, openSandbox, type BlankInstance, type Sandbox } from './sandbox.ts';

/**
 * A query worker process (layer 3 of the sandbox): runs one task at a time in a sandboxed DuckDB instance and
 * answers with rows, bounds or a tile (a batch of tiles: one answer per tile, as each is ready), or with a safe
 * error. The API process kills and replaces it when it overruns its deadline or its memory cap, so nothing a
 * query does can reach the API process.
 *
 * Each query runs on a connection of its own, on a sandbox kept for its files (`kept`): the sandbox of the last
 * queries over the same files, limits and row order, whose DuckDB caches already hold the files' metadata and
 * data. A query over other files opens a sandbox on an instance made ahead (`reserve`). See `takeSandbox`.
 */
let current: { id: number; connection: DuckDBConnection | undefined; interrupted: boolean } | undefined;
/** Sandboxes kept for later queries over the same files, by `sandboxKey`, least recently used first. */
const kept = new Map<string, KeptSandbox>();
/** Instances made ahead, the first for the next query on files no kept sandbox serves (`refill`). */
const reserve: Promise<BlankInstance>[] = [];
/** Whether an instance of the reserve is being made. */
let making = false;
/** Instances a worker keeps made ahead: one for a query that arrives at once, and one for the query after it. */
const RESERVE = 2;
/**
 * Sandboxes a worker keeps: enough for a map (pages, the bounds and the tiles of one result: two row orders) and
 * the OGC features of another file.
 */
const KEEP = 3;
/** A kept sandbox unused this long is closed, giving its memory back. */
const KEEP_IDLE_MS = 5 * 60_000;
/**
 * Resident memory past which a worker keeps no sandbox after a task. The pool kills a worker at the query memory
 * limit plus 512 MiB (query/service.ts), so what kept sandboxes hold must leave a query its whole limit.
 */
const KEEP_RSS_BYTES = 384 * 1024 * 1024;
/** Memory limit of a features sandbox: a page of features needs little, and it lives beside each query's own. */
const FEATURES_MEMORY_MB = 256;

/** A sandbox kept between queries, and the timer that closes it once idle. */
interface KeptSandbox {
  sandbox: Sandbox;
  idle: NodeJS.Timeout;
}

function send(message: FromWorker): void {
  process.send?.(message);
}

async function run(id: number, task: WorkerTask): Promise<void> {
  current = { id, connection: undefined, interrupted: false };
  const state = current;
  const unanswered = new Set(task.kind === 'tiles' ? task.tiles.keys() : []);
  let mark = performance.now();
  const spent = () => {
    const now = performance.now();
    const ms = now - mark;
    mark = now;
    return ms;
  };
  const answerTile = (index: number, outcome: TaskOutcome) => {
    unanswered.delete(index);
    send({ type: 'tile', id, index, outcome, ms: spent() });
  };
  const clock = startSteps();
  const key = sandboxKey(task);
  let taken: { sandbox: Sandbox; connection: DuckDBConnection } | undefined;
  let failed = false;
  try {
    taken = await takeSandbox(task, key);
    state.connection = taken.connection;
    spent();
    clock.lap(STEP.sandbox);
    if (state.interrupted) throw new QueryFailure(describeQueryError('query_timeout'));
    const interrupted = () => state.interrupted;
    const connection = taken.connection;
    if (task.kind === 'tiles') {
      await runTiles(connection, task, interrupted, (index, value) => answerTile(index, { ok: true, value }), taken.sandbox.columns);
    } else {
      // A page laps `query` once DuckDB has answered (query/page-rows.ts readPageRows): what follows is `rows`.
      const value = task.kind === 'page'
        ? await (task.format === 'arrow' ? runArrowPage : runPage)(connection, task, interrupted, clock.lap)
        : task.kind === 'features' ? await runFeatures(connection, task, interrupted, taken.sandbox.columns)
        : task.kind === 'export' ? await runExport(connection, task, interrupted)
        : task.kind === 'bounds' ? await runBounds(connection, task, interrupted, taken.sandbox.columns) : await runTile(connection, task, interrupted, taken.sandbox.columns);
      clock.lap(task.kind === 'page' ? STEP.rows : STEP.query);
      send({ type: 'done', id, outcome: { ok: true, value }, ms: spent(), steps: clock.steps });
    }
  } catch (error) {
    failed = true;
    const outcome: TaskOutcome = error instanceof QueryFailure
      ? { ok: false, error: error.body }
      : { ok: false, error: state.interrupted ? describeQueryError('query_timeout') : toSafeError(error) };
    if (task.kind === 'tiles') for (const index of unanswered) answerTile(index, outcome);
    else send({ type: 'done', id, outcome, ms: spent() });
  } finally {
    current = undefined;
    const roomy = process.memoryUsage.rss() <= KEEP_RSS_BYTES;
    if (taken) {
      taken.connection.closeSync();
      // A sandbox in which a query failed or was interrupted is not used again; nor is one after a download,
      // whose worker the pool replaces (query/pool.ts).
      if (failed || task.kind === 'export' || key === undefined || !roomy) retire(taken.sandbox);
      else keep(key, taken.sandbox);
    }
    if (!roomy) for (const each of [...kept.keys()]) drop(each);
    if (task.kind !== 'export') refill(task.settings);
  }
}

/**
 * Sandboxes done with, closed a moment later. Closing one holds this thread for 3–5 ms, which would hold up a
 * query that follows at once (the next page, the next tile of a map); a moment later, the close overlaps that
 * query's run in DuckDB's own threads. The instance holds its memory those few milliseconds longer.
 */
const retired: Sandbox[] = [];
const CLOSE_AFTER_MS = 5;

function retire(sandbox: Sandbox): void {
  retired.push(sandbox);
  if (retired.length === 1) setTimeout(() => retired.splice(0).forEach((each) => each.close()), CLOSE_AFTER_MS);
}

/**
 * A connection for a task, on the sandbox kept for its files, limits and row order, else on a sandbox opened now
 * on an instance of the reserve. A kept sandbox has every layer of a fresh one: it can read only these files, with
 * external access off and its configuration locked, whichever connection runs on it. What reuse gives up is a
 * new instance per query: queries over the same files share the instance's caches, in turn. Layer 1 lets through
 * only one SELECT over the declared aliases, with no function that changes state (query/sql-allowlist.ts), so a
 * query leaves nothing for the next one but what DuckDB cached of public files; the connection, and whatever it
 * held, is closed after each task. Measured on the 1M-point file: see BENCHMARKS.md, "Query overhead that holds".
 */
async function takeSandbox(task: WorkerTask, key: string | undefined): Promise<{ sandbox: Sandbox; connection: DuckDBConnection }> {
  const found = key === undefined ? undefined : kept.get(key);
  if (found) {
    clearTimeout(found.idle);
    kept.delete(key!);
    try {
      return { sandbox: found.sandbox, connection: await found.sandbox.instance.connect() };
    } catch {
      retire(found.sandbox);
    }
  }
  // The reserve is made with the queries' limits; a features sandbox has its own, and is kept once made.
  const blank = task.kind === 'features' ? undefined : await takeBlank(task.settings);
  const sandbox = await openSandbox(task.sources, settingsOf(task), { preserveOrder: keepsRowOrder(task.kind), blank });
  try {
    return { sandbox, connection: await sandbox.instance.connect() };
  } catch (error) {
    sandbox.close();
    throw error;
  }
}

/** Keeps a sandbox for the next task over the same files, closing the least recently used past `KEEP`. */
function keep(key: string, sandbox: Sandbox): void {
  const idle = setTimeout(() => drop(key), KEEP_IDLE_MS);
  idle.unref();
  kept.set(key, { sandbox, idle });
  while (kept.size > KEEP) drop(kept.keys().next().value!);
}

function drop(key: string): void {
  const entry = kept.get(key);
  if (!entry) return;
  kept.delete(key);
  clearTimeout(entry.idle);
  retire(entry.sandbox);
}

/** The sandbox limits of a task: a features read needs little memory, and lives beside each query's own. */
function settingsOf(task: WorkerTask): SandboxSettings {
  return task.kind === 'features' ? { ...task.settings, memoryLimitMb: Math.min(task.settings.memoryLimitMb, FEATURES_MEMORY_MB) } : task.settings;
}

/**
 * What a sandbox depends on: each source's alias and file, with the file's size, mtime and ctime (ctime moves
 * with every write and cannot be set back, unlike mtime), the limits and the row order; undefined when a file
 * cannot be read (the task then opens a sandbox of its own, and fails as a query would).
 */
function sandboxKey(task: WorkerTask): string | undefined {
  try {
    const files = task.sources.map((source) => {
      const { size, mtimeMs, ctimeMs } = statSync(source.path);
      return [source.alias, source.path, size, mtimeMs, ctimeMs];
    });
    const { threads, memoryLimitMb } = settingsOf(task);
    return JSON.stringify([files, threads, memoryLimitMb, keepsRowOrder(task.kind)]);
  } catch {
    return undefined;
  }
}

/** The first instance of the reserve, or a new one if there is none. */
async function takeBlank(settings: SandboxSettings): Promise<BlankInstance> {
  const blank = await reserve.shift()?.catch(() => undefined);
  return blank ?? createBlankInstance(settings);
}

/**
 * Makes instances one at a time until the reserve is full, starting once a query is answered. Making one costs
 * 10 ms of processor time: made beside a query's run, it slowed the run about as much on 2 cores (measured on
 * a first page of 1M points: 35.5 ms in the worker against 30.7 ms with the instance made after the answer).
 * With two in reserve, a query reaching an idle worker finds one made and nothing else running, and in a
 * run of queries that follow one another at once (a paging client) each takes one made earlier while the
 * next is made beside it, rather than waiting for its own.
 */
function refill(settings: Pick<SandboxSettings, 'threads' | 'memoryLimitMb'>): void {
  if (making || reserve.length >= RESERVE) return;
  making = true;
  const made = createBlankInstance(settings);
  reserve.push(made);
  void made.catch(() => undefined).finally(() => {
    making = false;
    refill(settings);
  });
}

/** Pages, downloads, bounds and features read rows in file order (features page by row number); tiles need no order. */
function keepsRowOrder(kind: WorkerTask['kind']): boolean {
  return kind === 'page' || kind === 'export' || kind === 'bounds' || kind === 'features';
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'interrupt') {
    if (current?.id === message.id) {
      current.interrupted = true;
      current.connection?.interrupt();
    }
    return;
  }
  void run(message.id, message.task);
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
// The pool passes the limits its queries' instances are made with, so the reserve is made before the first query.
const limits = process.env.GEOSHELF_SANDBOX_LIMITS?.split('/').map(Number);
if (limits?.length === 2 && limits.every((value) => Number.isInteger(value) && value > 0)) refill({ threads: limits[0]!, memoryLimitMb: limits[1]! });
