/**
 * The query walkthrough of /llms.txt and of the `geoshelf-query-and-page` skill: from nothing to a second page over
 * HTTP and over MCP, with the worked example's real ids and bodies, then the rules of a query. Agents follow it as
 * written; tests/agent-walkthrough.test.ts sends its requests.
 */
import { z } from 'zod';
import { QUERY_ROUTES } from '../../../core/api/catalog/routes.ts';
import type { CatalogIndex } from '../../../core/catalog-index.ts';
import type { DatasetModel } from '../../../core/model.ts';
import { EXAMPLE_PAGE_SIZE, EXAMPLE_PLACEHOLDERS, exampleUrl, type WorkedExample } from './worked-example.ts';

/**
 * "From nothing to a second page": the steps an agent takes over HTTP and over MCP, with the example's real ids and
 * the exact bodies; tests/agent-walkthrough.test.ts sends them as written. Then the rules of a query.
 */
export function renderWalkthroughSection(index: CatalogIndex, example: WorkedExample | undefined): string {
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
