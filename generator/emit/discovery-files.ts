import { createHash } from 'node:crypto';
import { z } from 'zod';
import { API_VERSION, DEFAULT_COLUMN_LIMIT, DEFAULT_LIST_LIMIT, MAX_COLUMN_LIMIT, PROBLEM_CONTENT_TYPE } from '../../core/constants.ts';
import { QUERY_ROUTES } from '../../core/api/catalog/routes.ts';
import type { CatalogIndex } from '../../core/catalog-index.ts';
import { MCP_TOOLS } from '../../core/mcp/tools.ts';
import { renderProblem } from '../../core/render/problems.ts';
import { NOT_FOUND_KEY, serializeJson, type TreeFile } from '../../core/static-files.ts';

/** `/llms.txt`: a guide for agents to this API as it is deployed, with the collections it holds. */
export function renderLlmsTxt(index: CatalogIndex): string {
  const base = index.settings.baseUrl;
  const collections = index.model.collections
    .map((collection) => `- [${collection.name}](${base}/api/collections/${collection.slug}): ${collection.datasets.length} datasets. ${firstSentence(collection.description)}`)
    .join('\n');
  const example = index.model.collections[0];
  const dataset = example?.datasets[0];
  const file = dataset?.files[0];
  const exampleFile = example && dataset && file ? `${base}/api/collections/${example.slug}/datasets/${dataset.slug}/files/${file.slug}` : undefined;
  const bounds = file?.formats.flatMap((link) => link.sources).find((source) => source.metadata?.bounds)?.metadata?.bounds;
  const stacExample = bounds?.map((value) => Math.round(value * 100) / 100).join(',');
  const { sources, sql, limit } = readBodyLimits(QUERY_ROUTES.createQuery.body);
  const { page_size: pageSize } = readBodyLimits(QUERY_ROUTES.getQueryPage.body);
  return `# geoshelf catalog

> A read-only JSON catalog of geospatial datasets. Collections hold datasets; a dataset has files (layers);
> a file comes in formats (GeoParquet, GeoJSON, GeoPackage, …); each format has sources, one stored file per version.
> Every column of every GeoParquet source is described in a data dictionary.

Base URL: ${base}. All catalog routes are GET, need no key, and answer JSON. Errors are
application/problem+json with \`type\`, \`title\`, \`status\` and a \`detail\` that says what to fix.
The OpenAPI ${API_VERSION} document is at ${base}/api/openapi.

## Collections

${collections}

## How to find data

1. \`GET ${base}/api/collections\` lists collections. Add \`?include=datasets\` for their datasets' slugs.
2. \`GET ${base}/api/collections/{slug}\` lists a collection's datasets, ${DEFAULT_LIST_LIMIT} at a time.
   - \`search=words\`: every word must match a whole word or a word prefix in the name, slug, tags, file names or
     description; case and accents are ignored. Results are ranked; ties go by name, then id.
   - \`tag_filters=key:value,key:value\`: values of one key match any of them; different keys must all match.
     \`GET ${base}/api/collections/{slug}/datasets/tags\` lists the keys and values.
   - \`limit\` (default ${DEFAULT_LIST_LIMIT}) and \`offset\` page through results; \`total\` counts all matches and
     \`links.next\` is the next page. \`include=files\` adds file summaries, \`include_urls=true\` adds download URLs,
     \`omit=description\` drops descriptions.
3. \`GET ${base}/api/collections/{collection}/datasets/{dataset}\` is a dataset with files, formats and sources
   (\`?include_urls=true\` adds download URLs). \`GET ${base}/api/datasets/{id}\` finds a dataset by numeric id.
4. \`GET …/datasets/{dataset}/files/{file}\` is file metadata: formats, versions, sizes, feature counts, bounds and
   the \`url\` of every source.${exampleFile ? ` Example: ${exampleFile}` : ''}
5. \`GET …/files/{file}/schema\` is the data dictionary of the newest schema-capable version: column names, types,
   null counts, distinct counts, examples, ranges. \`version=\` picks another version (\`versions\` lists them);
   \`column_offset\` and \`column_limit\` (1–${MAX_COLUMN_LIMIT}, default ${DEFAULT_COLUMN_LIMIT}) page the columns.

## How to get the data

Download the GeoParquet file at a source's \`url\` and analyse it locally (DuckDB, GeoPandas, QGIS). GeoParquet
files carry a \`bbox\` covering column, so a bounding-box filter reads only the row groups it needs.

## Queries

\`POST ${base}/api/queries\` runs one SELECT over GeoParquet sources and returns the first page:

\`\`\`json
{"sources": [{"alias": "countries", "collection_id": 1, "dataset_id": 1, "file_id": 1, "file_source_id": 1}],
 "sql": "SELECT name, geometry FROM countries ORDER BY name", "limit": ${limit?.default}}
\`\`\`

- Take the four ids from the dataset detail route (dataset id, file id, source id) and the collection id; the
  alias is the table name in the SQL. Up to ${sources?.maxItems} sources; SQL up to ${Number(sql?.maxLength) / 1024} KiB; \`limit\` ${limit?.minimum}–${limit?.maximum} (default ${limit?.default}).
- Only reading SQL is accepted: one SELECT over the aliases, with an allowlist of functions (no file access,
  no settings). Queries stop at their deadline (504); a busy service answers 503: retry later.
- Geometries come back as GeoJSON geometry objects; \`result_crs\` (e.g. EPSG:3857) reprojects them and
  \`geometry_column\` picks one of several.
- The answer holds \`query_token\`. Send it in the \`X-Service-Query-Token\` header to
  \`POST …/api/queries/{query_id}/pages\` with \`{"offset": ${pageSize?.default}, "page_size": ${pageSize?.default}}\`, to
  \`GET …/bounds\` (the WGS84 extent of the whole result) and to \`GET …/tiles/{z}/{x}/{y}.mvt\` (vector tiles; the
  token may also go in a \`token\` query parameter). Add ORDER BY for stable pages.
- Errors are \`{"code", "message"}\`; codes are stable (README, "Query errors").

## STAC

A STAC 1.1 catalog of the same data, for STAC Browser, pystac-client and QGIS:

- \`GET ${base}/stac\` is a static catalog: a Catalog per collection, a Collection per dataset (id
  \`{collection}.{dataset}\`), an Item per file (id \`{file}\`) whose assets are its stored files with size and
  checksum, whose \`table:columns\` are the data dictionary, and whose older versions are linked with
  \`predecessor-version\`.
- \`GET ${base}/stac/api\` is a STAC API 1.0: \`/collections\`, \`/collections/{id}/items\`, and item search at
  \`/stac/api/search\` (GET or POST) with \`bbox\`, \`intersects\`, \`datetime\`, \`ids\`, \`collections\`, \`q\`
  (free text) and \`sortby\`; follow \`links[rel=next]\`. Its OpenAPI document is ${base}/stac/api/openapi.${stacExample ? `
  Example: \`GET ${base}/stac/api/search?bbox=${stacExample}&limit=5\`` : ''}

