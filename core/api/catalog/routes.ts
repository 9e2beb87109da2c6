import { z } from 'zod';
import { DEFAULT_COLUMN_LIMIT, MAX_AGGREGATE_ROWS, PROBLEM_CONTENT_TYPE } from '../../constants.ts';
import { DatasetAggregateListSchema, DatasetByIdResponseSchema, DatasetStatsSchema } from '../../../schemas/datasets.ts';
import { DatasetDetailResponseSchema, DatasetFileResponseSchema, DatasetFileSchemaResponseSchema } from '../../../schemas/detail.ts';
import { ApiRootSchema, HealthSchema, ReadinessSchema } from '../../../schemas/discovery.ts';
import { CollectionDatasetsPageSchema, CollectionListSchema, TagsResponseSchema } from '../../../schemas/listing.ts';
import { ProblemSchema } from '../../../schemas/problem.ts';
import { QueryBoundsSchema, QueryErrorSchema, QueryPageRequestSchema, QueryRequestSchema, QueryResultSchema } from '../../../schemas/query.ts';
import { DOWNLOAD_FORMAT_NAMES, DOWNLOAD_FORMATS } from '../download-formats.ts';
import { defineRoute, type RouteResponse } from '../route-table.ts';
import {
  COLLECTIONS_QUERY, CONDITIONAL_HEADERS, DATASET_QUERY, DatasetIdParam, LISTING_QUERY, QueryIdParam, QueryTokenSchema,
  SCHEMA_QUERY, slugParam, SourceIdParam, TAGS_QUERY, TILE_PATH,
} from './params.ts';

const CATALOG = 'catalog';
const QUERIES = 'queries';
/** The OpenAPI tags of the routes below. */
export const API_TAGS = [
  { name: CATALOG, description: 'Read-only catalog routes, served as static files.' },
  { name: QUERIES, description: 'Bounded SQL over catalog sources.' },
];
const JSON_TYPE = 'application/json';
/** Header that carries the query token (contract section 5). */
export const QUERY_TOKEN_HEADER = 'X-Service-Query-Token';
/** Content type of vector tiles. */
export const TILE_CONTENT_TYPE = 'application/vnd.mapbox-vector-tile';
/** Content type of a query page as an Arrow IPC stream, asked for with the Accept header. */
export const ARROW_STREAM_CONTENT_TYPE = 'application/vnd.apache.arrow.stream';
/** The download formats (core/api/download-formats.ts), each with its media type as OpenAPI keys it (no parameters). */
const DOWNLOADS = DOWNLOAD_FORMAT_NAMES.map((name) => ({ name, ...DOWNLOAD_FORMATS[name], mediaType: DOWNLOAD_FORMATS[name].contentType.split(';')[0]! }));

