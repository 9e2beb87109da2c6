/**
 * `/.well-known/ai-catalog.json`: the Agentic Resource Discovery manifest of this deployment, for agents and crawlers
 * that discover AI resources by host (Lighthouse audits it as `ard-schema`). It lists the MCP server card and each
 * agent skill.
 */
import { API_VERSION } from '../../../core/constants.ts';
import type { CatalogIndex } from '../../../core/catalog-index.ts';
import { MCP_TOOLS } from '../../../core/api/mcp/tools.ts';
import { AiCatalogSchema, type AiCatalog } from '../../../schemas/discovery.ts';
import { skillKey, type AgentSkill } from './agent-skills.ts';

/** The namespace of every identifier in the AI catalog. */
const AI_CATALOG_NAMESPACE = 'geoshelf';

/**
 * `/.well-known/ai-catalog.json`, an Agentic Resource Discovery 1.0 manifest: the MCP server card and each agent
 * skill, by reference, with identifiers `urn:air:{host}:geoshelf:{name}`. ARD knows media types for those and not
 * for OpenAPI, llms.txt, STAC or OGC API documents, so those are linked from the whole-guide skill's `metadata`
 * (and from `/.well-known/api-catalog`); an entry of another type would fail Lighthouse's `ard-schema` audit.
 * Parsed by its schema, so a build cannot write a catalog that breaks it.
 */
export function renderAiCatalog(index: CatalogIndex, skills: AgentSkill[]): AiCatalog {
  const base = index.settings.baseUrl;
  // The publisher part allows letters, digits, dots and hyphens: a host name, or an IP address with its colons replaced.
  const publisher = new URL(base).hostname.replace(/[^A-Za-z0-9.-]+/g, '-').replace(/^-+|-+$/g, '') || 'localhost';
  const identifier = (name: string) => `urn:air:${publisher}:${AI_CATALOG_NAMESPACE}:${name}`;
  const surfaces = {
    llms_txt: `${base}/llms.txt`,
    openapi: `${base}/api/openapi`,
    api_catalog: `${base}/.well-known/api-catalog`,
    stac: `${base}/stac`,
    stac_api: `${base}/stac/api`,
    features: `${base}/features`,
  };
  return AiCatalogSchema.parse({
    specVersion: '1.0',
    host: { displayName: 'geoshelf catalog', documentationUrl: `${base}/llms.txt` },
    entries: [
      {
        identifier: identifier('mcp-server'),
        displayName: 'geoshelf catalog MCP server',
        type: 'application/mcp-server-card+json',
        url: `${base}/.well-known/mcp/server-card.json`,
        description: 'Read-only MCP server (Streamable HTTP) over the catalog: find datasets, read data dictionaries, run bounded SQL over GeoParquet and page the results.',
        tags: ['geospatial', 'catalog', 'geoparquet', 'sql', 'mcp'],
        capabilities: Object.values(MCP_TOOLS).map((tool) => tool.name),
        representativeQueries: ['Search geospatial datasets by words and tags', 'Read the data dictionary of a GeoParquet file', 'Run a bounded SQL query over GeoParquet and page the result'],
        version: API_VERSION,
        metadata: { endpoint: `${base}/mcp`, transport: 'streamable-http' },
      },
      ...skills.map((skill) => ({
        identifier: identifier(skill.name),
        displayName: skill.name,
        type: 'text/markdown; profile="urn:air:agent-skills"',
        url: `${base}/${skillKey(skill.name)}`,
        description: skill.description,
        tags: ['geospatial', 'catalog', 'agent-skill'],
        representativeQueries: skill.queries,
        version: API_VERSION,
        ...(skill.name === 'geoshelf-catalog' ? { metadata: surfaces } : {}),
      })),
    ],
  });
}
