import {
  batchKeyOf, costKeyOf, createCostModel, estimateWait, expectJob, fairAhead, pickFairly, queueShare, retryAfterSeconds, TILE_SETUP_MS, tileBatchSize, toWorkerTask,
} from './admission.ts';
import { describeQueryError } from './errors.ts';
import type { Job, Member, WorkerSlot } from './pool-jobs.ts';
import { attachSteps, describeBusy, describeDeath, describeFailure, TIMEOUT } from './pool-outcomes.ts';
import type { FromWorker, QueryTask, SandboxSettings, TaskOutcome, ToWorker } from './protocol.ts';
import { forkWorker, readResidentMegabytes } from './worker-process.ts';

/** Options of the worker pool. */
export interface PoolOptions {
  /** Worker processes for the shared lane: at most this many tasks run at once, besides long ones. */
  workers: number;
  /**
   * Spare worker processes that take over from the shared lane the tasks that run past `heavyAfterMs` (or
   * whose query did before), so that they do not hold up short ones. Default `workers`; 0 turns this off.
   */
  spareWorkers?: number;
  /**
   * Hard cap on tasks waiting, whatever the estimates say. Past it a task is answered 503, unless its client holds
   * less than an equal share of the queue: then the newest task of the client holding the most is answered 503
   * in its place.
   */
  queue: number;
  /** Most tasks one client may have waiting; past it, 503. Default `queue`. */
  clientQueue?: number;
  /** Deadline of a task, its wait for a worker included (not its wait for the pool's workers to start). */
  timeoutMs: number;
  /** A worker whose resident memory passes this is killed. */
  memoryCapMb: number;
  /** How long an interrupted worker may take to stop before it is killed. */
  graceMs?: number;
  /** A task that has run this long moves to a spare worker; default 500 ms. */
  heavyAfterMs?: number;
  /** Most queued tiles of one query and zoom coalesced into one worker task; default 32, 1 turns it off. */
  maxTileBatch?: number;
  /** Limits of the tasks' sandboxes, for the instances a worker makes ahead from its start (query/worker.ts). */
  sandboxLimits?: Pick<SandboxSettings, 'threads' | 'memoryLimitMb'>;
}

/** Longest a task waits for the pool's workers to start (measured: under 1 s idle, 2–7 s on a loaded 2-core machine). */
const START_LIMIT_MS = 30_000;

/**
 * Layer 3 of the sandbox: a pool of worker processes, each running one task at a time. Clients (remote
 * addresses) take turns at the workers: a free worker takes the oldest task of the client running the fewest
 * (`pickFairly`), so one client's burst delays its own tasks, not the others'. Admission is by expected wait: a
 * task is accepted while the work a fair turn puts ahead of it (`fairAhead`) plus its own run fits its deadline,
 * and answered 503 the moment its wait runs out; a client may have at most `clientQueue` tasks waiting. Tasks
 * that run long move to spare workers, so short ones keep flowing; queued tiles of one query are coalesced into
 * one worker task. A task past its deadline is
 * interrupted, and its worker killed and replaced if it does not stop within the grace period; a worker over
 * its memory cap is killed and replaced. A worker that dies by itself is replaced too, and its task answered by
 * the cause (`describeDeath`): stopped from outside, 503 `query_worker_lost`; crashed, 422 `query_failed`.
 * Workers start with `start()` (the server awaits it before it listens) or on the first task; a task's clock does
 * not run while it waits for them to start, so the first query is as fast as the next.
 */
export class QueryPool {
  readonly #options: Required<Omit<PoolOptions, 'sandboxLimits'>> & Pick<PoolOptions, 'sandboxLimits'>;
  readonly #slots: WorkerSlot[] = [];
  readonly #queue: Member[] = [];
  /** Tasks waiting per client. */
  readonly #queuedBy = new Map<string, number>();
  /** The turn each client with tasks waiting was last served at (`pickFairly`). */
  readonly #served = new Map<string, number>();
  #turn = 0;
  readonly #costs = createCostModel();
  #nextId = 1;
  #watchdog: NodeJS.Timeout | undefined;
  #closed = false;
  /** Every worker of the start has been ready: tasks run, and their clocks with them. */
  #warm = false;
  /** Workers killed and replaced so far, for tests and logs. */
  restarts = 0;

  constructor(options: PoolOptions) {
    this.#options = { graceMs: 1000, spareWorkers: options.workers, heavyAfterMs: 500, maxTileBatch: 32, clientQueue: options.queue, ...options };
  }