## OGC API - Features

\`GET ${base}/features/collections\` lists one collection per file that has a GeoParquet source (its latest version),
id \`{collection}.{dataset}.{file}\`. \`GET ${base}/features/collections/{id}/items\` answers a GeoJSON
FeatureCollection in CRS84: \`limit\` (default 10, at most 10,000), \`bbox\`, \`datetime\` where the file has a time
column, \`{property}=value\` for the properties listed at \`…/queryables\`; follow \`links[rel=next]\`. Feature ids
are the row's position in the file. GDAL reads it as \`ogrinfo OAPIF:${base}/features\`.

## MCP

\`${base}/mcp\` is a Model Context Protocol server (Streamable HTTP, stateless: POST JSON-RPC, JSON answers). Its tools
are read-only: ${Object.values(MCP_TOOLS).map((tool) => `\`${tool.name}\``).join(', ')}. A failed call is a tool
result with \`isError\` and \`{"code", "message"}\`. ${base}/.well-known/mcp/server-card.json lists the tools with their
input and output schemas.

\`/api\` itself has no \`?q=\` parameter and no \`/items\` route: those belong to \`/stac/api\` and \`/features\`.
`;
}

/** A tool's schema as the MCP server sends it in tools/list: JSON Schema, no `$schema`. */
function toolJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _schema, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return json;
}

/** The limits a request body schema declares per field (`maxItems`, `maximum`, `default`, …), from its JSON Schema. */
function readBodyLimits(schema: z.ZodType | undefined): Record<string, Record<string, unknown> | undefined> {
  const json = schema ? z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { $ref?: string; $defs?: Record<string, { properties?: object }>; properties?: object } : {};
  const root = json.$ref ? json.$defs?.[json.$ref.split('/').at(-1)!] : json;
  return (root?.properties ?? {}) as Record<string, Record<string, unknown> | undefined>;
}

function firstSentence(text: string | undefined): string {
  if (!text) return '';
  const match = /^.*?[.!?](\s|$)/s.exec(text.replace(/\s+/g, ' '));
  return (match ? match[0] : text).trim();
}

