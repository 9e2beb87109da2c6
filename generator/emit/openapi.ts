import { z } from 'zod';
import { API_VERSION, DEFAULT_LIST_LIMIT, MAX_COLUMN_LIMIT, PROBLEM_CONTENT_TYPE } from '../../core/constants.ts';
import '../../schemas/datasets.ts';
import '../../schemas/detail.ts';
import '../../schemas/discovery.ts';
import '../../schemas/listing.ts';
import '../../schemas/problem.ts';
import '../../schemas/query.ts';

type Json = Record<string, unknown>;

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (schema: Json, description: string) => ({ description, content: { 'application/json': { schema } } });
const problem = (description: string) => ({ description, content: { [PROBLEM_CONTENT_TYPE]: { schema: ref('Problem') } } });
const queryError = (description: string) => ({ description, content: { 'application/json': { schema: ref('QueryError') } } });
const inQuery = (name: string, description: string, schema: Json) => ({ name, in: 'query', required: false, description, schema });
const inPath = (name: string, description: string, schema: Json = { type: 'string' }) => ({ name, in: 'path', required: true, description, schema });

const slug = (name: string, what: string) => inPath(name, `Slug of the ${what}.`, { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' });
const datasetPath = [slug('collectionSlug', 'collection'), slug('datasetSlug', 'dataset')];
const filePath = [...datasetPath, slug('fileSlug', 'file (layer)')];
const queryIdPath = inPath('query_id', 'The query_id of a QueryResult.', { type: 'string', pattern: '^[A-Za-z0-9_-]{20,64}$' });
const tokenHeader = { name: 'X-Service-Query-Token', in: 'header', required: true, description: 'The query_token of the QueryResult.', schema: { type: 'string', minLength: 1 } };
const includeUrls = inQuery('include_urls', 'true adds source download URLs.', { type: 'string', enum: ['true', 'false'] });
const notFound = problem('No such path or resource; links lead to /api, /api/openapi and /llms.txt.');

function get(operationId: string, tag: string, summary: string, description: string, parameters: Json[], responses: Json) {
  return { get: { operationId, tags: [tag], summary, description, parameters, responses } };
}

/**
 * The OpenAPI 3.1 document of the API, assembled from the zod schemas (every component comes from
 * `z.toJSONSchema`), so no schema is written twice.
 */
export function createOpenApiDocument(baseUrl: string): Json {
  const generated = z.toJSONSchema(z.globalRegistry, { io: 'input', uri: (id) => `#/components/schemas/${id}` }).schemas;
  const schemas: Json = {};
  for (const [id, schema] of Object.entries(generated).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const { $schema: _schema, $id: _id, ...rest } = schema as Json;
    schemas[id] = rest;
  }
  const catalog = 'catalog';
  const queries = 'queries';
  return {
    openapi: '3.1.0',
    info: {
      title: 'geoshelf catalog API',
      version: API_VERSION,
      summary: 'Static catalog of geospatial datasets with bounded SQL queries over GeoParquet.',
      description: 'Read-only JSON catalog (collection → dataset → file → format → source) and bounded SQL query resources. Catalog errors are application/problem+json; query errors are QueryError objects.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: baseUrl, description: 'This deployment' }],
    tags: [
      { name: catalog, description: 'Read-only catalog routes, served as static files.' },
      { name: queries, description: 'Bounded SQL over catalog sources.' },
    ],
    security: [],
    paths: {
      '/api': get('getApiRoot', catalog, 'Entry links', 'Entry links, link templates of the query routes, and hints.', [], { 200: json(ref('ApiRoot'), 'Entry links.'), 404: notFound }),
      '/api/openapi': get('getOpenApi', catalog, 'This document', 'The OpenAPI 3.1 document of the API.', [], { 200: json({ type: 'object' }, 'OpenAPI document.'), 404: notFound }),
      '/api/health': get('getHealth', catalog, 'Health', 'Always ok while the API is served.', [], { 200: json(ref('Health'), 'Healthy.'), 404: notFound }),
      '/api/collections': get('listCollections', catalog, 'List collections', 'Every collection, optionally with compact datasets and files.',
        [inQuery('include', 'datasets, or datasets,files.', { type: 'string', enum: ['datasets', 'datasets,files'] })],
        { 200: json(ref('CollectionList'), 'Collections.'), 400: problem('Invalid include.'), 404: notFound }),
      '/api/collections/{slug}': get('listCollectionDatasets', catalog, 'List datasets of a collection',
        'One page of the datasets of a collection, searched and filtered by tags.',
        [
          slug('slug', 'collection'),
          inQuery('search', 'Words to find (every word must match, as a word or word prefix).', { type: 'string' }),
          inQuery('query', 'Alias of search.', { type: 'string' }),
          inQuery('tag_filters', 'key:value pairs separated by commas; see the tags route.', { type: 'string' }),
          inQuery('limit', `Page size, default ${DEFAULT_LIST_LIMIT}.`, { type: 'integer', minimum: 1, default: DEFAULT_LIST_LIMIT }),
          inQuery('offset', 'Datasets to skip.', { type: ['integer', 'null'], minimum: 0, default: 0 }),
          includeUrls,
          inQuery('include', 'files adds compact file summaries.', { type: 'string', enum: ['files'] }),
          inQuery('omit', 'description omits dataset descriptions.', { type: 'string', enum: ['description'] }),
        ],
        { 200: json(ref('CollectionDatasetsPage'), 'A page of datasets.'), 400: problem('Invalid parameter.'), 404: notFound }),
      '/api/collections/{collectionSlug}/datasets/tags': get('listCollectionTags', catalog, 'Tags of a collection',
        'Tag keys and values used by the datasets of a collection; the values tag_filters accepts.',
        [slug('collectionSlug', 'collection'), inQuery('tag_key', 'Only this key.', { type: 'string' })],
        { 200: json(ref('TagsResponse'), 'Tags.'), 400: problem('Invalid parameter.'), 404: notFound }),
      '/api/collections/{collectionSlug}/datasets/{datasetSlug}': get('getDataset', catalog, 'Dataset detail',
        'A dataset with its files, formats and sources.', [...datasetPath, includeUrls],
        { 200: json(ref('DatasetDetailResponse'), 'The dataset.'), 400: problem('Invalid parameter.'), 404: notFound }),
      '/api/collections/{collectionSlug}/datasets/{datasetSlug}/files/{fileSlug}': get('getDatasetFile', catalog, 'File metadata',
        'Formats, versions, storage locations and download links of a file.', filePath,
        { 200: json(ref('DatasetFileResponse'), 'The file.'), 404: notFound }),
      '/api/collections/{collectionSlug}/datasets/{datasetSlug}/files/{fileSlug}/schema': get('getDatasetFileSchema', catalog, 'Data dictionary',
        'Column schema of the best schema-capable source of a version; paged when column_offset or column_limit is given.',
        [
          ...filePath,
          inQuery('version', 'Source version; the newest schema-capable one when omitted.', { type: 'string' }),
          inQuery('column_offset', 'Columns to skip; turns paging on.', { type: ['integer', 'null'], minimum: 0 }),
          inQuery('column_limit', 'Columns per page; turns paging on.', { type: 'integer', minimum: 1, maximum: MAX_COLUMN_LIMIT, default: 25 }),
        ],
        { 200: json(ref('DatasetFileSchemaResponse'), 'The schema.'), 400: problem('Invalid column paging.'), 404: notFound }),
      '/api/datasets': get('listDatasets', catalog, 'Datasets across collections', 'The first 200 datasets by id.', [],
        { 200: json(ref('DatasetAggregateList'), 'Datasets.'), 404: notFound }),
      '/api/datasets/stats': get('getDatasetStats', catalog, 'Dataset counts', 'How many datasets there are, and how many have computed metadata.', [],
        { 200: json(ref('DatasetStats'), 'Counts.'), 404: notFound }),
      '/api/datasets/{id}': get('getDatasetById', catalog, 'Dataset by id', 'A dataset by its numeric id, with its files.',
        [inPath('id', 'Numeric dataset id.', { type: 'integer', minimum: 1 })],
        { 200: json(ref('DatasetByIdResponse'), 'The dataset.'), 400: problem('Invalid id.'), 404: notFound, 502: problem('The dataset failed to load.') }),
      '/api/queries': {
        post: {
          operationId: 'createQuery', tags: [queries], summary: 'Run a query', description: 'Runs bounded SQL over catalog sources and returns the first page with a token for later pages.',
          requestBody: { required: true, content: { 'application/json': { schema: ref('QueryRequest') } } },
          responses: queryResponses(json(ref('QueryResult'), 'The first page.')),
        },
      },
      '/api/queries/{query_id}/pages': {
        post: {
          operationId: 'getQueryPage', tags: [queries], summary: 'Fetch a page', description: 'Re-executes one page of a query.',
          parameters: [queryIdPath, tokenHeader],
          requestBody: { required: true, content: { 'application/json': { schema: ref('QueryPageRequest') } } },
          responses: queryResponses(json(ref('QueryResult'), 'The page.')),
        },
      },
      '/api/queries/{query_id}/tiles/{z}/{x}/{y}.mvt': {
        get: {
          operationId: 'getQueryTile', tags: [queries], summary: 'Vector tile of a result',
          description: 'The Mapbox Vector Tile (layer "result") of the query result at z/x/y: features clipped with a buffer and simplified per zoom, at most GEOSHELF_TILE_MAX_FEATURES of them. The token goes in X-Service-Query-Token, or in the token query parameter for map clients that cannot set headers.',
          parameters: [
            queryIdPath,
            inPath('z', 'Zoom, 0 to 24.', { type: 'integer', minimum: 0, maximum: 24 }),
            inPath('x', 'Column, 0 to 2^z - 1.', { type: 'integer', minimum: 0 }),
            inPath('y', 'Row, 0 to 2^z - 1.', { type: 'integer', minimum: 0 }),
            { ...tokenHeader, required: false, description: 'The query_token; or use the token query parameter.' },
            inQuery('token', 'The query_token, when the header cannot be sent.', { type: 'string' }),
          ],
          responses: {
            200: { description: 'The tile.', content: { 'application/vnd.mapbox-vector-tile': { schema: { type: 'string', contentMediaType: 'application/vnd.mapbox-vector-tile' } } } },
            204: { description: 'No feature of the result meets this tile.' },
            400: queryError('Invalid tile address, query_id or token.'),
            422: queryError('The result has no geometry.'),
            503: queryError('The query service is busy.'),
            504: queryError('The tile query timed out.'),
          },
        },
      },
      '/api/queries/{query_id}/bounds': {
        get: {
          operationId: 'getQueryBounds', tags: [queries], summary: 'Bounds of a result', description: 'WGS84 extent of the whole result, for map framing.',
          parameters: [queryIdPath, tokenHeader],
          responses: queryResponses(json(ref('QueryBounds'), 'The extent.')),
        },
      },
    },
    components: { schemas },
  };
}

function queryResponses(ok: Json): Json {
  return {
    200: ok,
    400: queryError('Invalid request, token or parameter.'),
    422: queryError('The query cannot be executed as requested.'),
    503: queryError('The query service is unavailable or busy.'),
    504: queryError('The query timed out.'),
  };
}
