/**
 * The sections of the guide that /llms.txt and the task skills share: how to find data, how to read a data
 * dictionary, how to map a query result, and the query error codes. Agents read them in either document; both are
 * made of these functions, so the two cannot disagree.
 */
import { DEFAULT_COLUMN_LIMIT, DEFAULT_LIST_LIMIT, MAX_COLUMN_LIMIT } from '../../../core/constants.ts';
import type { CatalogIndex } from '../../../core/catalog-index.ts';
import { QUERY_ERRORS } from '../../../query/errors.ts';
import { exampleUrl, type WorkedExample } from './worked-example.ts';

/** "How to find data": the listing, search and detail routes, with the example's file as a real URL. */
export function renderFindDataSection(index: CatalogIndex, example: WorkedExample | undefined): string {
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
export function renderDictionarySection(index: CatalogIndex, example: WorkedExample | undefined): string {
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

/** "Map a query result": bounds, tiles and map_configuration, with the example's query extended by its geometry. */
export function renderMapSection(index: CatalogIndex, example: WorkedExample | undefined): string {
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
export function renderErrorCodesSection(): string {
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
