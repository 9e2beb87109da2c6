import type { H3 } from 'h3';
import { FastResponse } from 'srvx';
import { findJsonDepthProblem } from '../core/json-depth.ts';
import { z } from 'zod';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { readRequestBody, requestBodyTooLargeMessage } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { resolveApiUrl, type CatalogRouteName } from '../core/api/catalog/resolve.ts';
import { CATALOG_ROUTES } from '../core/api/catalog/routes.ts';
import { answerCatalogRoute } from '../core/render/answer.ts';
import { findUnusedTagKeys, renderCatalogSearchPage } from '../core/mcp/search-catalog.ts';
import { listMcpTools } from '../core/mcp/tool-list.ts';
import { TOOL_TEXT } from '../core/mcp/tool-text.ts';
import { MCP_MAX_PAGE_BYTES, MCP_TOOLS, READ_ONLY_ANNOTATIONS, type McpToolName, type ToolDefinition } from '../core/mcp/tools.ts';
import { describeQueryError, QueryFailure } from '../query/errors.ts';
import type { QueryService } from '../query/service.ts';
import type { CatalogSnapshot } from './catalog.ts';
import { addPrompts } from './mcp-prompts.ts';
import { requestClientOf } from './client-address.ts';
import { createTokenBuckets } from './token-buckets.ts';

/** Where the MCP endpoint is served. */
export const MCP_PATH = '/mcp';
/** Largest JSON-RPC request body; past it the answer is 413 before anything is parsed. Tool inputs are small. */
export const MCP_MAX_BODY_BYTES = 256 * 1024;
/** Largest number of array elements and object members in one tool call's arguments. */
const MAX_TOOL_INPUT_ELEMENTS = 512;
/** JSON-RPC code of a resource that does not exist (MCP specification, resources). */
const RESOURCE_NOT_FOUND = -32002;
/** JSON-RPC 2.0's code of a message that is not a valid request: what a batch is to this server. */
const INVALID_REQUEST = -32600;

/**
 * What the per-request servers share, made once per process: each McpServer would otherwise build an Ajv instance
 * (2.4 ms; only elicitation, which this server never asks for, uses it) and each tool its input object, on every
 * request.
 */
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();
const TOOL_INPUTS = Object.fromEntries(Object.entries(MCP_TOOLS).map(([name, tool]) => [name, z.object(tool.input)])) as Record<McpToolName, z.ZodObject>;

/** What the MCP surface reads: the build in force and the query engine that /api/queries uses. */
export interface McpDependencies {
  snapshot: () => CatalogSnapshot;
  queries: QueryService;
}

/** Options of {@link registerMcpRoute}. */
export interface McpRouteOptions {
  /** Requests per second per client (GEOSHELF_MCP_RATE); bursts of twice as many pass; 0 turns the bound off. */
  rate: number;
}

/** Most clients whose buckets are kept; past it the least recently seen is dropped, so memory stays bounded. */
const MAX_RATE_CLIENTS = 10_000;

/**
 * Mounts `/mcp`: the Model Context Protocol over Streamable HTTP, stateless, so any replica answers any request.
 * Each client (server/client-address.ts: the socket's remote address, an IPv6 one by its /64, or behind a trusted proxy
 * the address its X-Forwarded-For names) has a token
 * bucket; past its rate the answer is 429 with Retry-After, before any JSON is parsed. Its queries count as its own in
 * the query pool, as its calls to /api/queries do. Call it before the catalog's catch-all route.
 */
export function registerMcpRoute(app: H3, dependencies: McpDependencies, options: McpRouteOptions): void {
  // The tool list is made now, at start, rather than by the first client's tools/list.
  listMcpTools();
  const buckets = options.rate > 0 ? createTokenBuckets({ rate: options.rate, burst: 2 * options.rate, maxClients: MAX_RATE_CLIENTS }) : undefined;
  app.all(MCP_PATH, (event) => {
    // One identity per client for the rate and for the query pool, as /api/queries counts it: a burst over MCP and
    // over HTTP is one client's share.
    const client = requestClientOf(event);
    const wait = buckets?.take(client ?? 'unknown') ?? 0;
    if (wait > 0) {
      const seconds = Math.ceil(wait);
      return jsonRpcError(429, -32000, `Too many requests: this client is over its rate on /mcp; retry in ${seconds} s.`, { 'retry-after': String(seconds) });
    }
    return answerMcpRequest(event.req, dependencies, client);
  });
}

