import { z } from 'zod';
import { LISTING_QUERY, QueryIdParam, QueryTokenSchema, SCHEMA_QUERY, TAGS_QUERY } from '../catalog/params.ts';
import { DatasetDetailResponseSchema, DatasetFileSchemaResponseSchema } from '../../../schemas/detail.ts';
import { DatasetFileSchema } from '../../../schemas/dataset-file.ts';
import { DatasetSourceSchema } from '../../../schemas/source.ts';
import { CollectionSchema } from '../../../schemas/collection.ts';
import { DatasetListItemSchema } from '../../../schemas/dataset.ts';
import { CollectionDatasetsPageSchema, CollectionListSchema, TagsResponseSchema } from '../../../schemas/listing.ts';
import { QueryBoundsSchema, QueryErrorSchema, QueryPageRequestSchema, QueryRequestSchema, QueryResultSchema } from '../../../schemas/query.ts';

/**
 * The MCP tools of geoshelf as pure definitions: name, words for the agent, input and output schemas. The server
 * (server/mcp.ts) gives them handlers; the discovery documents can list them from here, so the two cannot drift.
 * Input and output schemas are the API's own zod schemas wherever the API has one.
 */

/** Path segments: checked by the catalog, which answers `not_found` with the slugs that exist. */
const slug = (what: string) => z.string().min(1).max(200).describe(`Slug of the ${what}, as the catalog lists it.`);

const catalogPath = {
  collection: slug('collection'),
  dataset: slug('dataset'),
};

/** What every tool declares: it reads, never writes, and answers the same to the same input on one build. */
export const READ_ONLY_ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/**
 * The text of a failed tool call (`isError: true`), as JSON: a QUERY_ERRORS code, or `not_found`/`invalid_parameter`
 * for the catalog, and its message.
 */
export const ToolErrorSchema = QueryErrorSchema;

/** One tool: its name, words for the agent, and its input shape and output schema. */
export interface ToolDefinition<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
}

const define = <I extends z.ZodRawShape, O extends z.ZodObject>(tool: ToolDefinition<I, O>) => tool;

/**
 * A document schema as a tool's output schema: the same shape, without its registry id. An id would turn the
 * JSON Schema's root into a `$ref`, and MCP wants `type: "object"` at the root of an `outputSchema`.
 */
const toolOutput = <O extends z.ZodObject>(schema: O): O => schema.extend({}) as O;

/**
 * Most bytes of JSON rows in one run_query or get_query_page answer; a longer page is cut, with `next_offset`. The
 * SDK checks the rows against the tool's output schema (zod, a union per value) and writes them twice (structured and
 * as text) on the event loop. Measured with `npm run bench -- stall` (pages of cities): 1,000 rows (290 KB) held it
 * 100 ms and more; cut at 64 KiB, its p99 was 54 ms; at 32 KiB it stays under the 50 ms budget. 32 KiB (a hundred
 * rows of ten columns) is also about what an agent can read at once.
 */
export const MCP_MAX_PAGE_BYTES = 32 * 1024;

