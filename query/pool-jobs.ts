import type { ChildProcess } from 'node:child_process';
import type { QueryTask, TaskOutcome } from './protocol.ts';

/** One task given to the pool's `run` (query/pool.ts), waiting or running. */
export interface Member {
  task: QueryTask;
  /** Who sent it (a remote address); clients take turns at the workers. */
  client: string;
  resolve: (outcome: TaskOutcome) => void;
  costKey: string;
  batchKey: string | undefined;
  /** Known to run long: it waits for the spare lane. */
  heavy: boolean;
  /** Expected run, ms. */
  expected: number;
  /** Infinity until its clock starts: when it is queued, or when the workers have started if they had not. */
  deadlineAt: number;
  timer: NodeJS.Timeout | undefined;
  answered: boolean;
  /** When it was queued, for its `wait` step. */
  queuedAt: number;
}

/** What one worker runs: one task, or a batch of tiles. */
export interface Job {
  id: number;
  members: Member[];
  /** Answers the worker has sent (a batch sends one per tile), and the time it reports spending on them. */
  reported: number;
  workMs: number;
  startedAt: number;
  /** In the spare lane. */
  heavy: boolean;
  late: boolean;
  deadline: NodeJS.Timeout;
  promote?: NodeJS.Timeout;
  grace?: NodeJS.Timeout;
}

/** One worker process of the pool, and the job it runs, if any. */
export interface WorkerSlot {
  child: ChildProcess;
  ready: boolean;
  job: Job | undefined;
}
