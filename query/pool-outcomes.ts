import { describeQueryError, type BusyCause, type QueryErrorBody } from './errors.ts';
import type { Job, Member } from './pool-jobs.ts';
import type { Steps, TaskOutcome } from './protocol.ts';
import { STEP, totalOf } from './steps.ts';

/** A task's outcome when it failed with `error`. */
export const describeFailure = (error: QueryErrorBody): TaskOutcome => ({ ok: false, error });
/** A task's outcome when it was shed: 503 `query_service_busy`, to be retried after `seconds`. */
export const describeBusy = (seconds: number, cause?: BusyCause): TaskOutcome => ({ ok: false, error: describeQueryError('query_service_busy', seconds, cause), retryAfter: seconds });
/** A task's outcome past its deadline: 504 `query_timeout`. */
export const TIMEOUT = describeFailure(describeQueryError('query_timeout'));

/**
 * A worker's answer with where its time went: the task's `wait` for a worker, the worker's own steps, and the
 * `hop` there and back (the rest of the time from sending the task to reading its answer).
 */
export function attachSteps(outcome: TaskOutcome, member: Member, job: Job, worker: Steps | undefined): TaskOutcome {
  if (!outcome.ok || !worker) return outcome;
  const hop = performance.now() - job.startedAt - totalOf(worker);
  return { ...outcome, steps: { [STEP.wait]: job.startedAt - member.queuedAt, ...worker, [STEP.hop]: Math.max(0, hop) } };
}

/**
 * Signals that stop a process from outside: an operator's `kill`, Ctrl-C, the kernel's OOM killer (SIGKILL). A
 * worker the pool stops itself (deadline, memory cap) is answered before its exit is seen, so a worker whose exit
 * carries one of these was stopped by someone else, and its query was not at fault.
 */
const OUTSIDE_SIGNALS = new Set<NodeJS.Signals>(['SIGKILL', 'SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT']);
/**
 * What a task whose worker exited on its own is told: 503 `query_worker_lost` (retry at once) when a signal from
 * outside stopped it, 422 `query_failed` when it crashed (SIGSEGV, SIGABRT, a non-zero exit) while running the
 * task, which the task may well have caused.
 */
export function describeDeath(signal: NodeJS.Signals | null): TaskOutcome {
  return describeFailure(describeQueryError(signal !== null && OUTSIDE_SIGNALS.has(signal) ? 'query_worker_lost' : 'query_failed'));
}
