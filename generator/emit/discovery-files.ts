import { createHash } from 'node:crypto';
import { z } from 'zod';
import { API_VERSION, DEFAULT_COLUMN_LIMIT, DEFAULT_LIST_LIMIT, MAX_COLUMN_LIMIT, PROBLEM_CONTENT_TYPE } from '../../core/constants.ts';
import { QUERY_ROUTES } from '../../core/api/catalog/routes.ts';
import type { CatalogIndex } from '../../core/catalog-index.ts';
import type { CollectionModel, DatasetModel, FileModel, SourceModel } from '../../core/model.ts';
import { listMcpTools } from '../../core/mcp/tool-list.ts';
import { MCP_TOOLS } from '../../core/mcp/tools.ts';
import { renderProblem } from '../../core/render/problems.ts';
import { NOT_FOUND_KEY, serializeJson, type TreeFile } from '../../core/static-files.ts';
import { QUERY_ERRORS } from '../../query/errors.ts';
import { resolveSources } from '../../query/sources.ts';
import { AiCatalogSchema, type AiCatalog } from '../../schemas/discovery.ts';
import type { QueryRequest, SourceReference } from '../../schemas/query.ts';

/** Rows per page of the worked example: the first page holds rows 0–4, the second rows 5–9. */
const EXAMPLE_PAGE_SIZE = 5;

/** Placeholders in the worked example for what the first answer gives; an agent puts the real values in. */
export const EXAMPLE_PLACEHOLDERS = { queryId: '{query_id}', queryToken: '{query_token}' } as const;

/**
 * The worked example of /llms.txt and the skills: a chain of ids that exists in this build and a query over a text
 * column of it, so an agent that copies it gets rows, not `source_not_found`.
 */
export interface WorkedExample {
  collection: CollectionModel;
  dataset: DatasetModel;
  file: FileModel;
  source: SourceModel;
  /** The text column the query selects and orders by. */
  column: string;
  /** The first geometry column, for the map example. */
  geometryColumn: string | undefined;
  /** The body of `POST /api/queries` and of the `run_query` tool. */
  query: QueryRequest;
}

/**
 * The first GeoParquet source, in catalog order, that the query service's own resolver accepts and whose data
 * dictionary has a text column; undefined for a catalog without one.
 */
export function findWorkedExample(index: CatalogIndex): WorkedExample | undefined {
  for (const collection of index.model.collections) {
    for (const dataset of collection.datasets) {
      for (const file of dataset.files) {
        for (const link of file.formats) {
          if (index.formatsById.get(link.format_id)?.format_type !== 'geoparquet') continue;
          for (const source of link.sources) {
            const example = exampleOver(index, collection, dataset, file, source);
            if (example) return example;
          }
        }
      }
    }
  }
  return undefined;
}

/** The example over one source, when it has a text column and a query could read it. */
function exampleOver(index: CatalogIndex, collection: CollectionModel, dataset: DatasetModel, file: FileModel, source: SourceModel): WorkedExample | undefined {
  const columns = source.metadata?.columns ?? [];
  const text = columns.find((column) => column.name === 'name' && column.type === 'string') ?? columns.find((column) => column.type === 'string');
  if (!text || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(text.name)) return undefined;
  const reference: SourceReference = {
    alias: aliasFor(file.slug),
    collection_id: collection.id,
    dataset_id: dataset.id,
    file_id: file.id,
    file_source_id: source.id,
  };
  if (!isQueryable(index, reference)) return undefined;
  return {
    collection, dataset, file, source,
    column: text.name,
    geometryColumn: columns.find((column) => column.type === 'geometry')?.name,
    query: { sources: [reference], sql: `SELECT ${text.name} FROM ${reference.alias} ORDER BY ${text.name}`, limit: EXAMPLE_PAGE_SIZE },
  };
}

/** A table name for the SQL from a file slug: `countries-110m` → `countries_110m`. */
function aliasFor(slug: string): string {
  const alias = slug.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 63);
  return /^[A-Za-z_]/.test(alias) ? alias : `t_${alias.slice(0, 61)}`;
}

