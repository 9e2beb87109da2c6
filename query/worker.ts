import type { DuckDBConnection } from '@duckdb/node-api';
import { toSafeError } from './engine-errors.ts';
import { describeQueryError, QueryFailure } from './errors.ts';
import type { FromWorker, TaskOutcome, ToWorker, WorkerTask } from './protocol.ts';
import { runFeatures } from './features.ts';
import { runBounds, runPage, runTile, runTiles } from './run-task.ts';
import { createBlankInstance, openSandbox, type BlankInstance } from './sandbox.ts';

/**
 * A query worker process (layer 3 of the sandbox): runs one task at a time in a fresh sandboxed DuckDB
 * instance and answers with rows, bounds or a tile (a batch of tiles: one answer per tile, as each is
 * ready), or with a safe error. The API process kills and replaces it when it overruns its deadline or its
 * memory cap, so nothing a query does can reach the API process.
 */
let current: { id: number; connection: DuckDBConnection | undefined; interrupted: boolean } | undefined;
/** The instance the next query will get, made while this worker waits. */
let next: Promise<BlankInstance> | undefined;

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
  let sandbox: Awaited<ReturnType<typeof openSandbox>> | undefined;
  try {
    const blank = await next?.catch(() => undefined);
    next = undefined;
    const preserveOrder = keepsRowOrder(task.kind);
    sandbox = await openSandbox(task.sources, task.settings, { preserveOrder, ...(blank ? { blank } : {}) });
    state.connection = sandbox.connection;
    spent();
    if (state.interrupted) throw new QueryFailure(describeQueryError('query_timeout'));
    const interrupted = () => state.interrupted;
    if (task.kind === 'tiles') {
      await runTiles(sandbox.connection, task, interrupted, (index, value) => answerTile(index, { ok: true, value }));
    } else if (task.kind === 'features') {
      send({ type: 'done', id, outcome: { ok: true, value: await runFeatures(sandbox.connection, task, interrupted) }, ms: spent() });
    } else {
      const value = task.kind === 'page'
        ? await runPage(sandbox.connection, task, interrupted)
        : task.kind === 'bounds' ? await runBounds(sandbox.connection, task, interrupted) : await runTile(sandbox.connection, task, interrupted);
      send({ type: 'done', id, outcome: { ok: true, value }, ms: spent() });
    }
  } catch (error) {
    const outcome: TaskOutcome = error instanceof QueryFailure
      ? { ok: false, error: error.body }
      : { ok: false, error: state.interrupted ? describeQueryError('query_timeout') : toSafeError(error) };
    if (task.kind === 'tiles') for (const index of unanswered) answerTile(index, outcome);
    else send({ type: 'done', id, outcome, ms: spent() });
  } finally {
    sandbox?.close();
    current = undefined;
    // The next task is most likely of the same kind, so the instance is made with its row-order setting.
    next = createBlankInstance(task.settings, keepsRowOrder(task.kind));
  }
}

/** Pages, bounds and features read rows in file order (features page by row number); tiles need no order. */
function keepsRowOrder(kind: WorkerTask['kind']): boolean {
  return kind === 'page' || kind === 'bounds' || kind === 'features';
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
