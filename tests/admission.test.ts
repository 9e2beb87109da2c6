import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientKeyOf, createCostModel, estimateWait, fairAhead, pickFairly, queueShare, retryAfterSeconds } from '../query/admission.ts';
import { QueryPool, type PoolOptions } from '../query/pool.ts';
import type { QueryTask, SandboxSettings, TaskOutcome } from '../query/protocol.ts';
import { ROOT } from './helpers/catalog.ts';

const countries = { alias: 'countries', path: join(ROOT, 'catalog-data/data/natural-earth/countries/2.0.2/countries-110m.parquet') };
const settings: SandboxSettings = { threads: 1, memoryLimitMb: 256, maxResponseBytes: 1_000_000, tileMaxFeatures: 1000 };
const page = (sql: string): QueryTask => ({ kind: 'page', sql, sources: [countries], offset: 0, limit: 10, geometryColumn: undefined, resultCrs: undefined, settings });
const LIGHT = page('SELECT count(*) AS n FROM countries');
/** Runs for minutes unless interrupted (177^4 strings built). */
const SLOW = page('SELECT sum(length(a.name || b.name || c.name || d.name)) AS n FROM countries a, countries b, countries c, countries d');
/** Runs about half a second (177^3 strings). */
const MEDIUM = page('SELECT sum(length(a.name || b.name || c.name)) AS n FROM countries a, countries b, countries c');

/** A started pool: a task's deadline counts its wait, so waiting for workers to spawn would eat into short deadlines. */
async function warmPool(options: Partial<PoolOptions> & Pick<PoolOptions, 'timeoutMs'>): Promise<QueryPool> {
  const pool = new QueryPool({ workers: 1, spareWorkers: 0, queue: 1024, memoryCapMb: 4096, graceMs: 500, ...options });
  await pool.ready();
  return pool;
}

async function timed(run: Promise<TaskOutcome>): Promise<{ outcome: TaskOutcome; ms: number }> {
  const started = performance.now();
  const outcome = await run;
  return { outcome, ms: performance.now() - started };
}

const codeOf = (outcome: TaskOutcome) => (outcome.ok ? 'ok' : outcome.error.code);

describe('estimates', () => {
  it.each([
    [[], [], 2, 0],
    [[300], [], 2, 0],
    [[300, 500], [], 2, 300],
    [[300], [100, 100], 2, 200],
    [[300, 500], [400], 2, 500],
    [[1000], [50, 50, 50], 1, 1150],
  ])('with runs %j left and %j queued on %i workers, a new task waits %i ms', (remaining, ahead, capacity, wait) => {
    expect(estimateWait(remaining, ahead, capacity)).toBe(wait);
  });

  it('asks a shed client to come back once its task would fit, between 1 and 60 seconds', () => {
    expect(retryAfterSeconds(9_500, 1_000, 10_000)).toBe(1);
    expect(retryAfterSeconds(14_000, 100, 10_000)).toBe(5);
    expect(retryAfterSeconds(900_000, 100, 10_000)).toBe(60);
  });

  it('learns a query\'s run time, and assumes a new query light', () => {
    const costs = createCostModel();
    expect(costs.expect('page/a', 'page')).toBe(100);
    for (let index = 0; index < 20; index++) costs.record('page/heavy', 'page', 5_000);
    expect(costs.known('page/heavy')).toBeCloseTo(5_000);
    expect(costs.expect('page/new', 'page', 500)).toBe(500);
    costs.record('page/heavy', 'page', 1_000);
    expect(costs.expect('page/heavy', 'page')).toBeGreaterThan(1_000);
  });

  it('does not let a query\'s first, cold tile stand for its tiles, and weighs a batch as many runs', () => {
    const costs = createCostModel();
    costs.record('tile/4/a', 'tile', 300);
    expect(costs.expect('tile/4/a', 'tile')).toBeLessThan(150);
    costs.record('tile/4/a', 'tile', 30, 12);
    expect(costs.expect('tile/4/a', 'tile')).toBeLessThan(40);
  });
});