/** Whether the query service would read this source (GeoParquet, stored in the data folder): its own check, not a copy. */
function isQueryable(index: CatalogIndex, reference: SourceReference): boolean {
  try {
    resolveSources(index, '', [reference]);
    return true;
  } catch {
    return false;
  }
}

/** `/llms.txt`: a guide for agents to this API as it is deployed, with the collections it holds and a worked example. */
export function renderLlmsTxt(index: CatalogIndex): string {
  const base = index.settings.baseUrl;
  const example = findWorkedExample(index);
  const collections = index.model.collections
    .map((collection) => `- [${collection.name}](${base}/api/collections/${collection.slug}): ${collection.datasets.length} datasets. ${firstSentence(collection.description)}`)
    .join('\n');
  return `# geoshelf catalog

> A read-only JSON catalog of geospatial datasets. Collections hold datasets; a dataset has files (layers);
> a file comes in formats (GeoParquet, GeoJSON, GeoPackage, …); each format has sources, one stored file per version.
> Every column of every GeoParquet source is described in a data dictionary.

Base URL: ${base}. All catalog routes are GET, need no key, and answer JSON. Errors are
application/problem+json with \`type\`, \`title\`, \`status\` and a \`detail\` that says what to fix.
The OpenAPI ${API_VERSION} document is at ${base}/api/openapi.

## Collections

${collections}

${renderFindDataSection(index, example)}

${renderDictionarySection(index, example)}

## How to get the data

Download the GeoParquet file at a source's \`url\` and analyse it locally (DuckDB, GeoPandas, QGIS). GeoParquet
files carry a \`bbox\` covering column, so a bounding-box filter reads only the row groups it needs.

${renderWalkthroughSection(index, example)}

${renderMapSection(index, example)}

${renderErrorCodesSection()}

## STAC

A STAC 1.1 catalog of the same data, for STAC Browser, pystac-client and QGIS:

- \`GET ${base}/stac\` is a static catalog: a Catalog per collection, a Collection per dataset (id
  \`{collection}.{dataset}\`), an Item per file (id \`{file}\`) whose assets are its stored files with size and
  checksum, whose \`table:columns\` are the data dictionary, and whose older versions are linked with
  \`predecessor-version\`.
- \`GET ${base}/stac/api\` is a STAC API 1.0: \`/collections\`, \`/collections/{id}/items\`, and item search at
  \`/stac/api/search\` (GET or POST) with \`bbox\`, \`intersects\`, \`datetime\`, \`ids\`, \`collections\`, \`q\`
  (free text) and \`sortby\`; follow \`links[rel=next]\`. Its OpenAPI document is ${base}/stac/api/openapi.${stacSearchExample(index)}

## OGC API - Features

\`GET ${base}/features/collections\` lists one collection per file that has a GeoParquet source (its latest version),
id \`{collection}.{dataset}.{file}\`. \`GET ${base}/features/collections/{id}/items\` answers a GeoJSON
FeatureCollection in CRS84: \`limit\` (default 10, at most 10,000), \`bbox\`, \`datetime\` where the file has a time
column, \`{property}=value\` for the properties listed at \`…/queryables\`; follow \`links[rel=next]\`. Feature ids
are the row's position in the file. GDAL reads it as \`ogrinfo OAPIF:${base}/features\`.

## MCP

\`${base}/mcp\` is a Model Context Protocol server (Streamable HTTP, stateless: POST JSON-RPC, JSON answers). Its tools
are read-only: ${Object.values(MCP_TOOLS).map((tool) => `\`${tool.name}\``).join(', ')}. A failed call is a tool
result with \`isError\` and \`{"code", "message"}\` (the codes above, or \`not_found\`/\`invalid_parameter\` for the
catalog). ${base}/.well-known/mcp/server-card.json lists the tools with their input and output schemas.

\`/api\` itself has no \`?q=\` parameter and no \`/items\` route: those belong to \`/stac/api\` and \`/features\`.
`;
}

