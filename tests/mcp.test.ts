import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import * as ajvFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_MAX_PAGE_BYTES, MCP_TOOLS, ToolErrorSchema } from '../core/api/mcp/tools.ts';
import { foldText } from '../core/text.ts';
import { loadConfig } from '../runtime/config.ts';
import { createServer } from '../server/app.ts';
import { listen } from '../server/listen.ts';
import { ROOT } from './helpers/catalog.ts';
import { TEST_KEYS } from './helpers/queries.ts';
import { startGeoshelf, type RunningSite } from './helpers/web-app.ts';

let site: RunningSite;
let client: Client;
let transport: StreamableHTTPClientTransport;
let tools: Tool[];
const run = promisify(execFile);
const ajv = new Ajv({ strict: false });
(ajvFormats as unknown as { default: (instance: Ajv) => Ajv }).default(ajv);

beforeAll(async () => {
  site = await startGeoshelf();
  client = new Client({ name: 'geoshelf-test', version: '1.0.0' });
  transport = new StreamableHTTPClientTransport(new URL(`${site.origin}/mcp`));
  await client.connect(transport);
  // Listing the tools also hands their output schemas to the client, which then checks every structuredContent.
  tools = (await client.listTools()).tools;
});
afterAll(async () => {
  await client?.close();
  await site?.close();
});

async function api<T = unknown>(path: string): Promise<T> {
  const response = await fetch(`${site.origin}${path}`);
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

/** Calls a tool that must succeed; checks its structured content against the declared outputSchema on its own as well. */
async function call<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  const schema = tools.find((tool) => tool.name === name)!.outputSchema!;
  const validate = ajv.compile(schema);
  expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true);
  expect(result.content[0]).toMatchObject({ type: 'text' });
  return result.structuredContent as T;
}

/** Calls a tool that must fail cleanly: a tool result with isError, never a protocol error. */
async function fail(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  return result;
}

const failureText = (result: CallToolResult) => JSON.stringify(result);

