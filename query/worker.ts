import { statSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { toSafeError } from './engine-errors.ts';
import { describeQueryError, QueryFailure } from './errors.ts';
import type { FromWorker, TaskOutcome, ToWorker, WorkerTask } from './protocol.ts';
import { runArrowPage } from './arrow.ts';
import { runExport } from './export.ts';
import { runFeatures } from './features.ts';
import { runBounds, runPage, runTile, runTiles } from './run-task.ts';
import { startSteps } from './steps.ts';
import { createBlankInstance, openSandbox, type BlankInstance, type Sandbox, type SandboxSettings } from './sandbox.ts';

/**
 * A query worker process (layer 3 of the sandbox): runs one task at a time in a fresh sandboxed DuckDB
 * instance and answers with rows, bounds or a tile (a batch of tiles: one answer per tile, as each is
 * ready), or with a safe error. The API process kills and replaces it when it overruns its deadline or its
 * memory cap, so nothing a query does can reach the API process.
 */
let current: { id: number; connection: DuckDBConnection | undefined; interrupted: boolean } | undefined;
/** A sandbox opened once a query was answered, for a next query on the same files (`openAhead`). */
let ahead: { key: string; sandbox: Promise<Sandbox> } | undefined;
/** Instances made ahead, the first for the next query (`refill`). */
const reserve: Promise<BlankInstance>[] = [];
/** Whether an instance of the reserve is being made. */
let making = false;
/** Instances a worker keeps made ahead: one for a query that arrives at once, and one for the query after it. */
const RESERVE = 2;
/** The sandbox of the file the last OGC features read used, kept for the next read of the same file. */
let kept: { identity: string; sandbox: Sandbox } | undefined;
/** Memory limit of a kept features sandbox: a page of features needs little, and it lives beside each query's own. */
const FEATURES_MEMORY_MB = 256;

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
  let sandbox: Sandbox | undefined;
  let failed = false;
  const clock = startSteps();
  try {
    sandbox = task.kind === 'features' ? await openFeatureSandbox(task) : await takeSandbox(task);
    state.connection = sandbox.connection;
    spent();
    clock.lap('sandbox');
    if (state.interrupted) throw new QueryFailure(describeQueryError('query_timeout'));
    const interrupted = () => state.interrupted;
    if (task.kind === 'tiles') {
      await runTiles(sandbox.connection, task, interrupted, (index, value) => answerTile(index, { ok: true, value }));
    } else if (task.kind === 'features') {
      const value = await runFeatures(sandbox.connection, task, interrupted);
      clock.lap('query');
      send({ type: 'done', id, outcome: { ok: true, value }, ms: spent(), steps: clock.steps });
    } else {
      // A page laps `query` once DuckDB has answered (query/run-task.ts readPageRows): what follows is `rows`.
      const value = task.kind === 'page'
        ? await (task.format === 'arrow' ? runArrowPage : runPage)(sandbox.connection, task, interrupted, clock.lap)
        : task.kind === 'export' ? await runExport(sandbox.connection, task, interrupted)
        : task.kind === 'bounds' ? await runBounds(sandbox.connection, task, interrupted) : await runTile(sandbox.connection, task, interrupted);
      clock.lap(task.kind === 'page' ? 'rows' : 'query');
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
    // A kept features sandbox stays open for the next read of its file, unless this read failed in it.
    if (failed && sandbox === kept?.sandbox) kept = undefined;
    if (sandbox && sandbox !== kept?.sandbox) retire(sandbox);
    // A worker that wrote a download is replaced by the pool (query/pool.ts), so it makes no next instance.
    if (task.kind !== 'export' && task.kind !== 'features' && !failed) openAhead(task);
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
 * The sandbox of a query: the one opened ahead when it was opened for the same files, limits and row order,
 * else one opened now on an instance of the reserve.
 */
async function takeSandbox(task: Exclude<WorkerTask, { kind: 'features' }>): Promise<Sandbox> {
  const preserveOrder = keepsRowOrder(task.kind);
  const opened = ahead;
  ahead = undefined;
  if (opened && opened.key === sandboxKey(task, preserveOrder)) {
    const sandbox = await opened.sandbox.catch(() => undefined);
    if (sandbox) return sandbox;
  } else if (opened) opened.sandbox.then(retire, () => undefined);
  return openSandbox(task.sources, task.settings, { preserveOrder, blank: await takeBlank(task.settings) });
}

/**
 * Opens, once a query is answered, a sandbox for the next query on the same files: the next page, the bounds
 * and the tiles of a result read the files the query did. That takes the sandbox's setup (2.4 ms) off the next
 * query's path. The sandbox has every layer; a next query on other files, or after a file changed on disk,
 * takes an instance of the reserve instead and this one is closed.
 */
function openAhead(task: Exclude<WorkerTask, { kind: 'features' }>): void {
  const preserveOrder = keepsRowOrder(task.kind);
  const key = sandboxKey(task, preserveOrder);
  if (key === undefined) return;
  const sandbox = takeBlank(task.settings).then((blank) => openSandbox(task.sources, task.settings, { preserveOrder, blank }));
  sandbox.catch(() => undefined);
  ahead = { key, sandbox };
}

/**
 * What a sandbox depends on: each source's alias and file, with the file's size, mtime and ctime (ctime moves
 * with every write), the limits and the row order; undefined when a file cannot be read.
 */
function sandboxKey(task: Exclude<WorkerTask, { kind: 'features' }>, preserveOrder: boolean): string | undefined {
  try {
    const files = task.sources.map((source) => {
      const { size, mtimeMs, ctimeMs } = statSync(source.path);
      return [source.alias, source.path, size, mtimeMs, ctimeMs];
    });
    return JSON.stringify([files, task.settings.threads, task.settings.memoryLimitMb, preserveOrder]);
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

/**
 * The sandbox of an OGC features read. Its SQL is the engine's own, never a user's, so the sandbox of the file
 * (every layer: only that file allowed, external access off, configuration locked) is kept for the next read
 * of the same file, which then finds the file's metadata and data in DuckDB's caches: measured on the 1M-point
 * file, a bbox page took 60 ms in a fresh instance and 29 ms in a kept one. A file replaced on disk (another
 * size, mtime or ctime) gets a new sandbox; one whose stat fails is opened afresh and fails as a query would.
 */
async function openFeatureSandbox(task: Extract<WorkerTask, { kind: 'features' }>): Promise<Sandbox> {
  let identity: string | undefined;
  try {
    // ctime too: it moves with every write and cannot be set back, unlike mtime (a file restored with utimes).
    const { size, mtimeMs, ctimeMs } = statSync(task.sources[0]!.path);
    identity = `${task.sources[0]!.path}\n${size}\n${mtimeMs}\n${ctimeMs}`;
  } catch {
    identity = undefined;
  }
  if (identity !== undefined && kept?.identity === identity) return kept.sandbox;
  kept?.sandbox.close();
  kept = undefined;
  const sandbox = await openSandbox(task.sources, { ...task.settings, memoryLimitMb: Math.min(task.settings.memoryLimitMb, FEATURES_MEMORY_MB) });
  if (identity !== undefined) kept = { identity, sandbox };
  return sandbox;
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
