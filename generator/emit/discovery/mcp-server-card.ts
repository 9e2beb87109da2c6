/**
 * `/.well-known/mcp/server-card.json`: the MCP server card, which names the `/mcp` endpoint and lists its tools exactly
 * as `tools/list` answers them. MCP clients and registries read it to learn the server without connecting; /llms.txt
 * and /.well-known/ai-catalog.json point at it.
 */
import { API_VERSION } from '../../../core/constants.ts';
import type { CatalogIndex } from '../../../core/catalog-index.ts';
import { listMcpTools } from '../../../core/api/mcp/tool-list.ts';

/** The server card document. */
export function renderMcpServerCard(index: CatalogIndex): object {
  const base = index.settings.baseUrl;
  return {
    $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
    name: 'geoshelf/catalog',
    version: API_VERSION,
    description: 'Read-only MCP server of the geoshelf catalog: find datasets, read their data dictionaries, run bounded SQL over GeoParquet and page the results.',
    websiteUrl: `${base}/llms.txt`,
    remotes: [{ type: 'streamable-http', url: `${base}/mcp` }],
    // Exactly what tools/list answers, portable schemas included.
    tools: listMcpTools().map(({ name, title, description, inputSchema, outputSchema }) => ({ name, title, description, inputSchema, outputSchema })),
  };
}
