import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { listMcpTools } from '../core/api/mcp/tool-list.ts';
import { TOOL_TEXT } from '../core/api/mcp/tool-text.ts';
import { MCP_MAX_PAGE_BYTES, MCP_TOOLS, READ_ONLY_ANNOTATIONS, type McpToolName, type ToolDefinition } from '../core/api/mcp/tools.ts';
import type { QueryService } from '../query/service.ts';
import type { CatalogSnapshot } from './catalog.ts';
import { findSource, readCatalogDocument, searchCatalog, type DocumentRouteName, type RoutePathText, type RouteQueryText } from './mcp-catalog.ts';
import { renderMcpFailure } from './mcp-errors.ts';

/** What the MCP surface reads: the build in force and the query engine that /api/queries uses. */
export interface McpDependencies {
  snapshot: () => CatalogSnapshot;
  queries: QueryService;
}

/** Each tool's input object, made once per process rather than by every request's server. */
const TOOL_INPUTS = Object.fromEntries(Object.entries(MCP_TOOLS).map(([name, tool]) => [name, z.object(tool.input)])) as Record<McpToolName, z.ZodObject>;

/**
 * Registers every tool of {@link MCP_TOOLS} on a request's server. Each is a thin adapter over the engine /api uses:
 * the catalog tools over the route table and `answerCatalogRoute` (server/mcp-catalog.ts), the query tools over the
 * QueryService, with queries run as `client` in the pool (server/client-address.ts `requestClientOf`).
 */
export function addTools(server: McpServer, { snapshot, queries }: McpDependencies, client?: string): void {
  const read = <N extends DocumentRouteName>(name: N, path: RoutePathText<N>, query?: RouteQueryText) => readCatalogDocument(snapshot(), name, path, query);
  const datasetPath = (args: { collection: string; dataset: string }) => ({ collectionSlug: args.collection, datasetSlug: args.dataset });

  addTool(server, 'list_collections', async () => ({ collections: read('collections', {}) }));
  addTool(server, 'list_tags', async (args) => read('tags', { collectionSlug: args.collection }, { tag_key: args.tag_key }));
  addTool(server, 'search_datasets', async ({ collection, ...args }) => {
    const query = { search: args.search, tag_filters: args.tag_filters, limit: args.limit, offset: args.offset ?? undefined };
    return collection === undefined ? searchCatalog(snapshot(), query) : read('collection', { slug: collection }, query);
  });
  addTool(server, 'get_dataset', async (args) => read('dataset', datasetPath(args), { include_urls: 'true' }));
  addTool(server, 'get_file', async (args) => {
    const path = { ...datasetPath(args), fileSlug: args.file };
    const file = read('file', path) as { file: unknown };
    return { file: file.file, dictionary: read('schema', path, { version: args.version }) };
  });
  addTool(server, 'get_source', async (args) => findSource(read('dataset', datasetPath(args), { include_urls: 'true' }), args.dataset, args.source_id));
  addTool(server, 'run_query', async (args) => queries.run(args, client, { maxResponseBytes: MCP_MAX_PAGE_BYTES }));
  addTool(server, 'get_query_page', async ({ query_id, query_token, ...page }) => queries.page(query_id, query_token, page, client, { maxResponseBytes: MCP_MAX_PAGE_BYTES }));
  addTool(server, 'get_query_bounds', async (args) => queries.bounds(args.query_id, args.query_token, client));
  // The SDK would convert every zod schema to JSON Schema again on each tools/list; the list is the same for the
  // life of the process, so it is made once (core/api/mcp/tool-list.ts), with schemas every client can read.
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...listMcpTools()] }));
}

type ToolArgs<N extends McpToolName> = (typeof MCP_TOOLS)[N] extends ToolDefinition<infer I, infer _O> ? z.infer<z.ZodObject<I>> : never;

/**
 * Registers a tool from its definition. The handler's document becomes `structuredContent`, with a short text
 * rendering (core/api/mcp/tool-text.ts) and the JSON as text for clients that read text only (as the specification
 * advises). A failure is answered as server/mcp-errors.ts renders it.
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
      return renderMcpFailure(error, 'tool');
    }
  }) as never);
}
