import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryBoundsSchema, QueryResultSchema } from '../schemas/query.ts';
import { hasCommand, replicasToLeaveOut } from '../scripts/fleet.ts';
import { childEnvironment, runScript, type WatchedProcess } from './helpers/processes.ts';
import { queryServer, sourceRef } from './helpers/queries.ts';
import { linkSampleData, sampleConfig } from './helpers/sample.ts';
import { findFreePort } from './helpers/web-app.ts';

const HAS_NGINX = hasCommand('nginx');
if (!HAS_NGINX) console.warn('tests/fleet.test.ts is skipped: nginx is not installed (apt-get install -y nginx)');

const CATALOG_PATHS = ['/api/collections', '/api/collections/geonames', '/api/collections/natural-earth/datasets/countries', '/stac/geonames'];

/** Statuses of a load run ("200", "502", "error"), and how many requests were in flight at a given moment. */
interface Load {
  inFlight: () => number;
  /** Requests answered 200 so far. */
  answered: () => number;
  /** Resolves once `n` more requests than now have been answered 200; rejects if that takes longer than `timeoutMs`. */
  waitForAnswers: (n: number, timeoutMs?: number) => Promise<void>;
  stop: () => Promise<Map<string, number>>;
}

/** `workers` clients in a loop until stopped, alternating catalog reads and pages of a query, through nginx. */
function startLoad(origin: string, page: () => Promise<Response>, workers = 8): Load {
  const statuses = new Map<string, number>();
  let open = 0;
  let running = true;
  const loops = Array.from({ length: workers }, async (_, worker) => {
    for (let turn = worker; running; turn++) {
      open++;
      const sent = turn % 2 === 0 ? page() : fetch(`${origin}${CATALOG_PATHS[turn % CATALOG_PATHS.length]}`);
      const status = await sent.then(async (response) => (await response.arrayBuffer(), String(response.status)), () => 'error');
      open--;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  });
  const answered = () => statuses.get('200') ?? 0;
  const waitForAnswers = async (n: number, timeoutMs = 30_000) => {
    const target = answered() + n;
    const until = Date.now() + timeoutMs;
    while (answered() < target) {
      if (Date.now() > until) throw new Error(`the fleet answered ${answered() - target + n} of ${n} requests within ${timeoutMs} ms`);
      await sleep(50);
    }
  };
  return {
    inFlight: () => open,
    answered,
    waitForAnswers,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return statuses;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const count = (statuses: Map<string, number>, accept: (status: string) => boolean) => [...statuses].filter(([status]) => accept(status)).reduce((sum, [, n]) => sum + n, 0);

describe('npm run fleet without nginx', () => {
  it('says how to install it and exits 1', async () => {
    const path = (process.env.PATH ?? '').split(delimiter).filter((dir) => !existsSync(join(dir, 'nginx'))).join(delimiter);
    const fleet = runScript(['scripts/fleet.ts'], { ...process.env, PATH: path });
    expect(await fleet.exitCode()).toBe(1);
    expect(fleet.output()).toContain('install with `apt-get install -y nginx`');
  });
});

describe.skipIf(!HAS_NGINX)('npm run fleet: two replicas of npm run serve behind nginx', () => {
  let fleet: WatchedProcess;
  let origin = '';
  let query: { id: string; token: string };
  let cities: ReturnType<typeof sourceRef>;

  /** The pid each replica slot runs now, from the fleet's log. */
  const replicaPids = () => {
    const pids = new Map<string, number>();
    for (const [, slot, pid] of fleet.output().matchAll(/replica (\d+) \(pid (\d+)\) is up/g)) pids.set(slot!, Number(pid));
    return pids;
  };
  const page = (offset = 5) => fetch(`${origin}/api/queries/${query.id}/pages`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-service-query-token': query.token }, body: JSON.stringify({ offset, page_size: 5 }),
  });

  beforeAll(async () => {
    const catalog = queryServer();
    cities = sourceRef(catalog, 'c', 'geonames', 'cities', 'cities-1000');
    await catalog.close();
    const port = await findFreePort();
    origin = `http://127.0.0.1:${port}`;
    const env = childEnvironment(sampleConfig(), { HOST: '127.0.0.1', GEOSHELF_QUERY_KEYS: '', GEOSHELF_QUERY_SPARE_WORKERS: '0' });
    fleet = runScript(['scripts/fleet.ts', '--no-build', '--replicas', '2', '--port', String(port)], env);
    await fleet.waitFor(/fleet ready/, 60_000);
  });
  afterAll(async () => {
    if (fleet?.child.exitCode === null) fleet.child.kill('SIGTERM');
    await fleet?.exitCode();
  });

  it('pages, bounds and tiles a query on the replica that did not make it, with the one key the fleet shares', async () => {
    const created = await fetch(`${origin}/api/queries`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sources: [cities], sql: 'SELECT city_id, name, geometry FROM c ORDER BY city_id', limit: 5 }),
    });
    expect(created.status).toBe(200);
    const maker = created.headers.get('x-upstream');
    expect(maker).toMatch(/^127\.0\.0\.1:\d+$/);
    const first = QueryResultSchema.parse(await created.json());
    query = { id: first.query_id, token: first.query_token };
    // Round robin sends the next request to the other replica; a request that came back to the maker is sent again.
    const elsewhere = async (send: (attempt: number) => Promise<Response>) => {
      for (let attempt = 0; attempt < 4; attempt++) {
        const response = await send(attempt);
        const upstream = response.headers.get('x-upstream');
        if (upstream && upstream !== maker) return response;
        await response.arrayBuffer();
      }
      throw new Error('nginx never sent the request to the other replica');
    };
    const second = await elsewhere(() => page());
    expect(second.status).toBe(200);
    const rows = QueryResultSchema.parse(await second.json()).rows as { city_id: number }[];
    expect(rows).toHaveLength(5);
    expect(rows[0]!.city_id).toBeGreaterThan((first.rows as { city_id: number }[])[4]!.city_id);
    const bounds = await elsewhere(() => fetch(`${origin}/api/queries/${query.id}/bounds`, { headers: { 'x-service-query-token': query.token } }));
    expect(bounds.status).toBe(200);
    // Every city of the file: its extent, as the catalog records it (-179.12, -77.85, 179.36, 78.22).
    expect(QueryBoundsSchema.parse(await bounds.json()).bounds.map(Math.round)).toEqual([-179, -78, 179, 78]);
    // Each attempt asks for another z1 tile, so that none comes from nginx's tile cache.
    const tile = await elsewhere((attempt) => fetch(`${origin}/api/queries/${query.id}/tiles/1/${attempt % 2}/${attempt >> 1}.mvt`, { headers: { 'x-service-query-token': query.token } }));
    expect(tile.status).toBe(200);
    expect(tile.headers.get('content-type')).toBe('application/vnd.mapbox-vector-tile');
    expect((await tile.arrayBuffer()).byteLength).toBeGreaterThan(100);
  });

  it('loses at most the requests in flight when a replica is killed, keeps answering, and starts the replica again', async () => {
    const victim = replicaPids().get('1')!;
    const load = startLoad(origin, () => page());
    await load.waitForAnswers(20);
    const inFlightAtKill = load.inFlight();
    process.kill(victim, 'SIGKILL');
    // The fleet kept serving if answers go on coming after the kill. How many come per second depends on the
    // machine (42 in 2 s on a busy one), so the load runs until 40 more have come, not for a fixed time.
    await load.waitForAnswers(40);
    await fleet.waitFor(new RegExp(`replica 1 \\(pid (?!${victim}\\))\\d+\\) is up`), 20_000);
    const statuses = await load.stop();
    expect(count(statuses, (status) => status !== '200')).toBeLessThanOrEqual(inFlightAtKill);
  });

  it('answers every request 2xx through a rolling restart (SIGHUP), with tokens made before it', async () => {
    await fleet.waitFor(/replica 1 \(pid \d+\) is up[\s\S]*replica 1 \(pid \d+\) is up/, 20_000);
    const before = replicaPids();
    const load = startLoad(origin, () => page());
    await load.waitForAnswers(10);
    fleet.child.kill('SIGHUP');
    const answeredAtHup = load.answered();
    await fleet.waitFor(/rolling restart done/, 45_000);
    const answeredDuringRestart = load.answered() - answeredAtHup;
    await load.waitForAnswers(10);
    const statuses = await load.stop();
    expect([...statuses.keys()]).toEqual(['200']);
    expect(answeredDuringRestart).toBeGreaterThan(0);
    const after = replicaPids();
    expect(after.get('1')).not.toBe(before.get('1'));
    expect(after.get('2')).not.toBe(before.get('2'));
  });

  it('stops on SIGTERM: nginx first, then the replicas drain, and the fleet exits 0', async () => {
    const drained = () => fleet.output().match(/\] drained: every accepted request was answered/g)?.length ?? 0;
    const drainedBefore = drained();
    fleet.child.kill('SIGTERM');
    expect(await fleet.exitCode()).toBe(0);
    expect(drained()).toBe(drainedBefore + 2);
    await expect(fetch(`${origin}/api/health`)).rejects.toThrow();
  });
});

