import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describeQueryError, type QueryErrorBody } from './errors.ts';
import type { FromWorker, QueryTask, TaskOutcome, ToWorker } from './protocol.ts';

/** Options of the worker pool. */
export interface PoolOptions {
  workers: number;
  /** Tasks that may wait for a worker; past this, 503. */
  queue: number;
  /** Deadline of a task once a worker runs it. */
  timeoutMs: number;
  /** A worker whose resident memory passes this is killed. */
  memoryCapMb: number;
  /** How long an interrupted worker may take to stop before it is killed. */
  graceMs?: number;
}

interface Job {
  id: number;
  task: QueryTask;
  resolve: (outcome: TaskOutcome) => void;
  queuedAt: number;
}

interface WorkerSlot {
  child: ChildProcess;
  ready: boolean;
  job: (Job & { deadline: NodeJS.Timeout; grace?: NodeJS.Timeout; late: boolean }) | undefined;
}

const failed = (error: QueryErrorBody): TaskOutcome => ({ ok: false, error });
const TIMEOUT = failed(describeQueryError('query_timeout'));
const WORKER_PATH = new URL('./worker.ts', import.meta.url);

/**
 * Layer 3 of the sandbox: a pool of worker processes, each running one task at a time. A task past its deadline
 * is interrupted, and its worker killed and replaced if it does not stop within the grace period; a worker over
 * its memory cap is killed and replaced. Whatever happens in a worker, this process only sees an outcome.
 * Workers start on the first task, so a server that never queries never spawns them.
 */
export class QueryPool {
  readonly #options: Required<PoolOptions>;
  readonly #slots: WorkerSlot[] = [];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #watchdog: NodeJS.Timeout | undefined;
  #closed = false;
  /** Workers killed and replaced so far, for tests and logs. */
  restarts = 0;

  constructor(options: PoolOptions) {
    this.#options = { graceMs: 1000, ...options };
  }

  /** Runs a task, resolving to its outcome; 503 when the queue is full or the wait too long, 504 past the deadline. */
  run(task: QueryTask): Promise<TaskOutcome> {
    if (this.#closed) return Promise.resolve(failed(describeQueryError('query_service_unavailable')));
    this.#start();
    const busy = this.#slots.every((slot) => slot.job || !slot.ready);
    if (busy && this.#queue.length >= this.#options.queue) {
      return Promise.resolve(failed(describeQueryError('query_service_busy', 1)));
    }
    return new Promise((resolve) => {
      this.#queue.push({ id: this.#nextId++, task, resolve, queuedAt: performance.now() });
      this.#dispatch();
    });
  }

  /** Stops every worker; tasks still waiting answer 503. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#watchdog);
    for (const job of this.#queue.splice(0)) job.resolve(failed(describeQueryError('query_service_unavailable')));
    await Promise.all(this.#slots.map((slot) => new Promise<void>((resolve) => {
      if (slot.child.exitCode !== null || slot.child.signalCode !== null) return resolve();
      slot.child.once('exit', () => resolve());
      slot.child.kill('SIGKILL');
    })));
  }

  #start(): void {
    if (this.#slots.length > 0) return;
    for (let index = 0; index < this.#options.workers; index++) this.#slots.push(this.#spawn());
    this.#watchdog = setInterval(() => this.#checkMemory(), 100);
    this.#watchdog.unref();
  }

  #spawn(): WorkerSlot {
    const child = fork(WORKER_PATH, [], {
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      execArgv: ['--max-old-space-size=512'],
    });
    const slot: WorkerSlot = { child, ready: false, job: undefined };
    child.on('message', (message: FromWorker) => {
      if (message.type === 'ready') {
        slot.ready = true;
        this.#dispatch();
      } else if (slot.job?.id === message.id) {
        this.#finish(slot, slot.job.late ? TIMEOUT : message.outcome);
      }
    });
    child.on('exit', () => this.#replace(slot, failed(describeQueryError('query_failed'))));
    child.on('error', () => undefined);
    return slot;
  }

  /** Replaces a dead or killed worker, answering its task with `outcome`. */
  #replace(slot: WorkerSlot, outcome: TaskOutcome): void {
    const index = this.#slots.indexOf(slot);
    if (index < 0) return;
    this.#slots.splice(index, 1);
    if (slot.child.exitCode === null && slot.child.signalCode === null) slot.child.kill('SIGKILL');
    if (!this.#closed) {
      this.restarts++;
      // A worker that died before it was ready would die again at once: wait a second rather than spin.
      if (slot.ready) this.#slots.push(this.#spawn());
      else setTimeout(() => !this.#closed && this.#slots.push(this.#spawn()), 1000).unref();
    }
    if (slot.job) this.#finish(slot, slot.job.late ? TIMEOUT : outcome);
  }

  #finish(slot: WorkerSlot, outcome: TaskOutcome): void {
    const job = slot.job;
    if (!job) return;
    clearTimeout(job.deadline);
    clearTimeout(job.grace);
    slot.job = undefined;
    job.resolve(outcome);
    this.#dispatch();
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (!slot.ready || slot.job) continue;
      let job = this.#queue.shift();
      while (job && performance.now() - job.queuedAt > this.#options.timeoutMs) {
        job.resolve(failed(describeQueryError('query_service_busy', 1)));
        job = this.#queue.shift();
      }
      if (!job) return;
      const deadline = setTimeout(() => this.#expire(slot), this.#options.timeoutMs);
      slot.job = { ...job, deadline, late: false };
      slot.child.send({ type: 'run', id: job.id, task: job.task } satisfies ToWorker);
    }
  }

  /** The deadline passed: interrupt the query, and kill the worker if it has not stopped within the grace period. */
  #expire(slot: WorkerSlot): void {
    const job = slot.job;
    if (!job) return;
    job.late = true;
    slot.child.send({ type: 'interrupt', id: job.id } satisfies ToWorker);
    job.grace = setTimeout(() => {
      if (slot.job?.id === job.id) this.#replace(slot, TIMEOUT);
    }, this.#options.graceMs);
  }

  #checkMemory(): void {
    for (const slot of this.#slots) {
      if (!slot.job || slot.child.pid === undefined) continue;
      if (residentMegabytes(slot.child.pid) > this.#options.memoryCapMb) {
        this.#replace(slot, failed(describeQueryError('query_out_of_memory')));
      }
    }
  }
}

/** Resident memory of a process in MiB, from /proc (Linux); 0 where it cannot be read. */
function residentMegabytes(pid: number): number {
  try {
    const kilobytes = Number(/VmRSS:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return kilobytes / 1024;
  } catch {
    return 0;
  }
}