/** The API URL of the example's dataset, optionally one of its file routes. */
function exampleUrl(base: string, example: WorkedExample, tail = ''): string {
  return `${base}/api/collections/${example.collection.slug}/datasets/${example.dataset.slug}${tail}`;
}

/** "How to find data": the listing, search and detail routes, with the example's file as a real URL. */
function renderFindDataSection(index: CatalogIndex, example: WorkedExample | undefined): string {
  const base = index.settings.baseUrl;
  const exampleFile = example ? ` Example: ${exampleUrl(base, example, `/files/${example.file.slug}`)}` : '';
  return `## How to find data

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
   the \`url\` of every source.${exampleFile}

Over MCP the same steps are the tools \`list_collections\`, \`search_datasets\` (\`search\`, \`tag_filters\`, \`limit\`,
\`offset\`, and \`collection\` to search one collection; without it every collection is searched and each dataset names
its \`collection_slug\`), \`list_tags\` and \`get_dataset\` (\`collection\`, \`dataset\`).`;
}

/** "How to read a data dictionary": the schema route and the `get_file` tool, with the example's file. */
function renderDictionarySection(index: CatalogIndex, example: WorkedExample | undefined): string {
  const base = index.settings.baseUrl;
  const exampleSchema = example
    ? `\n\nExample: ${exampleUrl(base, example, `/files/${example.file.slug}/schema`)} lists the columns of the file \`${example.file.slug}\`;
\`${example.column}\` is one of its text columns. Over MCP: \`get_file\` with \`${JSON.stringify({ collection: example.collection.slug, dataset: example.dataset.slug, file: example.file.slug })}\`
answers the file and the same dictionary.`
    : '';
  return `## How to read a data dictionary

\`GET …/datasets/{dataset}/files/{file}/schema\` is the data dictionary of the newest schema-capable version of a file:
column names, types, null counts, distinct counts, examples, ranges and the steward's descriptions. \`version=\` picks
another version (\`versions\` lists them); \`column_offset\` and \`column_limit\` (1–${MAX_COLUMN_LIMIT}, default ${DEFAULT_COLUMN_LIMIT}) page
the columns. Column names are the names to use in SQL.${exampleSchema}`;
}

/**
 * "From nothing to a second page": the steps an agent takes over HTTP and over MCP, with the example's real ids and
 * the exact bodies; tests/agent-walkthrough.test.ts sends them as written. Then the rules of a query.
 */