  /**
   * Runs a task of `client` (any key naming who sent it; one key for all when absent), resolving to its outcome:
   * 503 (with `retryAfter`) when it cannot start in time or its client has too many tasks waiting, 504 past its
   * deadline.
   */
  run(task: QueryTask, client = ''): Promise<TaskOutcome> {
    if (this.#closed) return Promise.resolve(describeFailure(describeQueryError('query_service_unavailable')));
    this.start();
    const { heavyAfterMs, spareWorkers } = this.#options;
    const costKey = costKeyOf(task);
    const heavy = spareWorkers > 0 && (this.#costs.known(costKey) ?? 0) >= heavyAfterMs;
    const expected = this.#costs.expect(costKey, task.kind, heavyAfterMs);
    const wait = this.#estimateWait(heavy, client);
    const shed = wait > 0 ? this.#shed(client, wait, expected) : undefined;
    if (shed) return Promise.resolve(shed);
    return new Promise((resolve) => {
      const member: Member = { task, client, resolve, costKey, batchKey: batchKeyOf(task), heavy, expected, deadlineAt: Infinity, timer: undefined, answered: false, queuedAt: performance.now() };
      this.#queue.push(member);
      this.#queuedBy.set(client, (this.#queuedBy.get(client) ?? 0) + 1);
      this.#startClock(member);
      this.#dispatch();
    });
  }

  /**
   * Whether a task of `client` that would wait `wait` ms is refused, and why: its client has `clientQueue` tasks
   * waiting; its wait and run would pass the deadline; or the queue is full and its client holds its share of it
   * (else the newest task of the client holding the most gives up its place).
   */
  #shed(client: string, wait: number, expected: number): TaskOutcome | undefined {
    const { timeoutMs, queue, clientQueue } = this.#options;
    const counts = this.#queuedBy;
    const own = counts.get(client) ?? 0;
    if (own >= clientQueue) return describeBusy(retryAfterSeconds(wait, expected, 0), 'client_queue');
    if (wait + expected > timeoutMs) return describeBusy(retryAfterSeconds(wait, expected, timeoutMs));
    if (this.#queue.length < queue) return undefined;
    const share = queueShare(queue, counts.size + (own === 0 ? 1 : 0));
    const [fullest, most] = [...counts].reduce((best, entry) => (entry[1] > best[1] ? entry : best), ['', 0]);
    if (own >= share || most <= share) return describeBusy(retryAfterSeconds(wait, expected, 0), 'queue_share');
    const evicted = this.#remove(this.#queue.findLastIndex((member) => member.client === fullest));
    this.#answer(evicted, describeBusy(retryAfterSeconds(this.#estimateWait(evicted.heavy, fullest), evicted.expected, 0), 'queue_share'));
    return undefined;
  }

  /** Takes the task at `index` out of the queue; a client left with none waiting loses its place in the turns. */
  #remove(index: number): Member {
    const [member] = this.#queue.splice(index, 1);
    const left = (this.#queuedBy.get(member!.client) ?? 1) - 1;
    if (left > 0) this.#queuedBy.set(member!.client, left);
    else {
      this.#queuedBy.delete(member!.client);
      this.#served.delete(member!.client);
    }
    return member!;
  }

  /**
   * Starts a queued task's clock. Until the workers have started, the task waits without its deadline running (at
   * most START_LIMIT_MS); then it has its whole deadline.
   */
  #startClock(member: Member): void {
    clearTimeout(member.timer);
    const { timeoutMs } = this.#options;
    if (!this.#warm) {
      member.timer = setTimeout(() => this.#expireWaiting(member), Math.max(START_LIMIT_MS, timeoutMs));
      return;
    }
    member.deadlineAt = performance.now() + timeoutMs;
    // Started later than this, the task would most likely run past its deadline: better a 503 now.
    member.timer = setTimeout(() => this.#expireWaiting(member), timeoutMs - Math.min(member.expected, timeoutMs / 2));
  }

  /** Starts the workers if they are not (the server does before it listens: server/listen.ts). */
  start(): void {
    if (this.#closed || this.#slots.length > 0) return;
    for (let index = 0; index < this.#options.workers + this.#options.spareWorkers; index++) this.#slots.push(this.#spawn());
    this.#watchdog = setInterval(() => this.#checkMemory(), 100);
    this.#watchdog.unref();
  }

  /** Starts the workers if they are not, and resolves once each can take a task (for warm-ups and tests). */
  async ready(): Promise<void> {
    this.start();
    while (!this.#closed && this.#slots.some((slot) => !slot.ready)) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  /** Stops every worker; tasks still waiting or running answer 503. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#watchdog);
    this.#queuedBy.clear();
    this.#served.clear();
    for (const member of this.#queue.splice(0)) this.#answer(member, describeFailure(describeQueryError('query_service_unavailable')));
    await Promise.all(this.#slots.map((slot) => new Promise<void>((resolve) => {
      if (slot.child.exitCode !== null || slot.child.signalCode !== null) return resolve();
      slot.child.once('exit', () => resolve());
      slot.child.kill('SIGKILL');
    })));
  }

  #spawn(): WorkerSlot {
    const child = forkWorker(this.#options.sandboxLimits);
    const slot: WorkerSlot = { child, ready: false, job: undefined };
    child.on('message', (message: FromWorker) => {
      if (message.type === 'ready') {
        slot.ready = true;
        // Tasks wait for every worker of the start, not the first: on 2 cores, a task run beside three Node
        // processes still loading DuckDB took 3–10 times its warm time.
        if (!this.#warm && this.#slots.every((other) => other.ready)) {
          this.#warm = true;
          for (const member of this.#queue) this.#startClock(member);
        }
        this.#dispatch();
        return;
      }
      const job = slot.job;
      if (job?.id !== message.id) return;
      const member = job.members[message.type === 'tile' ? message.index : 0];
      if (member) this.#answer(member, job.late ? TIMEOUT : message.type === 'done' ? attachSteps(message.outcome, member, job, message.steps) : message.outcome);
      job.workMs += message.ms;
      if (++job.reported >= job.members.length || message.type === 'done') this.#finish(slot, describeFailure(describeQueryError('query_failed')));
    });
    child.on('exit', (_code, signal) => this.#replace(slot, this.#closed ? describeFailure(describeQueryError('query_service_unavailable')) : describeDeath(signal)));
    child.on('error', () => undefined);
    return slot;
  }

  /** Replaces a dead or killed worker, answering what it ran with `outcome`. */
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
    this.#finish(slot, slot.job?.late ? TIMEOUT : outcome);
  }

  /** Ends the slot's job: records its run time, answers what the worker left unanswered, and frees the slot. */
  #finish(slot: WorkerSlot, unanswered: TaskOutcome): void {
    const job = slot.job;
    if (!job) return;
    clearTimeout(job.deadline);
    clearTimeout(job.promote);
    clearTimeout(job.grace);
    slot.job = undefined;
    const elapsed = performance.now() - job.startedAt;
    const kind = job.members[0]!.task.kind;
    const count = job.members.length;
    // A tile is estimated by the worker's own time for it, past the setup; a killed worker told nothing.
    const each = kind !== 'tile' ? elapsed : job.reported === count ? job.workMs / count : Math.max(1, elapsed - TILE_SETUP_MS) / count;
    for (const key of new Set(job.members.map((member) => member.costKey))) this.#costs.record(key, kind, each, count);
    for (const member of job.members) this.#answer(member, unanswered);
    // A download's GeoParquet is written by parquet-wasm, whose WebAssembly memory grows and never shrinks: the
    // worker is replaced, so that the next query does not start near the memory cap.
    if (kind === 'export') this.#recycle(slot);
    this.#dispatch();
  }

  /** Replaces a worker that is done with its job by a fresh one (not counted as a restart: nothing failed). */
  #recycle(slot: WorkerSlot): void {
    const index = this.#slots.indexOf(slot);
    if (index < 0 || this.#closed) return;
    this.#slots.splice(index, 1);
    slot.child.kill('SIGKILL');
    this.#slots.push(this.#spawn());
  }

  #answer(member: Member, outcome: TaskOutcome): void {
    if (member.answered) return;
    member.answered = true;
    clearTimeout(member.timer);
    member.resolve(outcome);
  }

  /** A waiting task's time ran out before a worker could take it. */
  #expireWaiting(member: Member): void {
    const index = this.#queue.indexOf(member);
    if (index < 0) return;
    this.#remove(index);
    const wait = this.#estimateWait(member.heavy, member.client);
    this.#answer(member, describeBusy(retryAfterSeconds(wait, member.expected, this.#options.timeoutMs)));
  }

  #running(heavy: boolean): Job[] {
    return this.#slots.flatMap((slot) => (slot.job && slot.job.heavy === heavy ? [slot.job] : []));
  }

  #hasRoom(heavy: boolean): boolean {
    return this.#running(heavy).length < (heavy ? this.#options.spareWorkers : this.#options.workers);
  }