/**
 * Answers one HTTP request to `/mcp`. POST carries one JSON-RPC message and gets a JSON answer from a server and
 * transport made for this request alone (the SDK's stateless pattern: no session, nothing kept between requests).
 * This server never opens a stream of its own, so GET and DELETE answer 405 with `Allow: POST`, as the transport
 * specification says. A browser page of another origin gets 403 (the specification's DNS-rebinding rule);
 * clients that send no Origin (every non-browser client) are served. A JSON-RPC batch gets 400 before any server is
 * made (see {@link isJsonArray}).
 */
export async function answerMcpRequest(request: Request, dependencies: McpDependencies, client?: string): Promise<Response> {
  if (request.method !== 'POST') return jsonRpcError(405, -32000, 'Method not allowed: this MCP endpoint is stateless and accepts POST only.', { allow: 'POST' });
  const origin = request.headers.get('origin');
  const baseUrl = dependencies.snapshot().store.manifest.settings.base_url;
  if (origin !== null && origin !== new URL(baseUrl).origin) return jsonRpcError(403, -32000, 'Forbidden: the Origin header names another site.');
  let body: Awaited<ReturnType<typeof readRequestBody>>;
  try {
    body = await readRequestBody(request, MCP_MAX_BODY_BYTES);
  } catch {
    return jsonRpcError(400, -32700, 'Parse error: the request body could not be read.');
  }
  if (body.tooLarge) return jsonRpcError(413, -32000, requestBodyTooLargeMessage(MCP_MAX_BODY_BYTES));
  // JSON.parse's time grows with nesting (server/body.ts): a body nested past any tool's arguments is refused unparsed.
  const deep = findJsonDepthProblem(body.text);
  if (deep) return jsonRpcError(400, INVALID_REQUEST, `Invalid Request: the body ${deep}.`);
  if (isJsonArray(body.text)) {
    return jsonRpcError(400, INVALID_REQUEST, 'Invalid Request: JSON-RPC batches are not supported; send one message per request (MCP 2025-11-25 has no batches).');
  }
  const server = createMcpServer(dependencies, client);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: MCP_MAX_BODY_BYTES });
  await server.connect(transport);
  try {
    // The body was read above; the transport reads this copy and keeps its own checks (Accept, Content-Type, JSON).
    return await transport.handleRequest(new Request(request.url, { method: 'POST', headers: request.headers, body: body.text }));
  } finally {
    await server.close();
  }
}

/**
 * Whether a body is a JSON array, that is a JSON-RPC batch. MCP 2025-06-18 removed batches and 2025-11-25 has none,
 * yet the SDK's transport (1.32) runs up to 100 messages of a batch in one request, at any negotiated revision: one
 * request, one token of the rate bound, and 100 tools/list or run_query calls. So every batch is refused, at every
 * revision; a 2025-03-26 client, whose revision allowed them, gets the standard JSON-RPC Invalid Request and sends its
 * messages one by one. A body that only starts like an array but is no JSON is left to the transport's parse error.
 */
function isJsonArray(text: string): boolean {
  if (!/^[ \t\n\r]*\[/.test(text)) return false;
  try {
    return Array.isArray(JSON.parse(text));
  } catch {
    return false;
  }
}

/** A JSON-RPC error answered before any server is made (no request id is known yet). */
function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  return new FastResponse(body, { status, headers: { ...headers, 'content-type': 'application/json', 'cache-control': 'no-store' } });
}

/** A tool's failure as the agent sees it: a stable code and a message safe to show. */
class ToolFailure extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * The MCP server of one request: every tool of {@link MCP_TOOLS}, the catalog documents as resource templates,
 * and prompts. Handlers are thin adapters over the same renderers and query engine as /api; queries run as `client`
 * in the pool (server/client-address.ts `requestClientOf`).
 */