function renderWalkthroughSection(index: CatalogIndex, example: WorkedExample | undefined): string {
  const base = index.settings.baseUrl;
  const { sources, sql, limit } = readBodyLimits(QUERY_ROUTES.createQuery.body);
  const rules = `Rules of a query:

- \`sources\` names each table: its four ids from the dataset detail route, and an \`alias\`, the table name in the SQL.
  Up to ${sources?.maxItems} sources; SQL up to ${Number(sql?.maxLength) / 1024} KiB; \`limit\` ${limit?.minimum}–${limit?.maximum} (default ${limit?.default}).
  Only GeoParquet sources can be queried.
- Only reading SQL is accepted: one SELECT over the aliases, with an allowlist of functions (no file access,
  no settings). Queries stop at their deadline (504); a busy service answers 503: retry after \`Retry-After\`.
- Geometries come back as GeoJSON geometry objects; \`result_crs\` (e.g. EPSG:3857) reprojects them and
  \`geometry_column\` picks one of several.
- \`Accept: application/vnd.apache.arrow.stream\` answers a page as an Arrow IPC stream instead (geometries as
  GeoArrow WKB, the other fields as \`X-Geoshelf-*\` headers). \`GET ${base}/api/queries/{query_id}/download.{format}\`
  (\`parquet\`, \`geojson\` or \`csv\`) with the token in \`X-Service-Query-Token\` or \`?token=\` downloads the whole
  result as GeoParquet 1.1, GeoJSON or CSV, up to GEOSHELF_QUERY_DOWNLOAD_MAX_ROWS rows (100,000 by default).
- Pages re-run the query: add ORDER BY for stable pages. \`next_offset\` of a page is the \`offset\` of the next.
- Errors are \`{"code", "message"}\` with a stable code; "Query error codes" below lists them all.`;
  if (!example) {
    return `## Queries

\`POST ${base}/api/queries\` runs one SELECT over GeoParquet sources and returns the first page with \`query_id\` and
\`query_token\`; \`POST ${base}/api/queries/{query_id}/pages\` with the token in \`X-Service-Query-Token\` answers the next.

${rules}`;
  }
  const { collection, dataset, file, source, query } = example;
  const page = { offset: EXAMPLE_PAGE_SIZE, page_size: EXAMPLE_PAGE_SIZE };
  const { queryId, queryToken } = EXAMPLE_PLACEHOLDERS;
  const call = (name: string, args: object) => fence(JSON.stringify({ name, arguments: args }));
  return `## From nothing to a second page

These steps run as written on this deployment. Their ids are those of the file \`${file.slug}\` of the dataset
\`${dataset.slug}\` in the collection \`${collection.slug}\`, taken from the catalog when it was built; \`${queryId}\` and
\`${queryToken}\` stand for what the first answer gives.

### Over HTTP

1. \`GET ${base}/api\`: the entry links; \`collections\`, \`create_query\` and \`query_page\` are the ones used here.
2. \`GET ${base}/api/collections\`: the collection \`${collection.slug}\` has \`id\` ${collection.id}.
3. \`GET ${exampleUrl(base, example)}\`: the dataset detail, where the ids come from.
   \`dataset.id\` is ${dataset.id}; in \`dataset.files\`, \`${file.slug}\` has \`id\` ${file.id}; among its \`formats\`, the GeoParquet one
   has a source of version \`${source.version}\` with \`id\` ${source.id}. Its columns are in
   ${exampleUrl(base, example, `/files/${file.slug}/schema`)}.
4. \`POST ${base}/api/queries\` with \`content-type: application/json\` and this body:

${fence(JSON.stringify(query))}

   The answer holds the first ${query.limit} \`rows\`, \`has_more: true\`, \`next_offset: ${EXAMPLE_PAGE_SIZE}\`, \`query_id\` and \`query_token\`.
5. \`POST ${base}/api/queries/${queryId}/pages\` with the header \`X-Service-Query-Token: ${queryToken}\`,
   \`content-type: application/json\` and this body:

${fence(JSON.stringify(page))}

   The answer holds the next ${EXAMPLE_PAGE_SIZE} rows: rows ${EXAMPLE_PAGE_SIZE}–${2 * EXAMPLE_PAGE_SIZE - 1} of the ordered result.

### Over MCP

Connect an MCP client to \`${base}/mcp\` (Streamable HTTP: \`initialize\`, then \`tools/call\`). The \`params\` of each
\`tools/call\`:

1. Find the dataset:

${call('search_datasets', { collection: collection.slug, search: searchWordFor(dataset), limit: EXAMPLE_PAGE_SIZE })}

2. Read its ids (\`collection.id\`, \`dataset.id\`, \`dataset.files[].id\`, \`dataset.files[].formats[].sources[].id\`):

${call('get_dataset', { collection: collection.slug, dataset: dataset.slug })}

3. Run the query: the arguments are the body of \`POST /api/queries\`.

${call('run_query', query)}

4. Fetch the second page with the \`query_id\` and \`query_token\` of the answer:

${call('get_query_page', { query_id: queryId, query_token: queryToken, ...page })}

${rules}`;
}

