import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { listen } from '../server/listen.ts';
import { queryServer, sourceRef, untilShed } from './helpers/queries.ts';

// One worker, and a client may have two tasks waiting: a burst of one client overflows its own share at once.
const small = queryServer({ queryWorkers: 1, querySpareWorkers: 0, queryClientQueue: 2, queryTimeoutMs: 30_000, mcpRate: 0 });
const SLOW = 'SELECT sum(length(a.name || b.name || c.name)) AS n FROM countries a, countries b, countries c';
const LIGHT = 'SELECT count(*) AS n FROM countries';
let port = 0;
let stop: () => Promise<void>;

beforeAll(async () => {
  const server = await listen(small, { port: 0, hostname: '127.0.0.1' });
  port = Number(new URL(server.url!).port);
  stop = () => server.close(true);
  await small.queries.start();
});
afterAll(async () => {
  await stop?.();
  await small.close();
});

type Outcome = { ok: boolean; code?: string; message?: string; status: number };

/** POSTs from a given loopback address (127.0.0.0/8 is all loopback), so the server counts it as that client. */
function postFrom(localAddress: string, path: string, payload: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, any> }> {
  const body = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ host: '127.0.0.1', port, localAddress, method: 'POST', path, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (incoming) => {
      let text = '';
      incoming.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: incoming.statusCode!, body: JSON.parse(text) }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** run_query over MCP from an address: ok, or the code and message of its failure. */
async function runQueryFrom(localAddress: string, sql: string): Promise<Outcome> {
  const args = { sources: [sourceRef(small, 'countries', 'natural-earth', 'countries', 'countries-110m')], sql, limit: 1 };
  const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  const { status, body } = await postFrom(localAddress, '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_query', arguments: args } }, headers);
  if (!body.result?.isError) return { ok: true, status };
  return { ok: false, status, ...(JSON.parse(body.result.content[0].text) as { code: string; message: string }) };
}

/** POST /api/queries from an address. */
async function queryFrom(localAddress: string, sql: string): Promise<Outcome> {
  const { status, body } = await postFrom(localAddress, '/api/queries', { sources: [sourceRef(small, 'countries', 'natural-earth', 'countries', 'countries-110m')], sql, limit: 1 });
  return { ok: status === 200, status, code: body.code, message: body.message };
}

const burstOf = (localAddress: string) => Array.from({ length: 10 }, (_, index) => runQueryFrom(localAddress, `${SLOW} WHERE a.name <> '${index}'`));
const SHARE_FULL = /this client already has as many tasks waiting as one client may have/;

describe('MCP clients in the query pool, told apart by their remote address', () => {
  it('sheds one address\'s burst of run_query past its share, while another address\'s run_query runs', async () => {
    const burst = burstOf('127.0.0.2');
    await untilShed(burst, (answer) => !answer.ok);
    const other = await runQueryFrom('127.0.0.3', LIGHT);
    expect(other, JSON.stringify(other)).toMatchObject({ ok: true });
    const answers = await Promise.all(burst);
    const shed = answers.filter((answer) => !answer.ok);
    expect(shed.length).toBeGreaterThan(0);
    for (const answer of shed) expect(answer).toMatchObject({ code: 'query_service_busy', message: expect.stringMatching(SHARE_FULL) });
    expect(answers.filter((answer) => answer.ok).length).toBeGreaterThanOrEqual(3);
  });

  it('counts run_query over MCP and POST /api/queries from one address as one client', async () => {
    const burst = burstOf('127.0.0.4');
    await untilShed(burst, (answer) => !answer.ok);
    const same = await queryFrom('127.0.0.4', LIGHT);
    expect(same).toMatchObject({ ok: false, status: 503, code: 'query_service_busy', message: expect.stringMatching(SHARE_FULL) });
    await Promise.all(burst);
  });
});
