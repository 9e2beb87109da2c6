/**
 * The sample's answers, recorded: every file of the built tree by its SHA-256, and the answers of the dynamic
 * surfaces (the catalog API's dynamic routes, queries, STAC, OGC API - Features, MCP) to a fixed list of requests,
 * with their status, content type and the SHA-256 of their body. A change of code that must not change behaviour
 * (issue 27: one way to build a surface) keeps this test passing unchanged.
 *
 * When an answer changes on purpose, record them again and commit the fixture with the change:
 *   GEOSHELF_RECORD_ANSWERS=1 npx vitest run tests/surface-answers.test.ts
 * Parts that differ from run to run by design (timings, bytes read, query ids, encrypted tokens) are left out of
 * the hash; the rest of the body counts byte for byte.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GeoshelfServer } from '../server/app.ts';
import { ROOT } from './helpers/catalog.ts';
import { post, sourceRef } from './helpers/queries.ts';
import { sampleManifest, sampleServer } from './helpers/sample.ts';

const FIXTURE = join(ROOT, 'tests/fixtures/surface-answers.json');
const RECORD = process.env.GEOSHELF_RECORD_ANSWERS === '1';
/** Fields of JSON answers that differ between two runs of the same request by design. */
const VOLATILE = new Set(['elapsed_ms', 'bytes_read', 'query_id', 'query_token', 'timeStamp', 'checked_at']);
/** Headers recorded beside the body, where an answer has them: what a method, a retry or a cache is told. */
const RECORDED_HEADERS = ['allow', 'retry-after', 'cache-control', 'content-disposition', 'accept-ranges', 'content-range'];
/** Answers named in a failure; the rest are counted. */
const SHOWN = 20;

interface Answer {
  status: number;
  type: string | null;
  sha256: string;
  /** The headers of {@link RECORDED_HEADERS} the answer has. */
  headers?: Record<string, string>;
}

interface Recorded {
  tree: Record<string, string>;
  answers: Record<string, Answer>;
}

/** A request of the list: a name (what the fixture keys it by) and how to make it. */
type Asked = [name: string, ask: (server: GeoshelfServer) => Promise<Response>];