export function createMcpServer({ snapshot, queries }: McpDependencies, client?: string): McpServer {
  const server = new McpServer(
    { name: 'geoshelf', title: 'geoshelf catalog', version: '1.0.0' },
    {
      maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS,
      jsonSchemaValidator: SHARED_VALIDATOR,
      instructions: 'A catalog of geospatial datasets. search_datasets finds data in every collection (or in one of list_collections); get_dataset for the ids of its '
        + 'files and sources; get_file for the columns; run_query to run SQL over sources by alias; get_query_page with next_offset for more rows.',
    },
  );
  const catalog = (name: CatalogRouteName, path: string, query: Record<string, string | number | undefined> = {}) => catalogDocument(snapshot(), name, path, query);
  const datasetPath = (args: { collection: string; dataset: string }) => `/api/collections/${segment(args.collection)}/datasets/${segment(args.dataset)}`;

  addTool(server, 'list_collections', async () => ({ collections: catalog('collections', '/api/collections') }));
  addTool(server, 'list_tags', async (args) => catalog('tags', `/api/collections/${segment(args.collection)}/datasets/tags`, { tag_key: args.tag_key }));
  addTool(server, 'search_datasets', async ({ collection, ...args }) => {
    const query = { search: args.search, tag_filters: args.tag_filters, limit: args.limit, offset: args.offset ?? undefined };
    return collection === undefined ? searchCatalog(snapshot(), query) : catalog('collection', `/api/collections/${segment(collection)}`, query);
  });
  addTool(server, 'get_dataset', async (args) => catalog('dataset', datasetPath(args), { include_urls: 'true' }));
  addTool(server, 'get_file', async (args) => {
    const path = `${datasetPath(args)}/files/${segment(args.file)}`;
    const file = catalog('file', path) as { file: unknown };
    return { file: file.file, dictionary: catalog('schema', `${path}/schema`, { version: args.version }) };
  });
  addTool(server, 'get_source', async (args) => {
    const detail = catalog('dataset', datasetPath(args), { include_urls: 'true' }) as { dataset: { files?: { formats: { sources: { id: number }[] }[] }[] } };
    const source = detail.dataset.files?.flatMap((file) => file.formats.flatMap((format) => format.sources)).find((candidate) => candidate.id === args.source_id);
    if (!source) throw new ToolFailure('not_found', `Dataset "${args.dataset}" has no source ${args.source_id}; get_dataset lists its sources.`);
    return source;
  });
  addTool(server, 'run_query', async (args) => queries.run(args, client, { maxResponseBytes: MCP_MAX_PAGE_BYTES }));
  addTool(server, 'get_query_page', async ({ query_id, query_token, ...page }) => queries.page(query_id, query_token, page, client, { maxResponseBytes: MCP_MAX_PAGE_BYTES }));
  addTool(server, 'get_query_bounds', async (args) => queries.bounds(args.query_id, args.query_token, client));
  // The SDK would convert every zod schema to JSON Schema again on each tools/list; the list is the same for the
  // life of the process, so it is made once (core/mcp/tool-list.ts), with schemas every client can read.
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...listMcpTools()] }));
  addResources(server, snapshot);
  addPrompts(server);
  return server;
}

type ToolArgs<N extends McpToolName> = (typeof MCP_TOOLS)[N] extends ToolDefinition<infer I, infer _O> ? z.infer<z.ZodObject<I>> : never;

/**
 * Registers a tool from its definition. The handler's document becomes `structuredContent`, with a short text
 * rendering (core/mcp/tool-text.ts) and the JSON as text for clients that read text only (as the specification
 * advises). A failure is a tool result with `isError` whose text is `{"code", "message"}` (ToolErrorSchema), never a
 * protocol error.
 */
function addTool<N extends McpToolName>(server: McpServer, name: N, handler: (args: ToolArgs<N>) => Promise<unknown>): void {
  const tool = MCP_TOOLS[name] as ToolDefinition;
  const render = TOOL_TEXT[name];
  const config = { title: tool.title, description: tool.description, inputSchema: TOOL_INPUTS[name], outputSchema: tool.output, annotations: { title: tool.title, ...READ_ONLY_ANNOTATIONS } };
  server.registerTool(name, config, (async (args: ToolArgs<N>): Promise<CallToolResult> => {
    try {
      const value = (await handler(args)) as Record<string, unknown>;
      return { structuredContent: value, content: [{ type: 'text', text: render(value) }, { type: 'text', text: JSON.stringify(value) }] };
    } catch (error) {
      // The body of /api/queries errors, as text: clients check any structuredContent against the outputSchema,
      // even on errors, so a failure carries none.
      const { code, message } = describeFailure(error);
      return { isError: true, content: [{ type: 'text', text: JSON.stringify({ code, message }) }] };
    }
  }) as never);
}