describe('admission to the worker pool', () => {
  it('accepts a burst far larger than the old queue of 16, and answers all of it', async () => {
    const pool = await warmPool({ timeoutMs: 20_000 });
    const outcomes = await Promise.all(Array.from({ length: 60 }, () => pool.run(LIGHT)));
    expect(outcomes.map(codeOf)).toEqual(Array(60).fill('ok'));
    await pool.close();
  });

  it('answers a waiting task 503 when its wait runs out, not when a worker frees up', async () => {
    const pool = await warmPool({ timeoutMs: 1500 });
    const slow = timed(pool.run(SLOW));
    const waiting = await Promise.all([timed(pool.run(LIGHT)), timed(pool.run(LIGHT))]);
    for (const { outcome, ms } of waiting) {
      expect(outcome).toMatchObject({ ok: false, error: { status: 503, code: 'query_service_busy' } });
      expect((outcome as { retryAfter?: number }).retryAfter).toBeGreaterThanOrEqual(1);
      expect(ms).toBeLessThan(1500 + 400);
    }
    const { outcome, ms } = await slow;
    expect(outcome).toMatchObject({ ok: false, error: { status: 504, code: 'query_timeout' } });
    expect(ms).toBeLessThan(1500 + 1500);
    await pool.close();
  });

  it('counts the wait in the deadline: a task that waited gets only what is left to run', async () => {
    const pool = await warmPool({ timeoutMs: 2000 });
    const first = pool.run(MEDIUM);
    const second = await timed(pool.run(SLOW));
    expect(['query_service_busy', 'query_timeout']).toContain(codeOf(second.outcome));
    expect(second.ms).toBeLessThan(2000 + 500 + 600);
    await first;
    await pool.close();
  });

  it('sheds at once, with a retry time, a task whose expected wait and run would pass the deadline', async () => {
    const pool = await warmPool({ timeoutMs: 1200 });
    expect(codeOf(await pool.run(SLOW))).toBe('query_timeout');
    const running = pool.run(SLOW);
    const shed = await timed(pool.run(SLOW));
    expect(shed.outcome).toMatchObject({ ok: false, error: { code: 'query_service_busy' } });
    expect((shed.outcome as { retryAfter?: number }).retryAfter).toBeGreaterThanOrEqual(1);
    expect(shed.ms).toBeLessThan(300);
    await running;
    await pool.close();
  });

  it('keeps a hard cap on waiting tasks', async () => {
    const pool = await warmPool({ timeoutMs: 1500, queue: 2 });
    const running = pool.run(SLOW);
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => pool.run(LIGHT)));
    const shed = outcomes.filter((outcome) => !outcome.ok && outcome.error.code === 'query_service_busy');
    expect(shed.length).toBeGreaterThanOrEqual(4);
    for (const outcome of shed) expect((outcome as { retryAfter?: number }).retryAfter).toBeGreaterThanOrEqual(1);
    await pool.close();
    await running;
  });

  it('lets light tasks through while a heavy one runs, on a spare worker', async () => {
    const pool = await warmPool({ timeoutMs: 8000, spareWorkers: 1, heavyAfterMs: 300 });
    const slow = pool.run(SLOW);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const light = await Promise.all(Array.from({ length: 6 }, () => timed(pool.run(LIGHT))));
    for (const { outcome, ms } of light) {
      expect(codeOf(outcome)).toBe('ok');
      expect(ms).toBeLessThan(3000);
    }
    await pool.close();
    expect(codeOf(await slow)).toBe('query_service_unavailable');
  });
});

