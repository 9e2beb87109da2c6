import { createHash } from 'node:crypto';
import type { QueryTask, WorkerTask } from './protocol.ts';

/** Weight of the newest run in a running estimate: recent runs count most, one odd run does not swing it. */
const SMOOTHING = 0.3;
/**
 * Estimates of a kind nothing has been measured for yet, in ms: a page or bounds of a small query takes
 * 40–100 ms; a tile, past the setup of its worker task, 15–30 ms (BENCHMARKS.md, "Query load").
 */
const FIRST_GUESS_MS: Record<string, number> = { page: 100, bounds: 100, tile: 30 };
/**
 * What a worker task costs before its first tile: a sandbox on a fresh instance, views and the DESCRIBE of
 * the result (measured: 89 ms per z=4 tile in a fresh sandbox each, 43 ms in one sandbox). Tiles are
 * estimated past it, so that a batch of n costs this plus n tiles.
 */
export const TILE_SETUP_MS = 40;
/** A tile batch is sized to run about this long, so that work queued behind it is not held up longer. */
const TILE_BATCH_MS = 600;
/** Queries whose history is kept; the least recently used is forgotten past this. */
const KEYS_KEPT = 4096;

/**
 * Running estimates of how long tasks take: one per task kind, and one per cost key (a query). A tile's
 * estimate leaves out TILE_SETUP_MS, which its worker task pays once however many tiles it holds.
 */
export interface CostModel {
  /** Expected run of a task in ms: its query's history, else the kind's (at most `cap`), else a first guess. */
  expect: (key: string, kind: string, cap?: number) => number;
  /** The history of a query, when it has one. */
  known: (key: string) => number | undefined;
  /** Records runs of `ms` each; the `count` tiles of a batch weigh as that many runs. */
  record: (key: string, kind: string, ms: number, count?: number) => void;
}

/**
 * Creates the running estimates (exponentially weighted moving averages) that admission and tile batching
 * read. A query with no history of its own is estimated from its kind, but never above `cap`: a new query
 * is assumed light until it shows otherwise. A query's first page counts in full (one slow run marks it
 * slow), while a query's first tile, which often runs cold and alone, is blended with the other tiles' estimate.
 */
export function createCostModel(): CostModel {
  const byKey = new Map<string, number>();
  const byKind = new Map<string, number>();
  const blend = (old: number | undefined, ms: number, weight: number) => (old === undefined ? ms : old + weight * (ms - old));
  return {
    expect: (key, kind, cap = Infinity) => {
      const own = byKey.get(key);
      if (own !== undefined) return own;
      return Math.min(byKind.get(kind) ?? FIRST_GUESS_MS[kind] ?? 100, cap);
    },
    known: (key) => byKey.get(key),
    record: (key, kind, ms, count = 1) => {
      const weight = 1 - (1 - SMOOTHING) ** count;
      const prior = kind === 'tile' ? (byKind.get(kind) ?? FIRST_GUESS_MS[kind]) : undefined;
      const old = byKey.get(key) ?? prior;
      byKey.delete(key);
      byKey.set(key, blend(old, ms, weight));
      if (byKey.size > KEYS_KEPT) byKey.delete(byKey.keys().next().value!);
      byKind.set(kind, blend(byKind.get(kind) ?? prior, ms, weight));
    },
  };
}

/**
 * The key a task's run times are kept under: its `costKey`, or a hash of what decides its cost (kind, SQL,
 * sources, geometry column). Tiles add their zoom, since a z=2 tile reads far more rows than a z=14 one.
 */
export function costKeyOf(task: QueryTask): string {
  const base = task.costKey ?? createHash('sha256')
    .update(JSON.stringify([task.sql, task.sources.map((source) => [source.alias, source.path]), task.geometryColumn ?? null]))
    .digest('base64url').slice(0, 22);
  return task.kind === 'tile' ? `tile/${task.z}/${base}` : `${task.kind}/${base}`;
}

/** Expected run of a worker task of `kind` holding tasks expected to take `each` ms. */
export function expectJob(kind: string, each: number[]): number {
  return each.reduce((sum, ms) => sum + ms, kind === 'tile' ? TILE_SETUP_MS : 0);
}

/** The key under which queued tiles may share one worker task: same query, same sandbox limits, same zoom. */
export function batchKeyOf(task: QueryTask): string | undefined {
  if (task.kind !== 'tile') return undefined;
  return JSON.stringify([task.z, task.sql, task.sources.map((source) => [source.alias, source.path]), task.geometryColumn ?? null, task.settings]);
}

/**
 * How long a new task would wait for one of `capacity` workers: list scheduling of the tasks queued ahead of
 * it (their expected runs, in order) onto the workers, which free up after the remaining runs of the tasks
 * they run now. All figures in ms.
 * @example estimateWait([300], [100, 100], 2) // 200: the idle worker runs both queued tasks first
 */
export function estimateWait(remaining: number[], ahead: number[], capacity: number): number {
  if (capacity <= 0) return Infinity;
  const free = [...remaining].sort((a, b) => a - b).slice(0, capacity);
  while (free.length < capacity) free.unshift(0);
  for (const run of ahead) {
    let soonest = 0;
    for (let index = 1; index < free.length; index++) if (free[index]! < free[soonest]!) soonest = index;
    free[soonest]! += run;
  }
  return Math.max(0, Math.min(...free));
}