describe('npm run fleet: which replicas nginx leaves out by their readiness', () => {
  it('leaves out those that answer not ready, keeps those that do not answer, and keeps all when none is ready', () => {
    expect(replicasToLeaveOut(new Map([[1, 'ready'], [2, 'not ready'], [3, 'no answer']]))).toEqual(new Set([2]));
    expect(replicasToLeaveOut(new Map([[1, 'ready'], [2, 'ready']]))).toEqual(new Set());
    // With none ready, each replica's own 503 names what it lacks; nginx's 502 with no replica would not.
    expect(replicasToLeaveOut(new Map([[1, 'not ready'], [2, 'not ready']]))).toEqual(new Set());
    expect(replicasToLeaveOut(new Map([[1, 'not ready'], [2, 'no answer']]))).toEqual(new Set());
  });
});

describe.skipIf(!HAS_NGINX)('npm run fleet over a data folder that loses a file', () => {
  let fleet: WatchedProcess;
  let origin = '';
  let dataDir = '';
  let taken = '';

  beforeAll(async () => {
    dataDir = await linkSampleData();
    taken = join(dataDir, 'geonames', 'cities', '3.1.0', 'cities-1000.parquet');
    const port = await findFreePort();
    origin = `http://127.0.0.1:${port}`;
    const env = childEnvironment({ ...sampleConfig(), dataDir }, { HOST: '127.0.0.1', GEOSHELF_QUERY_KEYS: '', GEOSHELF_QUERY_SPARE_WORKERS: '0' });
    fleet = runScript(['scripts/fleet.ts', '--no-build', '--replicas', '2', '--port', String(port)], env);
    await fleet.waitFor(/fleet ready/, 60_000);
  });
  afterAll(async () => {
    if (fleet?.child.exitCode === null) fleet.child.kill('SIGTERM');
    await fleet?.exitCode();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('says no replica is ready while the file is gone, keeps serving the catalog, and is ready again once it is back', async () => {
    expect((await fetch(`${origin}/api/health/ready`)).status).toBe(200);
    await rename(taken, `${taken}.away`);
    await fleet.waitFor(/no replica is ready/, 30_000);
    const answer = await fetch(`${origin}/api/health/ready`);
    expect(answer.status).toBe(503);
    const body = await answer.json() as { unreachable: { url: string }[] };
    expect(body.unreachable.map((source) => source.url.split('/').at(-1))).toEqual(['cities-1000.parquet']);
    // Alive, and serving what does not need the file.
    expect((await fetch(`${origin}/api/health`)).status).toBe(200);
    expect((await fetch(`${origin}/api/collections/geonames`)).status).toBe(200);
    // Each replica printed the missing source once, however many probes came.
    expect(fleet.output().match(/\] not ready: 1 of \d+ sources/g)).toHaveLength(2);

    await rename(`${taken}.away`, taken);
    let status = 503;
    for (let probe = 0; probe < 100 && status !== 200; probe++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = (await fetch(`${origin}/api/health/ready`)).status;
    }
    expect(status).toBe(200);
  });
});