/** The code and message of a failed tool call; anything unexpected is logged and answered without its detail. */
function describeFailure(error: unknown): { code: string; message: string } {
  if (error instanceof ToolFailure) return { code: error.code, message: error.message };
  if (error instanceof QueryFailure) return { code: error.body.code, message: error.body.message };
  console.error('unexpected error in an MCP tool', error);
  const { code, message } = describeQueryError('internal_error');
  return { code, message };
}

/**
 * A slug as a path segment: encoded, so it cannot reach another route. A lone surrogate (JSON allows `"\ud800"`)
 * becomes U+FFFD first, which no slug holds, rather than making encodeURIComponent throw.
 */
function segment(slug: string): string {
  return encodeURIComponent(slug.toWellFormed());
}

/**
 * The document of a catalog route, computed as /api computes it (route table, then the shared renderer), or a
 * ToolFailure: `not_found` and `invalid_parameter` with the catalog's own detail. `expected` guards against a
 * slug that lands on another route (a dataset called `tags`).
 */
function catalogDocument(snapshot: CatalogSnapshot, expected: CatalogRouteName, path: string, query: Record<string, string | number | undefined>): unknown {
  const notFound = () => new ToolFailure('not_found', 'There is no such collection, dataset or file; list_collections and search_datasets give the slugs.');
  // The route is checked before the parameters, so a slug that lands on another route is not blamed on them.
  const bare = resolveApiUrl(path, new URLSearchParams());
  if (!bare.ok || bare.route.route !== expected) throw notFound();
  const resolution = resolveApiUrl(path, toSearchParams(query));
  if (!resolution.ok) throw resolution.status === 400 ? new ToolFailure('invalid_parameter', resolution.detail) : notFound();
  const { route } = resolution;
  if (route.route === 'openapi') throw notFound();
  const answer = answerCatalogRoute(snapshot.context, route);
  if (answer.problem) {
    const detail = (answer.body as { detail?: string }).detail ?? 'The catalog refused the request.';
    throw new ToolFailure(answer.status === 404 ? 'not_found' : 'invalid_parameter', detail);
  }
  return answer.body;
}

/**
 * search_datasets without a collection: the parameters parsed by the collection listing's own route (so the same
 * words, limits and messages), then every collection searched at once (core/mcp/search-catalog.ts).
 */
function searchCatalog(snapshot: CatalogSnapshot, query: Record<string, string | number | undefined>): unknown {
  const parsed = CATALOG_ROUTES.collection.parseQuery(toSearchParams(query));
  if (!parsed.ok) throw new ToolFailure('invalid_parameter', parsed.detail);
  const unused = findUnusedTagKeys(snapshot.context.index, parsed.value);
  if (unused.length > 0) {
    const keys = unused.map((key) => `"${key.slice(0, 40)}"`).join(', ');
    throw new ToolFailure('invalid_parameter', `tag key ${keys} is used by no collection; list_tags gives the keys of a collection.`);
  }
  return renderCatalogSearchPage(snapshot.context, parsed.value);
}

function toSearchParams(query: Record<string, string | number | undefined>): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return params;
}

/** The catalog documents an agent may read without a tool call: a dataset, and a file's data dictionary. */
function addResources(server: McpServer, snapshot: () => CatalogSnapshot): void {
  const read = (uri: URL, name: CatalogRouteName, path: string) => {
    try {
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(catalogDocument(snapshot(), name, path, {})) }] };
    } catch (error) {
      if (error instanceof ToolFailure) throw new McpError(RESOURCE_NOT_FOUND, error.message);
      throw error;
    }
  };
  const value = (variable: string | string[] | undefined) => segment(String(Array.isArray(variable) ? variable[0] : variable ?? ''));
  server.registerResource(
    'dataset',
    new ResourceTemplate('geoshelf://collections/{collection}/datasets/{dataset}', { list: undefined }),
    { title: 'A dataset', description: 'The dataset detail document: files, formats, sources and their ids.', mimeType: 'application/json' },
    (uri, { collection, dataset }) => read(uri, 'dataset', `/api/collections/${value(collection)}/datasets/${value(dataset)}`),
  );
  server.registerResource(
    'file_schema',
    new ResourceTemplate('geoshelf://collections/{collection}/datasets/{dataset}/files/{file}/schema', { list: undefined }),
    { title: 'A file\'s data dictionary', description: 'The schema document of a file\'s newest version: every column with its statistics.', mimeType: 'application/json' },
    (uri, { collection, dataset, file }) => read(uri, 'schema', `/api/collections/${value(collection)}/datasets/${value(dataset)}/files/${value(file)}/schema`),
  );
}