/** "Map a query result": bounds, tiles and map_configuration, with the example's query extended by its geometry. */
function renderMapSection(index: CatalogIndex, example: WorkedExample | undefined): string {
  const base = index.settings.baseUrl;
  const withGeometry = example?.geometryColumn
    ? `\n\nA result needs a geometry column to be mapped, e.g. \`${example.query.sql.replace(` FROM `, `, ${example.geometryColumn} FROM `)}\` over the sources
of the example above.`
    : '';
  return `## Map a query result

Every query answer holds \`map_configuration\`: \`source\` is a MapLibre vector source to pass to \`map.addSource\` as it is
(the tile template \`${base}/api/queries/{query_id}/tiles/{z}/{x}/{y}.mvt\`), \`source_layer\` is \`result\`, and
\`bounds_url\` is \`${base}/api/queries/{query_id}/bounds\`: GET it for the WGS84 extent \`[west, south, east, north]\` of the
whole result, to frame the map (\`west > east\` when it crosses the antimeridian). Send the \`query_token\` in the
\`X-Service-Query-Token\` header (MapLibre: \`transformRequest\`) or in a \`token\` query parameter. A tile no feature
meets answers 204; a result without geometry answers 422 \`no_geometry\`. Over MCP, \`get_query_bounds\` with
\`query_id\` and \`query_token\` answers the extent.${withGeometry}`;
}

/**
 * "Query error codes": every code of the query engine's catalog with its status and hint, where an agent can read it;
 * codes that share a status and a hint share a line.
 */
function renderErrorCodesSection(): string {
  const lines = new Map<string, string[]>();
  for (const [code, { status, hint }] of Object.entries(QUERY_ERRORS)) {
    const key = `(${status}): ${hint}`;
    lines.set(key, [...(lines.get(key) ?? []), `\`${code}\``]);
  }
  return `## Query error codes

Query answers and MCP tool results fail with \`{"code", "message"}\`; the message says what to change. Every code, with its
HTTP status and a hint:

${[...lines].map(([key, codes]) => `- ${codes.join(', ')} ${key}`).join('\n')}`;
}

/** A STAC API search over the first file with bounds, rounded to two decimals. */
function stacSearchExample(index: CatalogIndex): string {
  const file = index.model.collections[0]?.datasets[0]?.files[0];
  const bounds = file?.formats.flatMap((link) => link.sources).find((source) => source.metadata?.bounds)?.metadata?.bounds;
  if (!bounds) return '';
  const box = bounds.map((value) => value.toFixed(2).replace(/\.?0+$/, '')).join(',');
  return `
  Example: \`GET ${index.settings.baseUrl}/stac/api/search?bbox=${box}\``;
}

/** A word that finds the dataset in its collection's search: the first word of its slug, which search indexes. */
function searchWordFor(dataset: DatasetModel): string {
  return dataset.slug.split('-')[0]!;
}