const get = (path: string, headers: Record<string, string> = {}) => (server: GeoshelfServer) => Promise.resolve(server.fetch(new Request(`http://localhost${path}`, { headers })));
const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => (server: GeoshelfServer) =>
  Promise.resolve(server.fetch(new Request(`http://localhost${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })));
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };
const mcp = (id: number, method: string, params: unknown, path = '/mcp') => send('POST', path, { jsonrpc: '2.0', id, method, params }, MCP_HEADERS);
const CITIES = 'geonames.cities.cities-15000';
const ZIP = '/api/collections/geonames/datasets/admin-seats/files/first-order-seats/sources/7/download-zip';

/** The requests whose answers are recorded: each surface's documents, pages of data, and its errors. */
const ASKED: Asked[] = [
  ['GET /api/collections/geonames?search=cities', get('/api/collections/geonames?search=cities&limit=2')],
  ['GET /api/collections/geonames?limit=0', get('/api/collections/geonames?limit=0')],
  ['GET /api/collections/nowhere', get('/api/collections/nowhere')],
  ['POST /api/queries count', (server) => post(server, '/api/queries', { sql: 'SELECT count(*) AS n FROM t', sources: [sourceRef(server, 't', 'geonames', 'cities', 'cities-15000')] })],
  ['POST /api/queries page', (server) => post(server, '/api/queries', { sql: 'SELECT name, population FROM t ORDER BY population DESC, name', sources: [sourceRef(server, 't', 'geonames', 'cities', 'cities-15000')], limit: 5 })],
  ['POST /api/queries syntax error', (server) => post(server, '/api/queries', { sql: 'SELEC 1', sources: [] })],
  ['POST /api/queries forbidden', (server) => post(server, '/api/queries', { sql: "SELECT * FROM read_csv('/etc/passwd')", sources: [] })],
  ['DELETE /api/queries', send('DELETE', '/api/queries')],
  ['GET /stac', get('/stac')],
  ['GET /stac/api', get('/stac/api')],
  ['GET /stac/api/conformance', get('/stac/api/conformance')],
  ['GET /stac/api/search?limit=3', get('/stac/api/search?limit=3')],
  ['GET /stac/api/search bbox', get('/stac/api/search?bbox=-10,35,30,60&limit=2')],
  ['POST /stac/api/search', send('POST', '/stac/api/search', { limit: 2, bbox: [-130, 20, -60, 55] })],
  ['GET /stac/api/search?bbox=bad', get('/stac/api/search?bbox=1,2,3')],
  ['GET /stac/api/collections/nowhere', get('/stac/api/collections/nowhere')],
  ['DELETE /stac/api/search', send('DELETE', '/stac/api/search')],
  ['GET /features', get('/features')],
  ['GET /features/conformance', get('/features/conformance')],
  ['GET /features/collections', get('/features/collections')],
  ['GET /features/collections/{cities}', get(`/features/collections/${CITIES}`)],
  ['GET /features/collections/{cities}/items', get(`/features/collections/${CITIES}/items?limit=3`)],
  ['GET /features/collections/{cities}/items bbox', get(`/features/collections/${CITIES}/items?limit=2&bbox=2,48,3,49`)],
  ['GET /features/collections/{cities}/items/1', get(`/features/collections/${CITIES}/items/1`)],
  ['GET /features/collections/{cities}/items?limit=abc', get(`/features/collections/${CITIES}/items?limit=abc`)],
  ['GET /features/collections/nowhere', get('/features/collections/nowhere/items')],
  ['GET /features/collections/{cities}/items as HTML', get(`/features/collections/${CITIES}/items?limit=2`, { accept: 'text/html' })],
  ['PUT /features', send('PUT', '/features')],
  ['POST /mcp initialize', mcp(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'recorder', version: '1' } })],
  ['POST /mcp tools/list', mcp(2, 'tools/list', {})],
  ['POST /mcp search_datasets', mcp(3, 'tools/call', { name: 'search_datasets', arguments: { query: 'countries' } })],
  ['POST /mcp unknown tool', mcp(4, 'tools/call', { name: 'no_such_tool', arguments: {} })],
  ['GET /no/such/page', get('/no/such/page')],
  ['GET /api/health/ready', get('/api/health/ready')],
  ['HEAD /api/health/ready', send('HEAD', '/api/health/ready')],
  ['POST /api/health/ready', send('POST', '/api/health/ready', {})],
  ['GET /api/health/ready/more', get('/api/health/ready/more')],
  ['GET download-zip', get(ZIP)],
  ['HEAD download-zip', send('HEAD', ZIP)],
  ['GET download-zip range', get(ZIP, { range: 'bytes=0-99' })],
  ['PUT download-zip', send('PUT', ZIP, {})],
  ['GET download-zip of no source', get(ZIP.replace('/sources/7/', '/sources/999999/'))],
  ['GET download-zip of a bad source id', get(ZIP.replace('/sources/7/', '/sources/x/'))],
  ['GET /mcp', get('/mcp', MCP_HEADERS)],
  ['DELETE /mcp', send('DELETE', '/mcp', undefined, MCP_HEADERS)],
  ['POST /mcp/more', mcp(5, 'tools/list', {}, '/mcp/more')],
  ['POST /mcp not JSON', (server) => Promise.resolve(server.fetch(new Request('http://localhost/mcp', { method: 'POST', headers: { 'content-type': 'application/json', ...MCP_HEADERS }, body: '{' })))],
  ['POST /mcp from another origin', send('POST', '/mcp', { jsonrpc: '2.0', id: 6, method: 'tools/list', params: {} }, { ...MCP_HEADERS, origin: 'https://elsewhere.example' })],
];

/** The SHA-256 of a body, without the fields that differ by design when it is JSON. */
function hashBody(bytes: Buffer, type: string | null): string {
  let hashed: Buffer | string = bytes;
  if (type?.includes('json')) {
    try {
      hashed = JSON.stringify(JSON.parse(bytes.toString('utf8'), (key, value) => (VOLATILE.has(key) ? undefined : value)));
    } catch {
      // Not JSON after all: hashed as it is.
    }
  }
  return createHash('sha256').update(hashed).digest('hex');
}

/** The names whose values differ between two records, named up to SHOWN. */
function differences<T>(expected: Record<string, T>, actual: Record<string, T>): string[] {
  const names = [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort();
  const changed = names.filter((name) => JSON.stringify(expected[name]) !== JSON.stringify(actual[name]));
  return changed.length > SHOWN ? [...changed.slice(0, SHOWN), `and ${changed.length - SHOWN} more`] : changed;
}

describe('the sample\'s recorded answers', () => {
  let server: GeoshelfServer;
  let recorded: Recorded | undefined;
  const now: Recorded = { tree: {}, answers: {} };
  beforeAll(async () => {
    server = sampleServer();
    recorded = existsSync(FIXTURE) ? (JSON.parse(await readFile(FIXTURE, 'utf8')) as Recorded) : undefined;
  });
  afterAll(async () => {
    await server?.close();
    if (RECORD) await writeFile(FIXTURE, `${JSON.stringify(now, null, 1)}\n`);
  });

  it('builds every file of the tree with the bytes recorded', () => {
    for (const [key, file] of Object.entries(sampleManifest().files).sort(([a], [b]) => (a < b ? -1 : 1))) now.tree[key] = file.sha256;
    if (RECORD) return;
    expect(recorded, `${FIXTURE} is missing: record it (see the top of this file)`).toBeDefined();
    expect(differences(recorded!.tree, now.tree)).toEqual([]);
  });

  it('answers every recorded request with the status, type and body recorded', async () => {
    for (const [name, ask] of ASKED) {
      const response = await ask(server);
      const type = response.headers.get('content-type');
      const headers = Object.fromEntries(RECORDED_HEADERS.flatMap((header) => {
        const value = response.headers.get(header);
        return value === null ? [] : [[header, value]];
      }));
      now.answers[name] = { status: response.status, type, sha256: hashBody(Buffer.from(await response.arrayBuffer()), type), ...(Object.keys(headers).length ? { headers } : {}) };
    }
    if (RECORD) return;
    expect(differences(recorded!.answers, now.answers)).toEqual([]);
  });
});