describe('tiles of one query at once', () => {
  const tile = (x: number, y: number): QueryTask => ({ kind: 'tile', sql: 'SELECT name, geometry FROM countries', sources: [countries], geometryColumn: undefined, settings, z: 2, x, y });
  const all = Array.from({ length: 16 }, (_, index) => tile(index % 4, Math.floor(index / 4)));

  it('are coalesced into batches that answer each tile as it would be answered alone', async () => {
    const batched = await warmPool({ timeoutMs: 20_000 });
    const alone = await warmPool({ timeoutMs: 20_000, maxTileBatch: 1 });
    const together = await Promise.all(all.map((task) => batched.run(task)));
    const single = await Promise.all(all.map((task) => alone.run(task)));
    expect(together.map(codeOf)).toEqual(Array(16).fill('ok'));
    const summary = (outcome: TaskOutcome) => (outcome.ok && 'features' in outcome.value ? [outcome.value.features, outcome.value.truncated, outcome.value.bytes.byteLength] : []);
    expect(together.map(summary)).toEqual(single.map(summary));
    expect(together.some((outcome) => summary(outcome)[0] !== 0)).toBe(true);
    await Promise.all([batched.close(), alone.close()]);
  });
});

describe('fair shares of the pool, as rules', () => {
  const queued = (clients: string) => [...clients].map((client) => ({ client, expected: 100 }));

  it.each([
    ['aaaa', 'b', 1],
    ['aaaa', 'a', 4],
    ['aaaabb', 'b', 5],
    ['aaaabb', 'c', 2],
    ['abab', 'c', 2],
    ['', 'a', 0],
  ])('with tasks of clients %j queued, a new task of %j waits behind %i of them', (clients, client, count) => {
    expect(fairAhead(queued(clients), client)).toHaveLength(count);
  });

  it.each([
    // queue (clients in order), running per client, last turn served per client, expected index
    ['aab', {}, {}, 0],
    ['aab', { a: 1 }, {}, 2],
    ['aab', {}, { a: 3 }, 2],
    ['aabb', { a: 1, b: 1 }, { a: 5, b: 4 }, 2],
    ['ab', { a: 0, b: 2 }, { a: 9 }, 0],
  ] as const)('from queue %j, with %j running and turns %j, a free worker takes task %i', (clients, running, served, index) => {
    expect(pickFairly(queued(clients), new Map(Object.entries(running)), new Map(Object.entries(served)), () => true)).toBe(index);
  });

  it('skips tasks a worker may not take, and a client\'s later tasks stay behind its first', () => {
    const queue = [{ client: 'a', heavy: true }, { client: 'a', heavy: false }, { client: 'b', heavy: true }];
    expect(pickFairly(queue, new Map(), new Map(), (task) => !task.heavy)).toBe(1);
    expect(pickFairly(queue, new Map(), new Map(), () => false)).toBe(-1);
  });

  it.each([[1024, 1, 1024], [1024, 3, 341], [4, 8, 1], [0, 2, 1]])('gives each of the clients of a full queue of %i, %i clients, a share of %i', (cap, clients, share) => {
    expect(queueShare(cap, clients)).toBe(share);
  });

  it.each([
    ['127.0.0.2', '127.0.0.2'],
    ['::ffff:127.0.0.2', '127.0.0.2'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0000:0002:ffff::1', '2001:db8:0:2::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('counts the address %s as the client %s', (address, key) => {
    expect(clientKeyOf(address)).toBe(key);
  });
});

describe('fair shares of the pool, on real workers', () => {
  /** Runs MEDIUM once on a warm pool of one worker, so that its cost is known; returns it (ms). */
  async function learnMedium(pool: QueryPool): Promise<number> {
    const { outcome, ms } = await timed(pool.run(MEDIUM, 'a'));
    expect(codeOf(outcome)).toBe('ok');
    return ms;
  }

  it('does not let one client\'s burst make another client\'s task 503, while the same task of the bursting client is shed', async () => {
    const probe = await warmPool({ timeoutMs: 60_000 });
    const medium = Math.max(250, await learnMedium(probe));
    await probe.close();
    // The deadline holds twelve runs of MEDIUM: the burst fills it, so its later tasks, and one more of its client,
    // are shed. Another client's task waits behind one task of the burst, not behind all of it: two or three runs,
    // a margin that holds when a busy machine makes a run several times slower than the one learned.
    const pool = await warmPool({ timeoutMs: 12 * medium });
    await learnMedium(pool);
    const burst = Array.from({ length: 26 }, () => pool.run(MEDIUM, 'a'));
    const own = await pool.run(MEDIUM, 'a');
    const other = pool.run(MEDIUM, 'b');
    expect(own).toMatchObject({ ok: false, error: { code: 'query_service_busy', message: expect.stringMatching(/would pass the deadline/) } });
    expect(codeOf(await other)).toBe('ok');
    const outcomes = await Promise.all(burst);
    expect(outcomes.map(codeOf)).toContain('query_service_busy');
    await pool.close();
  });

  it('serves clients in turns at one worker, so a second client does not wait for the first one\'s whole burst', async () => {
    const pool = await warmPool({ timeoutMs: 60_000 });
    const order: string[] = [];
    const send = (client: string, index: number) => pool.run(LIGHT, client).then((outcome) => order.push(`${client}${index}:${codeOf(outcome)}`));
    await Promise.all([...Array.from({ length: 6 }, (_, index) => send('a', index + 1)), send('b', 1), send('b', 2)]);
    expect(order).toEqual(['a1:ok', 'a2:ok', 'b1:ok', 'a3:ok', 'b2:ok', 'a4:ok', 'a5:ok', 'a6:ok']);
    await pool.close();
  });

  it('answers 503 naming the cause past a client\'s cap on waiting tasks, and still admits other clients', async () => {
    const pool = await warmPool({ timeoutMs: 60_000, clientQueue: 3 });
    const running = pool.run(MEDIUM, 'a');
    const waiting = Array.from({ length: 3 }, () => pool.run(LIGHT, 'a'));
    const over = await pool.run(LIGHT, 'a');
    expect(over).toMatchObject({ ok: false, error: { status: 503, code: 'query_service_busy', message: expect.stringMatching(/this client already has as many tasks waiting as one client may have/) } });
    expect((over as { retryAfter?: number }).retryAfter).toBeGreaterThanOrEqual(1);
    expect(codeOf(await pool.run(LIGHT, 'b'))).toBe('ok');
    expect((await Promise.all([running, ...waiting])).map(codeOf)).toEqual(['ok', 'ok', 'ok', 'ok']);
    await pool.close();
  });

  it('admits a new client into a full queue in place of the newest task of the client holding the most', async () => {
    const pool = await warmPool({ timeoutMs: 60_000, queue: 4 });
    const running = pool.run(MEDIUM, 'a');
    const waiting = Array.from({ length: 4 }, () => pool.run(LIGHT, 'a'));
    const other = pool.run(LIGHT, 'b');
    const again = await pool.run(LIGHT, 'a');
    expect(again).toMatchObject({ ok: false, error: { code: 'query_service_busy', message: expect.stringMatching(/queue is full, and this client holds more than its share/) } });
    expect(codeOf(await other)).toBe('ok');
    const outcomes = await Promise.all([running, ...waiting]);
    expect(outcomes.map(codeOf)).toEqual(['ok', 'ok', 'ok', 'ok', 'query_service_busy']);
    expect((outcomes[4] as { error: { message: string } }).error.message).toMatch(/holds more than its share/);
    await pool.close();
  });
});

describe('the first task', () => {
  it('does not count the start of the workers in its deadline', async () => {
    // A deadline of three warm runs is far shorter than starting four worker processes at once (a Node process
    // loading DuckDB each): the first task of a new pool would be cut if the start counted.
    const probe = await warmPool({ timeoutMs: 120_000 });
    const runs = [];
    for (let index = 0; index < 4; index++) runs.push((await timed(probe.run(LIGHT))).ms);
    await probe.close();
    const deadline = Math.max(200, Math.round(3 * Math.max(...runs.slice(1))));
    const pool = new QueryPool({ workers: 1, spareWorkers: 3, queue: 16, memoryCapMb: 4096, timeoutMs: deadline });
    const { outcome, ms } = await timed(pool.run(LIGHT));
    expect(codeOf(outcome), `warm runs ${runs.map(Math.round).join(', ')} ms; deadline ${deadline} ms`).toBe('ok');
    // It was answered later than its deadline: the start, not the run, took that time.
    expect(ms).toBeGreaterThan(deadline);
    await pool.close();
  });
});
