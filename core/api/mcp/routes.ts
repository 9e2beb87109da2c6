import { defineRoute } from '../route-table.ts';

/**
 * The MCP surface's one route: JSON-RPC over Streamable HTTP, stateless (server/mcp.ts). It is not part of the
 * /api OpenAPI document; MCP clients learn the tools from `tools/list`.
 */
export const MCP_ROUTES = {
  postMcp: defineRoute({
    id: 'postMcp', method: 'POST', path: '/mcp', tag: 'mcp', summary: 'Model Context Protocol',
    description: 'One JSON-RPC message per request (no batches), answered as JSON; GET and DELETE answer 405, since the server opens no stream and keeps no session.',
    responses: {
      200: { description: 'The JSON-RPC answer.', contentType: 'application/json' },
      400: { description: 'A body that is no JSON, nested too deep, or a batch.', contentType: 'application/json' },
      403: { description: 'A browser page of another origin.', contentType: 'application/json' },
      405: { description: 'A method other than POST.', contentType: 'application/json' },
      413: { description: 'A body too large for any tool call.', contentType: 'application/json' },
      429: { description: 'Over the client\'s rate (GEOSHELF_MCP_RATE), with Retry-After.', contentType: 'application/json' },
    },
  }),
};
