import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Server as NodeServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QueryResultSchema } from '../schemas/query.ts';
import { HTTP_TIMEOUTS, listen } from '../server/listen.ts';
import { postQueryFrom, queryServer, sourceRef, untilShed } from './helpers/queries.ts';

const geoshelf = queryServer();
let origin = '';
let nodeServer: NodeServer;
let close: () => Promise<void>;

beforeAll(async () => {
  const server = await listen(geoshelf, { port: 0, hostname: '127.0.0.1' });
  origin = server.url!.replace(/\/$/, '');
  nodeServer = server.node!.server as NodeServer;
  close = () => server.close(true);
});
afterAll(async () => {
  await close();
  await geoshelf.close();
});

const countries = () => sourceRef(geoshelf, 'countries', 'natural-earth', 'countries', 'countries-110m');

/** Query worker processes this process has started and that still run. */
function countWorkers(): number {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('query/worker.ts');
    } catch {
      return false;
    }
  }).length;
}

describe('the query routes over a real socket', () => {
  it('start the query workers before the server listens, so that no query waits for them', () => {
    // No query has been sent yet: the pool would start on the first one otherwise. Two workers and two spares.
    expect(countWorkers()).toBe(4);
  });

  it('give the largest valid query a token of at most 12 KB that later calls accept', async () => {
    // 8 KiB of control characters, which JSON escapes six-fold, and eight sources with the longest aliases.
    const sources = Array.from({ length: 8 }, (_, i) => ({ ...countries(), alias: `${'a'.repeat(61)}${i}x`.slice(0, 63) }));
    const head = `SELECT name FROM ${sources[0]!.alias} ORDER BY name --`;
    const sql = `${head}${'\u0001'.repeat(8192 - head.length)}`;
    expect(new TextEncoder().encode(sql).byteLength).toBe(8192);
    const created = await fetch(`${origin}/api/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sources, sql, limit: 5 }) });
    expect(created.status).toBe(200);
    const first = QueryResultSchema.parse(await created.json());
    expect(first.query_token.length).toBeLessThanOrEqual(12 * 1024);
    const page = await fetch(`${origin}/api/queries/${first.query_id}/pages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-service-query-token': first.query_token }, body: JSON.stringify({ offset: 5, page_size: 5 }),
    });
    expect(page.status).toBe(200);
    expect(QueryResultSchema.parse(await page.json()).rows).toHaveLength(5);
  });

  it('do not log a request whose client went away while sending its body, and keep answering', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const { port } = new URL(origin);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write('POST /api/queries HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"sources": [');
        setTimeout(() => socket.destroy(), 100);
      });
      socket.on('close', () => resolve());
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const health = await fetch(`${origin}/api/health`);
    expect(health.status).toBe(200);
    expect(errors).not.toHaveBeenCalled();
    errors.mockRestore();
  });

  it('tell in Server-Timing where a query\'s time went, step by step, on pages, bounds and tiles', async () => {
    const stepsOf = (response: Response): Record<string, number> => {
      const header = response.headers.get('server-timing') ?? '';
      return Object.fromEntries(header.split(', ').map((entry) => {
        const [name, duration] = entry.split(';dur=');
        return [name, Number(duration)];
      }));
    };
    const created = await fetch(`${origin}/api/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sources: [countries()], sql: 'SELECT name, geometry FROM countries ORDER BY name', limit: 5 }) });
    expect(created.headers.get('timing-allow-origin')).toBe('*');
    const first = stepsOf(created);
    expect(Object.keys(first)).toEqual(['body', 'parse', 'token', 'check', 'wait', 'sandbox', 'query', 'rows', 'hop', 'shape', 'total']);
    for (const ms of Object.values(first)) expect(ms).toBeGreaterThanOrEqual(0);
    // The steps add up to the total, and the total is the server's time, within the request's time seen from here.
    const { total, ...steps } = first;
    expect(Object.values(steps).reduce((sum, ms) => sum + ms, 0)).toBeCloseTo(total!, 0);
    const { query_id: id, query_token: token } = QueryResultSchema.parse(await created.json());
    const headers = { 'x-service-query-token': token };
    const page = await fetch(`${origin}/api/queries/${id}/pages`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ offset: 5, page_size: 5 }) });
    expect(Object.keys(stepsOf(page))).toEqual(['body', 'token', 'parse', 'check', 'wait', 'sandbox', 'query', 'rows', 'hop', 'shape', 'total']);
    const bounds = await fetch(`${origin}/api/queries/${id}/bounds`, { headers });
    expect(Object.keys(stepsOf(bounds))).toEqual(['token', 'check', 'wait', 'sandbox', 'query', 'hop', 'shape', 'total']);
    const tile = await fetch(`${origin}/api/queries/${id}/tiles/0/0/0.mvt`, { headers });
    expect(tile.status).toBe(200);
    expect(Object.keys(stepsOf(tile))).toContain('query');
    // A tile asked again comes from the tile cache: no worker step.
    const again = await fetch(`${origin}/api/queries/${id}/tiles/0/0/0.mvt`, { headers });
    expect(Object.keys(stepsOf(again))).toEqual(['token', 'shape', 'total']);
  });

  it('bound how long a client may take to send a request and how long an idle connection stays open', () => {
    expect(nodeServer.requestTimeout).toBe(HTTP_TIMEOUTS.requestTimeout);
    expect(nodeServer.headersTimeout).toBe(HTTP_TIMEOUTS.headersTimeout);
    expect(nodeServer.keepAliveTimeout).toBe(HTTP_TIMEOUTS.keepAliveTimeout);
    expect(HTTP_TIMEOUTS.headersTimeout).toBeLessThan(HTTP_TIMEOUTS.requestTimeout);
  });
});

describe('clients of the query pool, told apart by their remote address', () => {
  // One worker, and a client may have two tasks waiting: a burst of one client overflows its own share at once.
  const small = queryServer({ queryWorkers: 1, querySpareWorkers: 0, queryClientQueue: 2, queryTimeoutMs: 30_000 });
  let smallOrigin = '';
  let stop: () => Promise<void>;
  beforeAll(async () => {
    const server = await listen(small, { port: 0, hostname: '127.0.0.1' });
    smallOrigin = server.url!.replace(/\/$/, '');
    stop = () => server.close(true);
    await small.queries.start();
  });
  afterAll(async () => {
    await stop();
    await small.close();
  });

  const postFrom = (localAddress: string, sql: string) => postQueryFrom(smallOrigin, localAddress, { sources: [sourceRef(small, 'countries', 'natural-earth', 'countries', 'countries-110m')], sql, limit: 1 });


  it('shed a burst of one address past its share with 503 naming the cause, while another address is served', async () => {
    const slow = 'SELECT sum(length(a.name || b.name || c.name)) AS n FROM countries a, countries b, countries c';
    const burst = Array.from({ length: 10 }, (_, index) => postFrom('127.0.0.2', `${slow} WHERE a.name <> '${index}'`));
    await untilShed(burst, (answer) => answer.status === 503);
    const other = await postFrom('127.0.0.1', 'SELECT count(*) AS n FROM countries');
    expect(other.status).toBe(200);
    const answers = await Promise.all(burst);
    const shed = answers.filter((answer) => answer.status === 503);
    expect(shed.length).toBeGreaterThan(0);
    for (const answer of shed) {
      expect(answer.body).toMatchObject({ code: 'query_service_busy', message: expect.stringMatching(/this client already has as many tasks waiting as one client may have/) });
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThanOrEqual(3);
  });
});