describe('MCP over Streamable HTTP at /mcp', () => {
  it('initializes at the newest protocol revision, statelessly, and lists every tool of MCP_TOOLS, read-only, with output schemas', async () => {
    expect(client.getServerVersion()?.name).toBe('geoshelf');
    expect(transport.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(transport.sessionId).toBeUndefined();
    expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(MCP_TOOLS).sort());
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.inputSchema.type, tool.name).toBe('object');
    }
  });

  it('is described truthfully by the server card: its endpoint, and exactly the tools tools/list gives', async () => {
    const card = await (await fetch(`${site.origin}/.well-known/mcp/server-card.json`)).json() as { remotes: { type: string; url: string }[]; tools: unknown[] };
    expect(card.remotes).toEqual([{ type: 'streamable-http', url: `${site.origin}/mcp` }]);
    const { tools } = await client.listTools();
    expect(card.tools).toEqual(tools.map(({ name, title, description, inputSchema, outputSchema }) => ({ name, title, description, inputSchema, outputSchema })));
  });

  it('passes the MCP Inspector\'s strict schema check with no warning', async () => {
    const launcher = join(ROOT, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
    const { stdout, stderr } = await run(process.execPath, [launcher, '--cli', `${site.origin}/mcp`, '--transport', 'http', '--method', 'tools/list', '--strict', '--format', 'json']);
    const answer = JSON.parse(stdout) as { result: { tools: Tool[] }; schemaFindings?: unknown[] };
    expect(answer.result.tools.map((tool) => tool.name).sort()).toEqual(Object.keys(MCP_TOOLS).sort());
    expect(answer.schemaFindings, JSON.stringify(answer.schemaFindings)?.slice(0, 2000)).toBeUndefined();
    expect(stderr).not.toMatch(/warning|error/i);
  });

  it('lists collections and tags, and search_datasets answers the same document as the collection listing of /api', async () => {
    const { collections } = await call<{ collections: { slug: string }[] }>('list_collections', {});
    expect(collections.map((collection) => collection.slug)).toContain('natural-earth');
    expect(await call('list_tags', { collection: 'natural-earth' })).toEqual(await api('/api/collections/natural-earth/datasets/tags'));
    const page = await call<{ datasets: { slug: string }[]; total: number }>('search_datasets', { collection: 'natural-earth', search: 'countries', limit: 5 });
    expect(page.datasets.map((dataset) => dataset.slug)).toContain('countries');
    expect(page).toEqual(await api('/api/collections/natural-earth?search=countries&limit=5'));
    const second = await call<{ offset: number }>('search_datasets', { collection: 'natural-earth', limit: 2, offset: 2 });
    expect(second).toEqual(await api('/api/collections/natural-earth?limit=2&offset=2'));
  });

  it('search_datasets without a collection searches every collection as one listing, each dataset naming its collection', async () => {
    const collections = await api<{ slug: string }[]>('/api/collections');
    type Hit = { slug: string; collection_slug: string };
    const everything = await call<{ datasets: Hit[]; total: number; collection?: unknown }>('search_datasets', { search: 'admin', limit: 1000 });
    expect(everything.collection).toBeUndefined();
    const perCollection = await Promise.all(collections.map(async ({ slug }) => ({
      slug, page: await api<{ datasets: { slug: string }[]; total: number }>(`/api/collections/${slug}?search=admin&limit=1000`),
    })));
    expect(perCollection.filter(({ page }) => page.total > 0).length).toBeGreaterThan(1);
    expect(everything.total).toBe(perCollection.reduce((sum, { page }) => sum + page.total, 0));
    for (const { slug, page } of perCollection) {
      expect(everything.datasets.filter((hit) => hit.collection_slug === slug).map((hit) => hit.slug), slug).toEqual(page.datasets.map((dataset) => dataset.slug));
    }
    const [first, second] = await Promise.all([0, 3].map((offset) => call<{ datasets: Hit[] }>('search_datasets', { search: 'Admin', limit: 3, offset })));
    expect([...first!.datasets, ...second!.datasets]).toEqual(everything.datasets.slice(0, 6));
    const hit = everything.datasets[0]!;
    const detail = await call<{ dataset: { slug: string } }>('get_dataset', { collection: hit.collection_slug, dataset: hit.slug });
    expect(detail.dataset.slug).toBe(hit.slug);
    const all = await call<{ datasets: (Hit & { name: string })[]; total: number }>('search_datasets', { limit: 1000 });
    expect(all.total).toBe((await api<{ dataset_count: number }[]>('/api/collections')).reduce((sum, { dataset_count }) => sum + dataset_count, 0));
    const names = all.datasets.map((dataset) => foldText(dataset.name));
    expect(names).toEqual([...names].sort());
    const text = ((await client.callTool({ name: 'search_datasets', arguments: { search: 'admin', limit: 2 } })) as CallToolResult).content[0] as { text: string };
    expect(text.text).toContain(`${hit.collection_slug}/${hit.slug}`);
  });

  it('get_dataset gives the detail document with download URLs, and get_file the file with the same dictionary as the schema route', async () => {
    const detail = await call('get_dataset', { collection: 'natural-earth', dataset: 'countries' });
    expect(detail).toEqual(await api('/api/collections/natural-earth/datasets/countries?include_urls=true'));
    const { file, dictionary } = await call<{ file: { slug: string }; dictionary: { schema: { columns: { name: string }[] } } }>(
      'get_file', { collection: 'natural-earth', dataset: 'countries', file: 'countries-110m' });
    expect(file.slug).toBe('countries-110m');
    const schema = await api<{ schema: { columns: unknown[] } }>('/api/collections/natural-earth/datasets/countries/files/countries-110m/schema');
    expect(dictionary).toEqual(schema);
    expect(dictionary.schema.columns.map((column) => column.name)).toContain('name');
  });

  it('get_source gives one source of the detail document, whose download links answer', async () => {
    const detail = await api<{ dataset: { files: { formats: { sources: { id: number }[] }[] }[] } }>('/api/collections/natural-earth/datasets/countries?include_urls=true');
    const expected = detail.dataset.files[0]!.formats[0]!.sources[0]!;
    const source = await call<{ id: number; url: string; links: { download_zip: string } }>('get_source', { collection: 'natural-earth', dataset: 'countries', source_id: expected.id });
    expect(source).toEqual(expected);
    expect((await fetch(source.url, { method: 'HEAD' })).status).toBe(200);
    expect((await fetch(source.links.download_zip, { method: 'HEAD' })).status).toBe(200);
    const missing = await fail('get_source', { collection: 'natural-earth', dataset: 'countries', source_id: 999_999 });
    expect(failureText(missing)).toContain('not_found');
  });

  it('runs a query from the ids get_dataset gives, pages it, and frames it', async () => {
    const { collection, dataset } = await call<{ collection: { id: number }; dataset: { id: number; files: { id: number; slug: string; formats: { format: { format_type: string }; sources: { id: number }[] }[] }[] } }>(
      'get_dataset', { collection: 'natural-earth', dataset: 'countries' });
    const file = dataset.files.find((candidate) => candidate.slug === 'countries-110m')!;
    const source = file.formats.find((format) => format.format.format_type === 'geoparquet')!.sources[0]!;
    const sources = [{ alias: 'countries', collection_id: collection.id, dataset_id: dataset.id, file_id: file.id, file_source_id: source.id }];
    const sql = 'SELECT name, geometry FROM countries ORDER BY name';
    type Page = { rows: { name: string }[]; has_more: boolean; next_offset?: number; query_id: string; query_token: string; map_configuration?: { source: { tiles: string[] } } };
    const first = await call<Page>('run_query', { sources, sql, limit: 2 });
    expect(first.rows).toHaveLength(2);
    expect(first.has_more).toBe(true);
    expect(first.map_configuration?.source.tiles[0]).toContain(`/api/queries/${first.query_id}/tiles/{z}/{x}/{y}.mvt`);
    const next = await call<Page>('get_query_page', { query_id: first.query_id, query_token: first.query_token, offset: first.next_offset!, page_size: 2 });
    // Four countries before Antarctica, whose outline alone would pass the 32 KiB of rows an MCP page holds.
    const whole = await call<Page>('run_query', { sources, sql, limit: 4 });
    expect(whole.rows).toHaveLength(4);
    expect([...first.rows, ...next.rows].map((row) => row.name)).toEqual(whole.rows.map((row) => row.name));
    const { bounds } = await call<{ bounds: number[] }>('get_query_bounds', { query_id: first.query_id, query_token: first.query_token });
    expect(bounds).toHaveLength(4);
    expect(bounds[1]!).toBeLessThan(bounds[3]!);
    expect(bounds[1]!).toBeGreaterThanOrEqual(-90);
  });

  it('cuts a page at 32 KiB of rows, where /api/queries would send all of them, and reads on from next_offset', async () => {
    const { collection, dataset } = await call<{ collection: { id: number }; dataset: { id: number; files: { id: number; slug: string; formats: { format: { format_type: string }; sources: { id: number }[] }[] }[] } }>(
      'get_dataset', { collection: 'geonames', dataset: 'cities' });
    const file = dataset.files.find((candidate) => candidate.slug === 'cities-1000')!;
    const source = file.formats.find((format) => format.format.format_type === 'geoparquet')!.sources[0]!;
    const body = { sources: [{ alias: 'c', collection_id: collection.id, dataset_id: dataset.id, file_id: file.id, file_source_id: source.id }], sql: 'SELECT * FROM c ORDER BY city_id', limit: 1000 };
    type Page = { rows: { city_id: number }[]; response_truncated: boolean; next_offset?: number; warnings: string[]; query_id: string; query_token: string };
    const page = await call<Page>('run_query', body);
    expect(page.response_truncated).toBe(true);
    expect(JSON.stringify(page.rows).length).toBeLessThanOrEqual(MCP_MAX_PAGE_BYTES);
    expect(page.next_offset).toBe(page.rows.length);
    expect(page.warnings.join(' ')).toContain(`${MCP_MAX_PAGE_BYTES} bytes`);
    const api = await (await fetch(`${site.origin}/api/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Page;
    expect(api.rows).toHaveLength(1000);
    const next = await call<Page>('get_query_page', { query_id: page.query_id, query_token: page.query_token, offset: page.next_offset!, page_size: 1000 });
    expect(next.rows[0]!.city_id).toBe(api.rows[page.rows.length]!.city_id);
    expect(JSON.stringify(next.rows).length).toBeLessThanOrEqual(MCP_MAX_PAGE_BYTES);
  });

  it('answers bad input with isError and a code, without echoing SQL', async () => {
    const codeOf = (result: CallToolResult) => {
      const body = ToolErrorSchema.parse(JSON.parse((result.content[0] as { text: string }).text));
      return body.code;
    };
    expect(codeOf(await fail('search_datasets', { collection: 'no-such-collection' }))).toBe('not_found');
    expect(codeOf(await fail('list_tags', { collection: 'no-such-collection' }))).toBe('not_found');
    expect(codeOf(await fail('get_query_bounds', { query_id: 'a'.repeat(24), query_token: 'not-a-token' }))).toBe('token_invalid');
    expect(codeOf(await fail('search_datasets', { collection: 'natural-earth', tag_filters: 'nokey:x' }))).toBe('invalid_parameter');
    expect(codeOf(await fail('search_datasets', { tag_filters: 'nokey:x' }))).toBe('invalid_parameter');
    expect(failureText(await fail('search_datasets', { tag_filters: 'no colon' }))).toMatch(/tag_filters/);
    expect(codeOf(await fail('get_dataset', { collection: 'natural-earth', dataset: 'tags' }))).toBe('not_found');
    expect(codeOf(await fail('get_file', { collection: 'natural-earth', dataset: 'countries', file: 'nope' }))).toBe('not_found');
    expect(codeOf(await fail('get_file', { collection: 'natural-earth', dataset: 'countries', file: 'countries-110m', version: 'v-none' }))).toBe('not_found');
    const ref = { alias: 't', collection_id: 1, dataset_id: 99999, file_id: 1, file_source_id: 1 };
    expect(codeOf(await fail('run_query', { sources: [ref], sql: 'SELECT 1' }))).toBe('source_not_found');

    const { dataset, collection } = await call<{ collection: { id: number }; dataset: { id: number; files: { id: number; formats: { sources: { id: number }[] }[] }[] } }>(
      'get_dataset', { collection: 'natural-earth', dataset: 'countries' });
    const good = { alias: 't', collection_id: collection.id, dataset_id: dataset.id, file_id: dataset.files[0]!.id, file_source_id: dataset.files[0]!.formats[0]!.sources[0]!.id };
    const hostile = await fail('run_query', { sources: [good], sql: "SELECT * FROM '/etc/passwd'" });
    expect(codeOf(hostile)).toBe('sql_file_not_allowed');
    expect(failureText(hostile)).not.toContain('passwd');
    const reader = await fail('run_query', { sources: [good], sql: "SELECT * FROM read_csv('/etc/passwd')" });
    expect(codeOf(reader)).toBe('sql_table_function_not_allowed');
    expect(failureText(reader)).not.toContain('passwd');
    const pragma = await fail('run_query', { sources: [good], sql: "PRAGMA database_list" });
    expect(codeOf(pragma)).toBe('sql_not_select');
    expect(failureText(pragma)).not.toContain('database_list');

    expect(codeOf(await fail('get_query_page', { query_id: 'a'.repeat(24), query_token: 'not-a-token', offset: 0 }))).toBe('token_invalid');
    // Wrong types are refused by the SDK's input check, as a tool error too, never a protocol error.
    const wrongType = await fail('run_query', { sources: [good], sql: 42 });
    expect(failureText(wrongType)).toMatch(/sql/);
    const oversized = await fail('search_datasets', { collection: 'natural-earth', search: 'x'.repeat(10_000) });
    expect(failureText(oversized)).not.toContain('x'.repeat(100));
  });

  it('serves datasets and dictionaries as resources, and an explore_dataset prompt', async () => {
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate);
    expect(templates).toEqual(expect.arrayContaining([
      'geoshelf://collections/{collection}/datasets/{dataset}',
      'geoshelf://collections/{collection}/datasets/{dataset}/files/{file}/schema',
    ]));
    const read = await client.readResource({ uri: 'geoshelf://collections/natural-earth/datasets/countries/files/countries-110m/schema' });
    const text = (read.contents[0] as { text: string }).text;
    expect(JSON.parse(text)).toEqual(await api('/api/collections/natural-earth/datasets/countries/files/countries-110m/schema'));
    await expect(client.readResource({ uri: 'geoshelf://collections/natural-earth/datasets/no-such' })).rejects.toThrow(/no dataset|no such/i);
    const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(prompts).toEqual(expect.arrayContaining(['explore_dataset', 'write_query']));
    const question = await client.getPrompt({ name: 'write_query', arguments: { collection: 'natural-earth', dataset: 'countries', question: 'Which country is largest?' } });
    expect(JSON.stringify(question.messages)).toContain('Which country is largest?');
    const prompt = await client.getPrompt({ name: 'explore_dataset', arguments: { collection: 'natural-earth', dataset: 'countries' } });
    expect(JSON.stringify(prompt.messages)).toContain('countries');
  });
});

describe('the /mcp endpoint over plain HTTP', () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

  it('answers GET and DELETE with 405 and Allow: POST, since it opens no server-initiated stream', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${site.origin}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow'), method).toBe('POST');
    }
  });

  it('serves a request from its own origin or without Origin, and refuses another origin with 403', async () => {
    const own = await fetch(`${site.origin}/mcp`, { method: 'POST', headers: { ...headers, origin: site.origin }, body: initialize });
    expect(own.status).toBe(200);
    expect(((await own.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    const foreign = await fetch(`${site.origin}/mcp`, { method: 'POST', headers: { ...headers, origin: 'http://attacker.example' }, body: initialize });
    expect(foreign.status).toBe(403);
  });

  it('refuses a JSON-RPC batch with 400 and Invalid Request, at every protocol revision, without answering any of its messages', async () => {
    const batch = JSON.stringify(Array.from({ length: 100 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/list' })));
    for (const version of [LATEST_PROTOCOL_VERSION, '2025-06-18', '2025-03-26']) {
      const response = await fetch(`${site.origin}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': version }, body: batch });
      expect(response.status, version).toBe(400);
      expect(await response.json(), version).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/batches are not supported/) } });
    }
    const single = await fetch(`${site.origin}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }) });
    expect(((await single.json()) as { id: number; result: { tools: unknown[] } }).result.tools).toHaveLength(Object.keys(MCP_TOOLS).length);
    const broken = await fetch(`${site.origin}/mcp`, { method: 'POST', headers, body: '[{"jsonrpc": "2.0",' });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ error: { code: -32700 } });
  });

  it('refuses a body over 256 KiB with 413', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_collections', arguments: { pad: 'x'.repeat(300 * 1024) } } });
    const response = await fetch(`${site.origin}/mcp`, { method: 'POST', headers: { ...headers, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }, body });
    expect(response.status).toBe(413);
  });
});

describe('the rate bound on /mcp', () => {
  let limited: { origin: string; close: () => Promise<void> };

  beforeAll(async () => {
    // The same build as above, served by a second server whose clients may send 2 requests a second (bursts of 4).
    const geoshelf = createServer({ config: loadConfig({}, { distDir: site.distDir, queryKeys: TEST_KEYS, mcpRate: 2 }) });
    const server = await listen(geoshelf, { port: 0, hostname: '127.0.0.1' });
    limited = {
      origin: new URL(server.url!).origin,
      close: async () => {
        await server.close(true);
        await geoshelf.close();
      },
    };
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('answers a burst past the bucket with 429, Retry-After and a JSON-RPC error, then serves the client again', async () => {
    const ping = () => fetch(`${limited.origin}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    const burst = await Promise.all(Array.from({ length: 8 }, ping));
    const statuses = burst.map((response) => response.status);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(4);
    const refused = burst.find((response) => response.status === 429);
    expect(refused, statuses.join(',')).toBeDefined();
    const retryAfter = Number(refused!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(await refused!.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/too many requests/i) }, id: null });
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    const later = await ping();
    expect(later.status).toBe(200);
    expect(await later.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: {} });
  });
});