  /**
   * Expected wait of a new task of `client` in its lane, behind the work a fair turn puts ahead of it. In the
   * shared lane a task holds a worker for at most `heavyAfterMs` when there are spare workers to move it to; one
   * that has run past its estimate is assumed to run as long again, up to its deadline.
   */
  #estimateWait(heavy: boolean, client: string): number {
    const { workers, spareWorkers, heavyAfterMs } = this.#options;
    const hold = (expected: number) => (heavy || spareWorkers === 0 ? expected : Math.min(expected, heavyAfterMs));
    const now = performance.now();
    const remaining = this.#running(heavy).map((job) => {
      const expected = hold(expectJob(job.members[0]!.task.kind, job.members.map((member) => member.expected)));
      const elapsed = now - job.startedAt;
      const left = Math.max(...job.members.map((member) => member.deadlineAt)) - now;
      return Math.max(0, expected > elapsed ? expected - elapsed : Math.min(elapsed, left));
    });
    const ahead = fairAhead(this.#queue.filter((member) => member.heavy === heavy).map((member) => ({ client: member.client, expected: hold(member.expected) })), client);
    return estimateWait(remaining, ahead, heavy ? spareWorkers : workers);
  }

  /**
   * Moves shared-lane tasks that have run past `heavyAfterMs` to the spare lane while it has room. Tile batches
   * stay: they are light work sized to about 0.6 s (tileBatchSize), and running more of them side by side only
   * shares the same cores (measured: batches of 12 tiles took 0.4 s alone, 2–2.7 s four at a time).
   */
  #promote(): void {
    const now = performance.now();
    for (const slot of this.#slots) {
      const job = slot.job;
      if (job && !job.heavy && job.members.length === 1 && now - job.startedAt >= this.#options.heavyAfterMs && this.#hasRoom(true)) job.heavy = true;
    }
  }

  #dispatch(): void {
    if (this.#closed || !this.#warm) return;
    this.#promote();
    for (const slot of this.#slots) {
      if (!slot.ready || slot.job) continue;
      const index = pickFairly(this.#queue, this.#runningByClient(), this.#served, (member) => this.#hasRoom(member.heavy));
      if (index < 0) return;
      const head = this.#remove(index);
      if (this.#queuedBy.has(head.client)) this.#served.set(head.client, ++this.#turn);
      this.#send(slot, [head, ...this.#takeBatch(head)]);
    }
  }

  /** How many jobs each client has running (a batch of tiles counts once for each client it holds tiles of). */
  #runningByClient(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const slot of this.#slots) {
      for (const client of new Set(slot.job?.members.map((member) => member.client))) counts.set(client, (counts.get(client) ?? 0) + 1);
    }
    return counts;
  }

  /** Queued tiles that can run with `head` in one worker task (same query and zoom), removed from the queue. */
  #takeBatch(head: Member): Member[] {
    if (head.batchKey === undefined || this.#options.maxTileBatch <= 1) return [];
    const same = this.#queue.filter((member) => member.batchKey === head.batchKey);
    if (same.length === 0) return [];
    const free = this.#slots.filter((slot) => slot.ready && !slot.job).length;
    const room = Math.max(1, Math.min(free, this.#options.workers - this.#running(false).length));
    // Estimates learnt since these tiles were queued count: a map's first tiles teach the pool about the rest.
    const each = this.#costs.expect(head.costKey, 'tile', this.#options.heavyAfterMs);
    const size = tileBatchSize(each, same.length + 1, room, this.#options.maxTileBatch);
    const taken = same.slice(0, size - 1);
    for (const member of [head, ...taken]) member.expected = each;
    for (const member of taken) this.#remove(this.#queue.indexOf(member));
    return taken;
  }

  #send(slot: WorkerSlot, members: Member[]): void {
    const now = performance.now();
    const head = members[0]!;
    for (const member of members) clearTimeout(member.timer);
    // The deadline covers the wait: a task that waited 3 s has its deadline less 3 s to run.
    const until = (at: number) => Math.max(0, at - now);
    const job: Job = {
      id: this.#nextId++, members, reported: 0, workMs: 0, startedAt: now, heavy: head.heavy, late: false,
      deadline: setTimeout(() => this.#expire(slot), until(Math.max(...members.map((member) => member.deadlineAt)))),
    };
    if (members.length > 1) {
      for (const member of members) member.timer = setTimeout(() => this.#answer(member, TIMEOUT), until(member.deadlineAt));
    }
    if (!job.heavy && members.length === 1 && this.#options.spareWorkers > 0) job.promote = setTimeout(() => this.#dispatch(), this.#options.heavyAfterMs + 1);
    slot.job = job;
    slot.child.send({ type: 'run', id: job.id, task: toWorkerTask(members.map((member) => member.task)) } satisfies ToWorker);
  }

  /** The deadline passed: interrupt the task, and kill the worker if it has not stopped within the grace period. */
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
      if (readResidentMegabytes(slot.child.pid) > this.#options.memoryCapMb) {
        this.#replace(slot, describeFailure(describeQueryError('query_out_of_memory')));
      }
    }
  }
}