/** Words as a list in prose: `a, b or c` with `or` as the last joint. */
const listOf = (words: string[], last: 'or' | 'and') => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1)}`);
const json = (schema: z.ZodType, description: string): RouteResponse => ({ description, contentType: JSON_TYPE, schema });
const problem = (description: string): RouteResponse => ({ description, contentType: PROBLEM_CONTENT_TYPE, schema: ProblemSchema });
const queryError = (description: string): RouteResponse => ({ description, contentType: JSON_TYPE, schema: QueryErrorSchema });

/** Statuses every catalog GET route can answer besides its 200 (and, when it takes parameters, its 400). */
function catalogResponses(ok: RouteResponse, invalid?: string): Record<number, RouteResponse> {
  const responses: Record<number, RouteResponse> = { 200: ok, 304: { description: 'Not modified: If-None-Match names this document.' } };
  if (invalid) responses[400] = problem(invalid);
  responses[404] = problem('No such path or resource; links lead to /api, /api/openapi and /llms.txt.');
  return responses;
}

const collectionPath = { collectionSlug: slugParam('collection') };
const datasetPath = { ...collectionPath, datasetSlug: slugParam('dataset') };
const filePath = { ...datasetPath, fileSlug: slugParam('file (layer)') };
const UNKNOWN = 'An unknown, repeated or invalid parameter; the detail names it and what is accepted.';

/**
 * The catalog GET routes (contract 4.1, 4.2), keyed by the name `CatalogRoute.route` uses. Every one is a file of
 * the static tree; the resolver, the file keys, the OpenAPI document and the server read them from here.
 */
export const CATALOG_ROUTES = {
  root: defineRoute({
    id: 'getApiRoot', method: 'GET', path: '/api', tag: CATALOG, summary: 'Entry links',
    description: 'Entry links, link templates of the query routes, and hints. Query parameters are ignored.',
    headers: CONDITIONAL_HEADERS,
    responses: catalogResponses(json(ApiRootSchema, 'Entry links.')),
  }),
  openapi: defineRoute({
    id: 'getOpenApi', method: 'GET', path: '/api/openapi', tag: CATALOG, summary: 'This document',
    description: 'The OpenAPI 3.1 document of the API. Query parameters are ignored.',
    headers: CONDITIONAL_HEADERS,
    responses: catalogResponses(json(z.looseObject({}), 'OpenAPI document.')),
  }),
  health: defineRoute({
    id: 'getHealth', method: 'GET', path: '/api/health', tag: CATALOG, summary: 'Health',
    description: 'Always ok while the API is served. Query parameters are ignored, so a probe may add a cache buster.',
    headers: CONDITIONAL_HEADERS,
    responses: catalogResponses(json(HealthSchema, 'Healthy.')),
  }),
  collections: defineRoute({
    id: 'listCollections', method: 'GET', path: '/api/collections', tag: CATALOG, summary: 'List collections',
    description: 'Every collection, optionally with compact datasets and files.',
    query: COLLECTIONS_QUERY, headers: CONDITIONAL_HEADERS,
    responses: catalogResponses(json(CollectionListSchema, 'Collections.'), UNKNOWN),
  }),
  collection: defineRoute({
    id: 'listCollectionDatasets', method: 'GET', path: '/api/collections/{slug}', tag: CATALOG, summary: 'List datasets of a collection',
    description: 'One page of the datasets of a collection, searched and filtered by tags.',
    pathParams: { slug: slugParam('collection') }, query: LISTING_QUERY, headers: CONDITIONAL_HEADERS,
    refineQuery: ({ query, ...values }) => {
      if (query === undefined) return values;
      if (values.search !== undefined && values.search !== query) {
        return { ok: false, name: 'query', detail: '"query" is an alias of "search"; give one of them, or both with the same words' };
      }
      return { ...values, search: query };
    },
    responses: catalogResponses(json(CollectionDatasetsPageSchema, 'A page of datasets.'), `${UNKNOWN} Also a tag key the collection does not use.`),
  }),
  tags: defineRoute({
    id: 'listCollectionTags', method: 'GET', path: '/api/collections/{collectionSlug}/datasets/tags', tag: CATALOG, summary: 'Tags of a collection',
    description: 'Tag keys and values used by the datasets of a collection; the values tag_filters accepts.',
    pathParams: collectionPath, query: TAGS_QUERY, headers: CONDITIONAL_HEADERS,
    responses: catalogResponses(json(TagsResponseSchema, 'Tags.'), UNKNOWN),
  }),
  dataset: defineRoute({
    id: 'getDataset', method: 'GET', path: '/api/collections/{collectionSlug}/datasets/{datasetSlug}', tag: CATALOG, summary: 'Dataset detail',
    description: 'A dataset with its files, formats and sources.',
    pathParams: datasetPath, query: DATASET_QUERY, headers: CONDITIONAL_HEADERS,
    responses: catalogResponses(json(DatasetDetailResponseSchema, 'The dataset.'), UNKNOWN),
  }),
  file: defineRoute({
    id: 'getDatasetFile', method: 'GET', path: '/api/collections/{collectionSlug}/datasets/{datasetSlug}/files/{fileSlug}', tag: CATALOG,
    summary: 'File metadata', description: 'Formats, versions, storage locations and download links of a file. Query parameters are ignored.',
    pathParams: filePath, headers: CONDITIONAL_HEADERS,
    responses: catalogResponses(json(DatasetFileResponseSchema, 'The file.')),
  }),
  schema: defineRoute({
    id: 'getDatasetFileSchema', method: 'GET', path: '/api/collections/{collectionSlug}/datasets/{datasetSlug}/files/{fileSlug}/schema', tag: CATALOG,
    summary: 'Data dictionary',
    description: 'Column schema of the best schema-capable source of a version; paged when column_offset or column_limit is given.',
    pathParams: filePath, query: SCHEMA_QUERY, headers: CONDITIONAL_HEADERS,
    refineQuery: (values) => {
      if (values.column_offset === undefined && values.column_limit === undefined) return values;
      return { ...values, column_offset: values.column_offset ?? 0, column_limit: values.column_limit ?? DEFAULT_COLUMN_LIMIT };
    },
    responses: catalogResponses(json(DatasetFileSchemaResponseSchema, 'The schema.'), `${UNKNOWN} Column paging out of range.`),
  }),
  datasets: defineRoute({
    id: 'listDatasets', method: 'GET', path: '/api/datasets', tag: CATALOG, summary: 'Datasets across collections',
    description: `The first ${MAX_AGGREGATE_ROWS} datasets by id. Query parameters are ignored.`,
    headers: CONDITIONAL_HEADERS,
    responses: catalogResponses(json(DatasetAggregateListSchema, 'Datasets.')),
  }),
  'dataset-by-id': defineRoute({
    id: 'getDatasetById', method: 'GET', path: '/api/datasets/{id}', tag: CATALOG, summary: 'Dataset by id',
    description: 'A dataset by its numeric id, with its files. Query parameters are ignored.',
    pathParams: { id: DatasetIdParam }, headers: CONDITIONAL_HEADERS, invalidPathStatus: 400,
    responses: { ...catalogResponses(json(DatasetByIdResponseSchema, 'The dataset.'), 'The id is not a positive integer in decimal without leading zeros.'), 502: problem('The dataset failed to load.') },
  }),
  stats: defineRoute({
    id: 'getDatasetStats', method: 'GET', path: '/api/datasets/stats', tag: CATALOG, summary: 'Dataset counts',
    description: 'How many datasets there are, and how many have computed metadata. Query parameters are ignored.',
    headers: CONDITIONAL_HEADERS,
    responses: catalogResponses(json(DatasetStatsSchema, 'Counts.')),
  }),
};

const queryFailures = {
  400: queryError('Invalid request, query_id, token or parameter.'),
  422: queryError('The query cannot be executed as requested.'),
  503: queryError('The query service is unavailable or busy; retry later.'),
  504: queryError('The query timed out.'),
};
const tokenHeader = { [QUERY_TOKEN_HEADER]: QueryTokenSchema.describe('The query_token of the QueryResult.') };
/** A page as JSON, or as an Arrow IPC stream when Accept prefers it; README "Arrow pages" lists the headers. */
const page = (description: string): RouteResponse => ({
  ...json(QueryResultSchema, `${description} With Accept: ${ARROW_STREAM_CONTENT_TYPE} (preferred over application/json), an Arrow IPC stream of the rows instead, geometries as GeoArrow WKB; the other QueryResult fields come as X-Geoshelf-* headers (the token as ${QUERY_TOKEN_HEADER}) and in the schema metadata key geoshelf:page.`),
  alternatives: [{ contentType: ARROW_STREAM_CONTENT_TYPE }],
});

/**
 * The query routes (contract 4.3), keyed by operationId. Declarations only: `server/queries.ts` attaches a
 * handler to each id. `h3Path` is the pattern to register; `parsePath`, `parseHeaders` and `parseQuery` parse
 * strictly (a failure names the parameter, so the handler can pick its QueryError code).
 * @example
 * for (const route of Object.values(QUERY_ROUTES)) app.on(route.method, route.h3Path, handlers[route.id]);
 * // in the tile handler:
 * const path = QUERY_ROUTES.getQueryTile.parsePath(event.context.params ?? {});
 * if (!path.ok) throw queryError(400, path.name === 'query_id' ? 'invalid_query_id' : 'invalid_tile', path.detail);
 * const { query_id, z, x, y } = path.value; // strings and numbers, already checked
 */
export const QUERY_ROUTES = {
  createQuery: defineRoute({
    id: 'createQuery', method: 'POST', path: '/api/queries', tag: QUERIES, summary: 'Run a query',
    description: 'Runs bounded SQL over catalog sources and returns the first page with a token for later pages.',
    body: QueryRequestSchema,
    responses: { 200: page('The first page.'), ...queryFailures },
  }),
  getQueryPage: defineRoute({
    id: 'getQueryPage', method: 'POST', path: '/api/queries/{query_id}/pages', tag: QUERIES, summary: 'Fetch a page',
    description: 'Re-executes one page of a query.',
    pathParams: { query_id: QueryIdParam }, headers: tokenHeader, body: QueryPageRequestSchema,
    responses: { 200: page('The page.'), ...queryFailures },
  }),
  getQueryBounds: defineRoute({
    id: 'getQueryBounds', method: 'GET', path: '/api/queries/{query_id}/bounds', tag: QUERIES, summary: 'Bounds of a result',
    description: `WGS84 extent of the whole result, for map framing (map_configuration.bounds_url). The token goes in ${QUERY_TOKEN_HEADER}, or in the token query parameter (map_configuration.token_query_parameter) for map clients that cannot set headers, as for tiles; other query parameters are ignored. Pages, which are POSTs with a JSON body, take the header only.`,
    pathParams: { query_id: QueryIdParam },
    headers: { [QUERY_TOKEN_HEADER]: QueryTokenSchema.optional().describe('The query_token; or use the token query parameter.') },
    query: { token: QueryTokenSchema.describe('The query_token, when the header cannot be sent.') },
    unknownQuery: 'ignore',
    responses: { 200: json(QueryBoundsSchema, 'The extent.'), ...queryFailures, 422: queryError('The result has no geometry to frame.') },
  }),
  getQueryTile: defineRoute({
    id: 'getQueryTile', method: 'GET', path: '/api/queries/{query_id}/tiles/{z}/{x}/{y}.mvt', tag: QUERIES, summary: 'Vector tile of a result',
    description: `The Mapbox Vector Tile (layer "result") of the query result at z/x/y: features clipped with a buffer and simplified per zoom, at most GEOSHELF_TILE_MAX_FEATURES of them. The token goes in ${QUERY_TOKEN_HEADER}, or in the token query parameter for map clients that cannot set headers; other query parameters are ignored.`,
    pathParams: TILE_PATH,
    headers: {
      [QUERY_TOKEN_HEADER]: QueryTokenSchema.optional().describe('The query_token; or use the token query parameter.'),
      ...CONDITIONAL_HEADERS,
    },
    query: { token: QueryTokenSchema.describe('The query_token, when the header cannot be sent.') },
    unknownQuery: 'ignore',
    responses: {
      200: { description: 'The tile.', contentType: TILE_CONTENT_TYPE },
      204: { description: 'No feature of the result meets this tile.' },
      304: { description: 'Not modified: If-None-Match names this tile.' },
      ...queryFailures,
      400: queryError('Invalid tile address, query_id or token.'),
      422: queryError('The result has no geometry.'),
    },
  }),
  getQueryTileset: defineRoute({
    id: 'getQueryTileset', method: 'GET', path: '/api/queries/{query_id}/tileset', tag: QUERIES, summary: 'Tiles of a result as a tileset',
    description: `The vector tiles of the query result as a tileset of OGC API - Tiles (f=json, WebMercatorQuad) or as TileJSON 3.0.0 (f=tilejson, which MapLibre reads as a vector source), its bounds the result's and its tile template the tile route with the token. The token goes in ${QUERY_TOKEN_HEADER} or the token query parameter.`,
    pathParams: { query_id: QueryIdParam },
    headers: { [QUERY_TOKEN_HEADER]: QueryTokenSchema.optional().describe('The query_token; or use the token query parameter.') },
    query: { token: QueryTokenSchema.describe('The query_token, when the header cannot be sent.'), f: z.enum(['json', 'tilejson']).describe('json (the OGC tileset, when omitted) or tilejson.') },
    unknownQuery: 'ignore',
    responses: { 200: json(z.looseObject({}), 'The tileset, or its TileJSON.'), ...queryFailures, 422: queryError('The result has no geometry to tile.') },
  }),
  getQueryDownload: defineRoute({
    id: 'getQueryDownload', method: 'GET', path: '/api/queries/{query_id}/download.{format}', tag: QUERIES, summary: 'Download a whole result',
    description: `The whole result of the query as one file, at most GEOSHELF_QUERY_DOWNLOAD_MAX_ROWS rows: ${listOf(DOWNLOADS.map((format) => format.title), 'or')}, sent as an attachment. The token goes in ${QUERY_TOKEN_HEADER}, or in the token query parameter so that a link downloads it; other query parameters are ignored.`,
    pathParams: {
      query_id: QueryIdParam,
      format: z.enum(DOWNLOAD_FORMAT_NAMES).describe(`${listOf(DOWNLOADS.map(({ name, standard }) => (standard ? `${name} (${standard})` : name)), 'or')}.`),
    },
    headers: { [QUERY_TOKEN_HEADER]: QueryTokenSchema.optional().describe('The query_token; or use the token query parameter.') },
    query: { token: QueryTokenSchema.describe('The query_token, when the header cannot be sent.') },
    unknownQuery: 'ignore',
    responses: {
      200: {
        description: 'The file, with Content-Disposition: attachment and X-Geoshelf-Row-Count.',
        contentType: DOWNLOADS[0]!.mediaType,
        alternatives: DOWNLOADS.slice(1).map((format) => ({ contentType: format.mediaType })),
      },
      ...queryFailures,
      404: queryError(`No such format: ${listOf(DOWNLOADS.map((format) => `download.${format.name}`), 'and')} exist.`),
      422: queryError('The result has more rows than a download may hold, or cannot be written in this format.'),
    },
  }),
};