/** A fenced JSON block. */
function fence(json: string): string {
  return `\`\`\`json\n${json}\n\`\`\``;
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

/** One agent skill: its name (a folder under /.well-known/agent-skills), what it is for, and its SKILL.md body. */
export interface AgentSkill {
  name: string;
  description: string;
  /** Two to five questions the skill answers, for the AI catalog's `representativeQueries`. */
  queries: string[];
  body: string;
}

/**
 * The skills of /.well-known/agent-skills: the whole guide, and one per task an agent comes for (find data, read a
 * dictionary, query and page, map a result), each made of the same sections as /llms.txt so they cannot disagree.
 */
export function listAgentSkills(index: CatalogIndex): AgentSkill[] {
  const base = index.settings.baseUrl;
  const example = findWorkedExample(index);
  const intro = `The geoshelf catalog at ${base} is read-only and needs no key. ${base}/llms.txt is the whole guide.`;
  return [
    {
      name: 'geoshelf-catalog',
      queries: ['Which geospatial datasets does this catalog hold?', 'Find a dataset of world cities and read its columns', 'Query a GeoParquet file with SQL and fetch the next page'],
      description: `Find geospatial datasets in the geoshelf catalog at ${base}, read their data dictionaries, query GeoParquet with SQL and page the results, over HTTP or MCP.`,
      body: renderLlmsTxt(index),
    },
    {
      name: 'geoshelf-find-data',
      queries: ['Find datasets about country boundaries', 'Which datasets carry a given tag?', 'List the files and download links of a dataset'],
      description: 'Find datasets in the geoshelf catalog: list collections, search datasets by words and tags, read a dataset with its files and sources.',
      body: `# Find data in geoshelf\n\n${intro}\n\n${renderFindDataSection(index, example)}\n`,
    },
    {
      name: 'geoshelf-read-dictionary',
      queries: ['What columns does this GeoParquet file have, and of which types?', 'Which values does a column take, and how many are null?'],
      description: 'Read the data dictionary of a geoshelf file: every column with its type, nulls, distinct values, examples and range.',
      body: `# Read a data dictionary in geoshelf\n\n${intro}\n\n${renderDictionarySection(index, example)}\n`,
    },
    {
      name: 'geoshelf-query-and-page',
      queries: ['Run a SQL query over a GeoParquet file', 'Fetch the second page of a query result', 'Download a query result as GeoParquet or CSV'],
      description: 'Run a SQL query over GeoParquet sources of the geoshelf catalog and fetch further pages with the query token, over HTTP or MCP.',
      body: `# Query and page in geoshelf\n\n${intro}\n\n${renderWalkthroughSection(index, example)}\n\n${renderErrorCodesSection()}\n`,
    },
    {
      name: 'geoshelf-map-result',
      queries: ['Draw a query result on a map', 'What is the extent of a query result?'],
      description: 'Draw a geoshelf query result on a map: its WGS84 bounds and its vector tiles, with the query token.',
      body: `# Map a query result from geoshelf\n\n${intro}\n\n${renderMapSection(index, example)}\n`,
    },
  ];
}

/** A skill as SKILL.md: YAML front matter (name, description) and its body. */
function renderSkillMd(skill: AgentSkill): string {
  return `---\nname: ${skill.name}\ndescription: ${skill.description}\n---\n\n${skill.body}`;
}

/** Every discovery file: llms.txt, the well-known documents, and the static 404 Problem. */
export function renderDiscoveryFiles(index: CatalogIndex): TreeFile[] {
  const base = index.settings.baseUrl;
  const skills = listAgentSkills(index).map((skill) => ({ skill, body: Buffer.from(renderSkillMd(skill)) }));
  const text = (key: string, body: string): TreeFile => ({ key, body: Buffer.from(body), type: 'text/plain; charset=utf-8' });
  const json = (key: string, body: unknown, type = 'application/json'): TreeFile => ({ key, body: serializeJson(body), type });
  return [
    text('llms.txt', renderLlmsTxt(index)),
    ...skills.map(({ skill, body }): TreeFile => ({ key: `.well-known/agent-skills/${skill.name}/SKILL.md`, body, type: 'text/markdown; charset=utf-8' })),
    json('.well-known/agent-skills/index.json', {
      $schema: 'https://schemas.agentskills.io/discovery/0.2.0/schema.json',
      skills: skills.map(({ skill, body }) => ({
        name: skill.name,
        type: 'skill-md',
        description: skill.description,
        url: `${base}/.well-known/agent-skills/${skill.name}/SKILL.md`,
        digest: `sha256:${createHash('sha256').update(body).digest('hex')}`,
      })),
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
      // Exactly what tools/list answers, portable schemas included.
      tools: listMcpTools().map(({ name, title, description, inputSchema, outputSchema }) => ({ name, title, description, inputSchema, outputSchema })),
    }),
    json('.well-known/ai-catalog.json', renderAiCatalog(index, skills.map(({ skill }) => skill))),
    json(NOT_FOUND_KEY, renderProblem('not-found', 'There is no such route. Start from /api or read /api/openapi.', base), PROBLEM_CONTENT_TYPE),
  ];
}

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
        url: `${base}/.well-known/agent-skills/${skill.name}/SKILL.md`,
        description: skill.description,
        tags: ['geospatial', 'catalog', 'agent-skill'],
        representativeQueries: skill.queries,
        version: API_VERSION,
        ...(skill.name === 'geoshelf-catalog' ? { metadata: surfaces } : {}),
      })),
    ],
  });
}
