import type { DuckDBConnection } from '@duckdb/node-api';
import { toSafeError } from './engine-errors.ts';
import { describeQueryError, QueryFailure } from './errors.ts';
import type { FromWorker, QueryTask, TaskOutcome, ToWorker } from './protocol.ts';
import { runBounds, runPage, runTile } from './run-task.ts';
import { createBlankInstance, openSandbox, type BlankInstance } from './sandbox.ts';

/**
 * A query worker process (layer 3 of the sandbox): runs one task at a time in a fresh sandboxed DuckDB
 * instance and answers with rows, bounds or a tile, or with a safe error. The API process kills and replaces
 * it when it overruns its deadline or its memory cap, so nothing a query does can reach the API process.
 */
let current: { id: number; connection: DuckDBConnection | undefined; interrupted: boolean } | undefined;
/** The instance the next query will get, made while this worker waits. */
let next: Promise<BlankInstance> | undefined;

async function run(id: number, task: QueryTask): Promise<TaskOutcome> {
  current = { id, connection: undefined, interrupted: false };
  const state = current;
  let sandbox: Awaited<ReturnType<typeof openSandbox>> | undefined;
  try {
    const blank = await next?.catch(() => undefined);
    next = undefined;
    sandbox = await openSandbox(task.sources, task.settings, { preserveOrder: task.kind !== 'tile', ...(blank ? { blank } : {}) });
    state.connection = sandbox.connection;
    if (state.interrupted) throw new QueryFailure(describeQueryError('query_timeout'));
    const interrupted = () => state.interrupted;
    const value = task.kind === 'page'
      ? await runPage(sandbox.connection, task, interrupted)
      : task.kind === 'bounds' ? await runBounds(sandbox.connection, task, interrupted) : await runTile(sandbox.connection, task, interrupted);
    return { ok: true, value };
  } catch (error) {
    if (error instanceof QueryFailure) return { ok: false, error: error.body };
    if (state.interrupted) return { ok: false, error: describeQueryError('query_timeout') };
    return { ok: false, error: toSafeError(error) };
  } finally {
    sandbox?.close();
    current = undefined;
    next = createBlankInstance(task.settings);
  }
}

function send(message: FromWorker): void {
  process.send?.(message);
}

process.on('message', (message: ToWorker) => {
  if (message.type === 'interrupt') {
    if (current?.id === message.id) {
      current.interrupted = true;
      current.connection?.interrupt();
    }
    return;
  }
  void run(message.id, message.task).then((outcome) => send({ type: 'done', id: message.id, outcome }));
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