/**
 * Routes the server computes on each request and the static tree does not hold: readiness, for probes, and a
 * source's files as one ZIP. `server/app.ts` answers them.
 */
export const SERVICE_ROUTES = {
  getReadiness: defineRoute({
    id: 'getReadiness', method: 'GET', path: '/api/health/ready', tag: CATALOG, summary: 'Readiness',
    description: 'Whether this server can read every source the catalog stores in its data folder (GEOSHELF_DATA_DIR): 200 when it can, 503 with the sources it cannot read when it cannot, so a proxy or an orchestrator takes it out. /api/health stays the liveness check. The answer is at most 5 s old. Query parameters are ignored.',
    responses: {
      200: json(ReadinessSchema, 'Ready: every local source can be read.'),
      405: problem('A method other than GET or HEAD.'),
      503: json(ReadinessSchema, 'Not ready: the sources that cannot be read, with Retry-After.'),
    },
  }),
  getSourceArchive: defineRoute({
    id: 'getSourceArchive', method: 'GET', path: '/api/collections/{collectionSlug}/datasets/{datasetSlug}/files/{fileSlug}/sources/{sourceId}/download-zip',
    tag: CATALOG, summary: 'A source\'s files as one ZIP',
    description: 'Every file of a source this server can read (a shapefile with its sidecars, a file geodatabase folder, or one file), stored uncompressed in a ZIP made on request. Its bytes depend only on the files, so the archive has a strong ETag, a length and byte ranges, and GDAL opens it in place with /vsizip//vsicurl/. The file metadata links it as links.download_zip. Query parameters are ignored.',
    pathParams: { ...filePath, sourceId: SourceIdParam },
    headers: {
      ...CONDITIONAL_HEADERS,
      Range: z.string().optional().describe('One byte range of the archive (RFC 9110), such as bytes=0-65535.'),
      'If-Range': z.string().optional().describe('The ETag of the archive the range is of; when it names another, the whole archive is sent.'),
    },
    responses: {
      200: { description: 'The archive, with Content-Disposition: attachment.', contentType: 'application/zip' },
      206: { description: 'The byte range asked for, with Content-Range.', contentType: 'application/zip' },
      304: { description: 'Not modified: If-None-Match names this archive.' },
      404: problem('No such collection, dataset, file or source, or a source stored where this server cannot read it (download it from its url).'),
      405: problem('A method other than GET or HEAD.'),
      416: { description: 'The range lies outside the archive; Content-Range gives its length.' },
      503: problem('The stored file of the source is missing; Retry-After says when to try again.'),
    },
  }),
};

/** Every route of the /api surface, catalog, queries, then service routes: what the OpenAPI document lists. */
export const API_ROUTES = [...Object.values(CATALOG_ROUTES), ...Object.values(QUERY_ROUTES), ...Object.values(SERVICE_ROUTES)];