/** Every tool, keyed by name. */
export const MCP_TOOLS = {
  list_collections: define({
    name: 'list_collections',
    title: 'List collections',
    description: 'Lists the collections of the catalog with their slugs, ids and dataset counts. Start here.',
    input: {},
    output: z.object({ collections: CollectionListSchema }),
  }),
  list_tags: define({
    name: 'list_tags',
    title: 'List the tags of a collection',
    description: 'Lists the tag keys and values the datasets of a collection use, for the tag_filters of search_datasets.',
    input: { collection: catalogPath.collection, tag_key: z.string().max(200).optional().describe(TAGS_QUERY.tag_key.description ?? 'Only this key.') },
    output: toolOutput(TagsResponseSchema),
  }),
  search_datasets: define({
    name: 'search_datasets',
    title: 'Search datasets',
    description: 'Finds datasets by words (title, description, tags, file and column names) and tag filters, one page at a time. '
      + 'Without collection it searches every collection and each dataset names its collection_slug for get_dataset; with one it answers '
      + 'as GET /api/collections/{collection} does. Without search, datasets come in name order.',
    input: {
      collection: slug('collection').optional().describe('Slug of a collection to search alone, as list_collections gives it; every collection when omitted.'),
      search: z.string().max(500).optional().describe(LISTING_QUERY.search.description ?? 'Words to find.'),
      tag_filters: z.string().max(2000).optional().describe(`key:value pairs separated by commas, e.g. "categories:boundaries". ${LISTING_QUERY.tag_filters.description ?? ''}`),
      limit: LISTING_QUERY.limit.optional(),
      offset: LISTING_QUERY.offset.optional(),
    },
    output: CollectionDatasetsPageSchema.extend({
      collection: CollectionSchema.optional().describe('The collection searched; absent when every collection was.'),
      datasets: z.array(DatasetListItemSchema.extend({
        collection_slug: z.string().optional().describe('Slug of the dataset\'s collection, when every collection was searched.'),
      })),
    }),
  }),
  get_dataset: define({
    name: 'get_dataset',
    title: 'Get a dataset',
    description: 'Returns a dataset with its files, formats and sources, each source with its id, version and download URL. '
      + 'The ids (collection, dataset, file, source) are what run_query takes.',
    input: catalogPath,
    output: toolOutput(DatasetDetailResponseSchema),
  }),
  get_file: define({
    name: 'get_file',
    title: 'Get a file and its data dictionary',
    description: 'Returns a file (layer) of a dataset with its formats and sources, and the data dictionary of one version: '
      + 'every column with its type, nulls, distinct values, examples and range.',
    input: { ...catalogPath, file: slug('file'), version: z.string().max(200).optional().describe(SCHEMA_QUERY.version.description ?? 'Source version.') },
    output: z.object({
      file: DatasetFileSchema,
      dictionary: DatasetFileSchemaResponseSchema.describe('The document of GET …/files/{file}/schema.'),
    }),
  }),
  get_source: define({
    name: 'get_source',
    title: 'Get a source and its download links',
    description: 'Returns one source (a stored file of a format and version) of a dataset by its id, with its metadata, its download URL '
      + 'and its download_zip link (every file of the source in one archive, shapefile sidecars included).',
    input: { ...catalogPath, source_id: z.int().min(1).describe('The source id, as get_dataset lists it (files[].formats[].sources[].id).') },
    output: toolOutput(DatasetSourceSchema),
  }),
  run_query: define({
    name: 'run_query',
    title: 'Run a SQL query',
    description: 'Runs one DuckDB SELECT over sources named by alias (ids from get_dataset), as POST /api/queries does, and returns the first page, '
      + 'the query_id and query_token for get_query_page and get_query_bounds, and a vector tile template in map_configuration. '
      + `A page holds at most ${MCP_MAX_PAGE_BYTES / 1024} KiB of rows as JSON: a longer one is cut (response_truncated) and next_offset reads on.`,
    input: QueryRequestSchema.shape,
    output: toolOutput(QueryResultSchema),
  }),
  get_query_page: define({
    name: 'get_query_page',
    title: 'Get a page of a query result',
    description: 'Returns rows of a query result from offset (next_offset of the previous page), with the query_id and query_token run_query gave; '
      + `at most ${MCP_MAX_PAGE_BYTES / 1024} KiB of rows as JSON, as run_query.`,
    input: { query_id: QueryIdParam, query_token: QueryTokenSchema, ...QueryPageRequestSchema.shape },
    output: toolOutput(QueryResultSchema),
  }),
  get_query_bounds: define({
    name: 'get_query_bounds',
    title: 'Get the extent of a query result',
    description: 'Returns the WGS84 extent [west, south, east, north] of every geometry of a query result, to frame a map.',
    input: { query_id: QueryIdParam, query_token: QueryTokenSchema },
    output: toolOutput(QueryBoundsSchema),
  }),
} as const;

/** A tool name. */
export type McpToolName = keyof typeof MCP_TOOLS;