/** The agent skill published under /.well-known/agent-skills: how to use this catalog, in SKILL.md form. */
export function renderSkillMd(index: CatalogIndex): string {
  return `---
name: geoshelf-catalog
description: Find geospatial datasets in the geoshelf catalog at ${index.settings.baseUrl}, read their data dictionaries, and download GeoParquet files.
---

${renderLlmsTxt(index)}`;
}

/** Every discovery file: llms.txt, the well-known documents, and the static 404 Problem. */
export function renderDiscoveryFiles(index: CatalogIndex): TreeFile[] {
  const base = index.settings.baseUrl;
  const skill = Buffer.from(renderSkillMd(index));
  const text = (key: string, body: string): TreeFile => ({ key, body: Buffer.from(body), type: 'text/plain; charset=utf-8' });
  const json = (key: string, body: unknown, type = 'application/json'): TreeFile => ({ key, body: serializeJson(body), type });
  return [
    text('llms.txt', renderLlmsTxt(index)),
    { key: '.well-known/agent-skills/geoshelf-catalog/SKILL.md', body: skill, type: 'text/markdown; charset=utf-8' },
    json('.well-known/agent-skills/index.json', {
      $schema: 'https://schemas.agentskills.io/discovery/0.2.0/schema.json',
      skills: [{
        name: 'geoshelf-catalog',
        type: 'skill-md',
        description: 'Find geospatial datasets, read their data dictionaries, and download GeoParquet files.',
        url: `${base}/.well-known/agent-skills/geoshelf-catalog/SKILL.md`,
        digest: `sha256:${createHash('sha256').update(skill).digest('hex')}`,
      }],
    }),
    json('.well-known/api-catalog/index.json', {
      linkset: [{
        anchor: `${base}/api`,
        'service-desc': [{ href: `${base}/api/openapi`, type: 'application/vnd.oai.openapi+json;version=3.1' }],
        'service-doc': [{ href: `${base}/llms.txt`, type: 'text/plain' }],
        status: [{ href: `${base}/api/health`, type: 'application/json' }],
      }, {
        anchor: `${base}/stac/api`,
        'service-desc': [{ href: `${base}/stac/api/openapi`, type: 'application/vnd.oai.openapi+json;version=3.1' }],
        'service-doc': [{ href: `${base}/llms.txt`, type: 'text/plain' }],
        status: [{ href: `${base}/api/health`, type: 'application/json' }],
      }, {
        anchor: `${base}/features`,
        'service-desc': [{ href: `${base}/features/api`, type: 'application/vnd.oai.openapi+json;version=3.0' }],
        'service-doc': [{ href: `${base}/llms.txt`, type: 'text/plain' }],
        status: [{ href: `${base}/api/health`, type: 'application/json' }],
      }],
    }, 'application/linkset+json'),
    json('.well-known/mcp/server-card.json', {
      $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
      name: 'geoshelf/catalog',
      version: API_VERSION,
      description: 'Read-only MCP server of the geoshelf catalog: find datasets, read their data dictionaries, run bounded SQL over GeoParquet and page the results.',
      websiteUrl: `${base}/llms.txt`,
      remotes: [{ type: 'streamable-http', url: `${base}/mcp` }],
      tools: Object.values(MCP_TOOLS).map((tool) => ({
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: toolJsonSchema(z.object(tool.input)),
        outputSchema: toolJsonSchema(tool.output),
      })),
    }),
    json('.well-known/ai-catalog.json', {
      name: 'geoshelf catalog',
      description: 'Read-only catalog of geospatial datasets with column data dictionaries.',
      version: API_VERSION,
      entries: [
        { type: 'openapi', url: `${base}/api/openapi`, status: 'available' },
        { type: 'llms-txt', url: `${base}/llms.txt`, status: 'available' },
        { type: 'agent-skills', url: `${base}/.well-known/agent-skills/index.json`, status: 'available' },
        { type: 'api-catalog', url: `${base}/.well-known/api-catalog`, status: 'available' },
        { type: 'query-service', url: `${base}/api/queries`, status: 'available' },
        { type: 'stac', url: `${base}/stac`, status: 'available' },
        { type: 'stac-api', url: `${base}/stac/api`, status: 'available' },
        { type: 'ogc-api-features', url: `${base}/features`, status: 'available' },
        { type: 'mcp', url: `${base}/mcp`, status: 'available' },
      ],
    }),
    json(NOT_FOUND_KEY, renderProblem('not-found', 'There is no such route. Start from /api or read /api/openapi.', base), PROBLEM_CONTENT_TYPE),
  ];
}
