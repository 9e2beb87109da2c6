import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryResultSchema } from '../schemas/query.ts';
import type { GeoshelfServer } from '../server/app.ts';
import { childEnvironment, runScript, type WatchedProcess } from './helpers/processes.ts';
import { queryServer, sourceRef, TEST_KEYS } from './helpers/queries.ts';
import { sampleConfig } from './helpers/sample.ts';
import { findFreePort } from './helpers/web-app.ts';

/** A count over 135,233 × 2,000 pairs of cities: about a second here, long enough to be in flight. */
const SLOW_SQL = 'SELECT count(*) AS n FROM c a, (SELECT population FROM c LIMIT 2000) b WHERE a.population < b.population';

let catalog: GeoshelfServer;
let cities: ReturnType<typeof sourceRef>;
const started: WatchedProcess[] = [];

beforeAll(() => {
  catalog = queryServer();
  cities = sourceRef(catalog, 'c', 'geonames', 'cities', 'cities-1000');
});
afterAll(async () => {
  for (const { child } of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await catalog.close();
});

/** `npm run serve` on a free port, warmed up by one query so its workers are running. */
async function startServe(extra: Record<string, string> = {}): Promise<{ serve: WatchedProcess; port: number }> {
  const port = await findFreePort();
  const serve = runScript(['server/main.ts', '--no-build'], childEnvironment(sampleConfig(), { PORT: String(port), HOST: '127.0.0.1', GEOSHELF_QUERY_KEYS: TEST_KEYS, ...extra }));
  started.push(serve);
  await serve.waitFor(/geoshelf is serving/);
  expect((await runQuery(port, 'SELECT count(*) AS n FROM c')).status).toBe(200);
  return { serve, port };
}

function runQuery(port: number, sql: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/api/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sources: [cities], sql, limit: 5 }) });
}

/** Whether a fresh TCP connection to the port is refused. */
function isRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('SIGTERM on npm run serve', () => {
  it('finishes the query in flight, refuses new connections at once, and exits 0 without waiting for idle keep-alive connections', async () => {
    const { serve, port } = await startServe();
    const slow = runQuery(port, SLOW_SQL);
    await new Promise((resolve) => setTimeout(resolve, 250));
    serve.child.kill('SIGTERM');
    await serve.waitFor(/draining: .*finishing 1 request\(s\) in flight/);
    expect(await isRefused(port)).toBe(true);
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(QueryResultSchema.parse(await answer.json()).rows[0]).toHaveProperty('n');
    const answeredAt = performance.now();
    expect(await serve.exitCode()).toBe(0);
    // The warm-up query's connection stays idle in fetch's pool; the server must not wait 65 s for it.
    expect(performance.now() - answeredAt).toBeLessThan(5000);
    expect(serve.output()).toContain('drained: every accepted request was answered');
  });

  it('exits 1 and says how many requests it cut when the grace period runs out', async () => {
    const { serve, port } = await startServe({ GEOSHELF_SHUTDOWN_GRACE_MS: '100' });
    const slow = runQuery(port, SLOW_SQL).then((response) => response.status, () => 'cut');
    await new Promise((resolve) => setTimeout(resolve, 250));
    serve.child.kill('SIGTERM');
    expect(await serve.exitCode()).toBe(1);
    expect(serve.output()).toContain('with 1 request(s) unfinished');
    expect(await slow).toBe('cut');
  });
});
