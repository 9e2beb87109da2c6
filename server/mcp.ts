import type { H3 } from 'h3';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { readRequestBody } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { findJsonDepthProblem } from '../core/json-depth.ts';
import { listMcpTools } from '../core/api/mcp/tool-list.ts';
import { requestClientOf } from './client-address.ts';
import { mapMcpError, refuseMcpRequest } from './mcp-errors.ts';
import { addPrompts } from './mcp-prompts.ts';
import { addResources } from './mcp-resources.ts';
import { addTools, type McpDependencies } from './mcp-tools.ts';
import { createRateLimit } from './rate-limit.ts';
import { mountRouteTable } from './surface-kit.ts';
import { MCP_ROUTES } from '../core/api/mcp/routes.ts';

export type { McpDependencies } from './mcp-tools.ts';

/** Largest JSON-RPC request body; past it the answer is 413 before anything is parsed. Tool inputs are small. */
export const MCP_MAX_BODY_BYTES = 256 * 1024;
/** Largest number of array elements and object members in one tool call's arguments. */
const MAX_TOOL_INPUT_ELEMENTS = 512;

/**
 * What the per-request servers share, made once per process: each McpServer would otherwise build an Ajv instance
 * (2.4 ms; only elicitation, which this server never asks for, uses it) on every request. The tools' input objects
 * are made once too, in server/mcp-tools.ts.
 */
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

/** Options of {@link registerMcpRoute}. */
export interface McpRouteOptions {
  /** Requests per second per client (GEOSHELF_MCP_RATE); bursts of twice as many pass; 0 turns the bound off. */
  rate: number;
}

/**
 * Mounts `/mcp`: the Model Context Protocol over Streamable HTTP, stateless, so any replica answers any request.
 * Each client (server/client-address.ts: the socket's remote address, an IPv6 one by its /64, or behind a trusted proxy
 * the address its X-Forwarded-For names) has a rate (server/rate-limit.ts); past it the answer is 429 with
 * Retry-After, before any JSON is parsed. Its queries count as its own in the query pool, as its calls to
 * /api/queries do. Call it before the catalog's catch-all route.
 */
export function registerMcpRoute(app: H3, dependencies: McpDependencies, options: McpRouteOptions): void {
  // The tool list is made now, at start, rather than by the first client's tools/list.
  listMcpTools();
  const limit = createRateLimit({ rate: options.rate });
  mountRouteTable(app, {
    routes: MCP_ROUTES,
    handlers: {
      postMcp: (event) => {
        // One identity per client for the rate and for the query pool, as /api/queries counts it: a burst over MCP
        // and over HTTP is one client's share.
        const client = requestClientOf(event);
        const seconds = limit.retryAfter(client);
        if (seconds > 0) return refuseMcpRequest('rate', seconds);
        return answerMcpRequest(event.req, dependencies, client);
      },
    },
    // The server opens no stream (GET) and keeps no session (DELETE), as the transport specification allows.
    methodNotAllowed: () => refuseMcpRequest('method'),
  }, mapMcpError);
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
  if (request.method !== 'POST') return refuseMcpRequest('method');
  const origin = request.headers.get('origin');
  const baseUrl = dependencies.snapshot().store.manifest.settings.base_url;
  if (origin !== null && origin !== new URL(baseUrl).origin) return refuseMcpRequest('origin');
  let body: Awaited<ReturnType<typeof readRequestBody>>;
  try {
    body = await readRequestBody(request, MCP_MAX_BODY_BYTES);
  } catch {
    return refuseMcpRequest('unreadable');
  }
  if (body.tooLarge) return refuseMcpRequest('too_large', MCP_MAX_BODY_BYTES);
  // JSON.parse's time grows with nesting (server/body.ts): a body nested past any tool's arguments is refused unparsed.
  const deep = findJsonDepthProblem(body.text);
  if (deep) return refuseMcpRequest('too_deep', deep);
  if (isJsonArray(body.text)) return refuseMcpRequest('batch');
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

/**
 * The MCP server of one request: every tool of core/api/mcp/tools.ts (server/mcp-tools.ts), the catalog documents as
 * resource templates (server/mcp-resources.ts), and prompts. Handlers are thin adapters over the same renderers and
 * query engine as /api; queries run as `client` in the pool (server/client-address.ts `requestClientOf`).
 */
export function createMcpServer(dependencies: McpDependencies, client?: string): McpServer {
  const server = new McpServer(
    { name: 'geoshelf', title: 'geoshelf catalog', version: '1.0.0' },
    {
      maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS,
      jsonSchemaValidator: SHARED_VALIDATOR,
      instructions: 'A catalog of geospatial datasets. search_datasets finds data in every collection (or in one of list_collections); get_dataset for the ids of its '
        + 'files and sources; get_file for the columns; run_query to run SQL over sources by alias; get_query_page with next_offset for more rows.',
    },
  );
  addTools(server, dependencies, client);
  addResources(server, dependencies.snapshot);
  addPrompts(server);
  return server;
}