/** A queued task as fair admission sees it: whose it is, and how long it is expected to run (ms). */
export interface QueuedTask {
  client: string;
  expected: number;
}

/**
 * The expected runs of the queued tasks that a new task of `client` would wait behind when clients take turns
 * at the workers ({@link pickFairly}): all of its client's own queued tasks, and of every other client at most one
 * more than that (one turn each per turn of its own). So a client's burst delays its own next task, and another
 * client's first task waits behind at most one task of each client, not behind the whole burst.
 * @example fairAhead([{ client: 'a', expected: 50 }, { client: 'a', expected: 50 }, { client: 'a', expected: 50 }], 'b') // [50]
 */
export function fairAhead(queue: readonly QueuedTask[], client: string): number[] {
  let own = 0;
  for (const task of queue) if (task.client === client) own++;
  const taken = new Map<string, number>();
  const ahead: number[] = [];
  for (const task of queue) {
    const count = taken.get(task.client) ?? 0;
    if (task.client !== client && count > own) continue;
    taken.set(task.client, count + 1);
    ahead.push(task.expected);
  }
  return ahead;
}

/**
 * Which queued task a free worker takes: of the clients that have a task it may run (`eligible`), the one running
 * the fewest tasks now; between those, the one served longest ago (`served`: a turn number per client, absent for a
 * client not served since it last had nothing queued); then the one whose task came first. A client's own tasks
 * run in the order they came. So clients take turns, and one that holds many workers gets no more until the others
 * have theirs. Returns the index in `queue`, or -1 when no task is eligible.
 * @example pickFairly([{ client: 'a' }, { client: 'a' }, { client: 'b' }], new Map(), new Map([['a', 7]]), () => true) // 2
 */
export function pickFairly<T extends { client: string }>(
  queue: readonly T[], running: ReadonlyMap<string, number>, served: ReadonlyMap<string, number>, eligible: (task: T) => boolean,
): number {
  let best = -1;
  let bestRunning = Infinity;
  let bestServed = Infinity;
  const seen = new Set<string>();
  for (let index = 0; index < queue.length; index++) {
    const task = queue[index]!;
    if (seen.has(task.client) || !eligible(task)) continue;
    seen.add(task.client);
    const count = running.get(task.client) ?? 0;
    const turn = served.get(task.client) ?? -1;
    if (count < bestRunning || (count === bestRunning && turn < bestServed)) {
      best = index;
      bestRunning = count;
      bestServed = turn;
    }
  }
  return best;
}

/**
 * The share of a full queue of `cap` tasks that each of `clients` clients may hold (at least 1): a client below it
 * still gets a task in, in place of the newest task of the client holding the most.
 */
export function queueShare(cap: number, clients: number): number {
  return Math.max(1, Math.floor(cap / Math.max(1, clients)));
}

/**
 * The key a remote address is counted under in the pool: an IPv4 address as it is (an IPv4-mapped IPv6 one too),
 * an IPv6 address by its /64 prefix, which one host commonly holds whole and could otherwise spread a burst over.
 * @example clientKeyOf('2001:db8::1') // '2001:db8:0:0::/64'
 */
export function clientKeyOf(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.split('%')[0]!.split('::');
  const groups = (text: string) => (text ? text.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group])) : []);
  const left = groups(head);
  const right = groups(tail ?? '');
  const all = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${all.slice(0, 4).map((group) => (Number.parseInt(group, 16) || 0).toString(16)).join(':')}::/64`;
}

/** Seconds a shed client should wait: until the work ahead has drained enough for its task to fit, 1 to 60. */
export function retryAfterSeconds(waitMs: number, runMs: number, deadlineMs: number): number {
  return Math.min(60, Math.max(1, Math.ceil((waitMs + runMs - deadlineMs) / 1000)));
}

/**
 * How many of `queued` tiles of one query to send to a worker at once: as many as fit TILE_BATCH_MS by their
 * estimate `each` (ms), shared out between the `room` workers free for them, at most `max`.
 */
export function tileBatchSize(each: number, queued: number, room: number, max: number): number {
  const fits = Math.max(1, Math.floor((TILE_BATCH_MS - TILE_SETUP_MS) / Math.max(1, each)));
  return Math.max(1, Math.min(max, fits, Math.ceil(queued / Math.max(1, room))));
}

/** What a worker runs for `tasks`: the task itself, or tiles of one query and zoom (one batch key) as a batch. */
export function toWorkerTask(tasks: QueryTask[]): WorkerTask {
  const [head] = tasks;
  if (tasks.length === 1 || head?.kind !== 'tile') return head!;
  const { sql, sources, geometryColumn, settings, costKey, z } = head;
  const tiles = (tasks as Extract<QueryTask, { kind: 'tile' }>[]).map(({ x, y }) => ({ x, y }));
  return { kind: 'tiles', sql, sources, geometryColumn, settings, ...(costKey === undefined ? {} : { costKey }), z, tiles };
}
