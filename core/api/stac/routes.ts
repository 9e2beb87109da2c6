import { z } from 'zod';
import { API_VERSION } from '../../constants.ts';
import { StacCollectionSchema, StacItemSchema } from '../../../schemas/stac.ts';
import { MAX_JSON_DEPTH } from '../../json-depth.ts';
import {
  StacApiErrorSchema, StacCollectionsSchema, StacConformanceSchema, StacItemCollectionSchema, StacLandingPageSchema, StacSearchBodySchema,
} from '../../../schemas/stac-api.ts';
import { CONDITIONAL_HEADERS } from '../catalog/params.ts';
import { OGC_TYPES } from '../ogc/routes.ts';
import { defineRoute, type Route, type RouteResponse } from '../route-table.ts';
import { COLLECTIONS_QUERY, ITEMS_QUERY, MAX_STAC_BODY_BYTES, refineSearch, SEARCH_QUERY } from './params.ts';

const TAG = 'stac';
/** The OpenAPI tags of the STAC API. */
export const STAC_API_TAGS = [{ name: TAG, description: 'STAC API 1.0.0 over the latest version of every file: Collections are datasets, Items files (layers).' }];

/** Media types of the STAC API's answers. */
export const STAC_API_TYPES = {
  json: 'application/json',
  geojson: 'application/geo+json',
  openapi: 'application/vnd.oai.openapi+json;version=3.1',
} as const;

/** Link relation of the item search endpoint, which the landing page links once per method (STAC API item search). */
export const STAC_SEARCH_REL = 'search';

/** `{collectionId}`: a STAC Collection id, `{collection-slug}.{dataset-slug}`. Anything else names nothing (404). */
const CollectionIdParam = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*\.[a-z0-9]+(?:-[a-z0-9]+)*$/).describe('Collection id: {collection slug}.{dataset slug}, as /stac/api/collections lists them.');
/** `{itemId}`: a file's slug (its latest version) or `{slug}@{version}` (an older one). */
const ItemIdParam = z.string().min(1).describe('Item id: the file slug for its latest version, or {file slug}@{version} for an older one.');

const body = (schema: z.ZodType, description: string, contentType: string = STAC_API_TYPES.json): RouteResponse => ({ description, contentType, schema });
const error = (description: string): RouteResponse => body(StacApiErrorSchema, description);
const NOT_MODIFIED: RouteResponse = { description: 'Not modified: If-None-Match names this document.' };
const BAD_PARAMETER = error('A parameter is malformed or out of range, or a page token is not valid for this search on this build; the description says which and why.');
const UNKNOWN_COLLECTION = error('There is no Collection with this id.');
const WRONG_METHOD = error('The path exists but not for this method; the Allow header lists those it accepts.');
const QUERYABLES = body(z.looseObject({ properties: z.record(z.string(), z.looseObject({})) }), 'The queryables: a JSON Schema.', OGC_TYPES.schema);
const SORTABLES = body(z.looseObject({ properties: z.record(z.string(), z.looseObject({})) }), 'The sortables: a JSON Schema of the fields sortby takes, and no others (additionalProperties is false).', OGC_TYPES.schema);
const GEOMETRY_BUSY = error('An intersects search waited too long for the geometry thread, or took too long there; Retry-After says when to try again.');
/** The limits every search states, beside its parameters' own. */
const SEARCH_LIMITS = 'A search over a limit (each parameter and body field states its own: terms, words and characters of q, positions, parts and rings of intersects, how many ids, collections and sort keys) is a 400 whose description names the limit.';

/**
 * The STAC API routes, keyed by operationId. Declarations only: `server/stac.ts` attaches the handlers; the
 * OpenAPI document (`/stac/api/openapi`) is generated from them. Answers are JSON or GeoJSON; errors are
 * StacApiError documents (400, 404, 405, 413), never problem+json.
 */
export const STAC_ROUTES = {
  getStacLandingPage: defineRoute({
    id: 'getStacLandingPage', method: 'GET', path: '/stac/api', tag: TAG, summary: 'Landing page',
    description: 'The root Catalog with the conformance classes and links to the API definition, the Collections, search and every Collection (child). Query parameters are ignored.',
    headers: CONDITIONAL_HEADERS,
    responses: { 200: body(StacLandingPageSchema, 'The landing page.'), 304: NOT_MODIFIED, 405: WRONG_METHOD },
  }),
  getStacOpenApi: defineRoute({
    id: 'getStacOpenApi', method: 'GET', path: '/stac/api/openapi', tag: TAG, summary: 'This document',
    description: 'The OpenAPI 3.1 document of the STAC API (its service-desc). Query parameters are ignored.',
    headers: CONDITIONAL_HEADERS,
    responses: { 200: body(z.looseObject({}), 'OpenAPI document.', STAC_API_TYPES.openapi), 304: NOT_MODIFIED, 405: WRONG_METHOD },
  }),
  getStacConformance: defineRoute({
    id: 'getStacConformance', method: 'GET', path: '/stac/api/conformance', tag: TAG, summary: 'Conformance classes',
    description: 'The STAC API and OGC API - Features conformance classes this API implements. Query parameters are ignored.',
    headers: CONDITIONAL_HEADERS,
    responses: { 200: body(StacConformanceSchema, 'Conformance classes.'), 304: NOT_MODIFIED, 405: WRONG_METHOD },
  }),
  getStacCollections: defineRoute({
    id: 'getStacCollections', method: 'GET', path: '/stac/api/collections', tag: TAG, summary: 'Collections',
    description: 'One page of the Collections (a Collection per dataset), with a next link while there are more: all of them in catalog order, or those a Collection Search matches (bbox, datetime, q, filter, sortby; a Collection meets bbox, datetime and a spatial filter when one of its Items does, and q by its best Item).',
    query: COLLECTIONS_QUERY, headers: CONDITIONAL_HEADERS,
    responses: { 200: body(StacCollectionsSchema, 'A page of Collections.'), 304: NOT_MODIFIED, 400: BAD_PARAMETER, 405: WRONG_METHOD },
  }),
  getStacCollectionSearchQueryables: defineRoute({
    id: 'getStacCollectionSearchQueryables', method: 'GET', path: '/stac/api/collections/queryables', tag: TAG, summary: 'Queryables of Collection search',
    description: 'A JSON Schema of what a filter of /stac/api/collections names: id, title, description, license, and geometry (met when any Item\'s footprint meets it). Query parameters are ignored.',
    headers: CONDITIONAL_HEADERS,
    responses: { 200: QUERYABLES, 304: NOT_MODIFIED, 405: WRONG_METHOD },
  }),
  getStacCollectionSearchSortables: defineRoute({
    id: 'getStacCollectionSearchSortables', method: 'GET', path: '/stac/api/collections/sortables', tag: TAG, summary: 'Sortables of Collection search',
    description: 'A JSON Schema of the fields the sortby of /stac/api/collections takes: id and title. Query parameters are ignored.',
    headers: CONDITIONAL_HEADERS,
    responses: { 200: SORTABLES, 304: NOT_MODIFIED, 405: WRONG_METHOD },
  }),
  getStacCollection: defineRoute({
    id: 'getStacCollection', method: 'GET', path: '/stac/api/collections/{collectionId}', tag: TAG, summary: 'Collection',
    description: 'The Collection of a dataset: extent, keywords, links to its items. Query parameters are ignored.',
    pathParams: { collectionId: CollectionIdParam }, headers: CONDITIONAL_HEADERS,
    responses: { 200: body(StacCollectionSchema, 'The Collection.'), 304: NOT_MODIFIED, 404: UNKNOWN_COLLECTION, 405: WRONG_METHOD },
  }),
  getStacItems: defineRoute({
    id: 'getStacItems', method: 'GET', path: '/stac/api/collections/{collectionId}/items', tag: TAG, summary: 'Items of a Collection',
    description: 'One page of the Items of a Collection (the latest version of each file, in record order, or in the order sortby asks), filtered by bbox, datetime and filter, with a next link while there are more.',
    pathParams: { collectionId: CollectionIdParam }, query: ITEMS_QUERY, headers: CONDITIONAL_HEADERS,
    responses: { 200: body(StacItemCollectionSchema, 'A page of Items.', STAC_API_TYPES.geojson), 304: NOT_MODIFIED, 400: BAD_PARAMETER, 404: UNKNOWN_COLLECTION, 405: WRONG_METHOD },
  }),
  getStacItem: defineRoute({
    id: 'getStacItem', method: 'GET', path: '/stac/api/collections/{collectionId}/items/{itemId}', tag: TAG, summary: 'Item',
    description: 'The Item of a file: its latest version, or with {file}@{version} an older one (reached from the version links). Query parameters are ignored.',
    pathParams: { collectionId: CollectionIdParam, itemId: ItemIdParam }, headers: CONDITIONAL_HEADERS,
    responses: { 200: body(StacItemSchema, 'The Item.', STAC_API_TYPES.geojson), 304: NOT_MODIFIED, 404: error('There is no Collection, file or version with this id.'), 405: WRONG_METHOD },
  }),
  getStacQueryables: defineRoute({
    id: 'getStacQueryables', method: 'GET', path: '/stac/api/queryables', tag: TAG, summary: 'Queryables of item search',
    description: 'A JSON Schema of what a filter names: id, collection, datetime, title, geometry (the footprint), and the Item\'s description, created, updated, version, table:row_count and proj:code. Query parameters are ignored.',
    headers: CONDITIONAL_HEADERS,
    responses: { 200: QUERYABLES, 304: NOT_MODIFIED, 405: WRONG_METHOD },
  }),
  getStacCollectionQueryables: defineRoute({
    id: 'getStacCollectionQueryables', method: 'GET', path: '/stac/api/collections/{collectionId}/queryables', tag: TAG, summary: 'Queryables of a Collection',
    description: 'The queryables of the items of a Collection: those of item search. Query parameters are ignored.',
    pathParams: { collectionId: CollectionIdParam }, headers: CONDITIONAL_HEADERS,
    responses: { 200: QUERYABLES, 304: NOT_MODIFIED, 404: UNKNOWN_COLLECTION, 405: WRONG_METHOD },
  }),
  getStacSortables: defineRoute({
    id: 'getStacSortables', method: 'GET', path: '/stac/api/sortables', tag: TAG, summary: 'Sortables of item search',
    description: 'A JSON Schema of the fields sortby takes: id, collection, datetime, title, and the Item\'s created, updated, table:row_count, description, version and proj:code. Query parameters are ignored.',
    headers: CONDITIONAL_HEADERS,
    responses: { 200: SORTABLES, 304: NOT_MODIFIED, 405: WRONG_METHOD },
  }),
  getStacCollectionSortables: defineRoute({
    id: 'getStacCollectionSortables', method: 'GET', path: '/stac/api/collections/{collectionId}/sortables', tag: TAG, summary: 'Sortables of a Collection',
    description: 'The sortables of the items of a Collection: those of item search. Query parameters are ignored.',
    pathParams: { collectionId: CollectionIdParam }, headers: CONDITIONAL_HEADERS,
    responses: { 200: SORTABLES, 304: NOT_MODIFIED, 404: UNKNOWN_COLLECTION, 405: WRONG_METHOD },
  }),
  getStacSearch: defineRoute({
    id: 'getStacSearch', method: 'GET', path: '/stac/api/search', tag: TAG, summary: 'Search Items',
    description: `Items (latest versions) across Collections that match every filter given, one page at a time. Without q or sortby, in catalog order; with q, best match first. An intersects longer than ${MAX_STAC_BODY_BYTES} characters, or that GEOS calls invalid, is a 400; send geometries too long for a URL with POST. ${SEARCH_LIMITS}`,
    query: SEARCH_QUERY, headers: CONDITIONAL_HEADERS, refineQuery: refineSearch,
    responses: { 200: body(StacItemCollectionSchema, 'A page of Items.', STAC_API_TYPES.geojson), 304: NOT_MODIFIED, 400: BAD_PARAMETER, 405: WRONG_METHOD, 503: GEOMETRY_BUSY },
  }),
  postStacSearch: defineRoute({
    id: 'postStacSearch', method: 'POST', path: '/stac/api/search', tag: TAG, summary: 'Search Items (JSON body)',
    description: `The search of GET /stac/api/search with a JSON body, for geometries too long for a URL. The next link is a POST link whose body (the token) is merged into the previous body. A body over ${MAX_STAC_BODY_BYTES} bytes is refused with 413 before it is read, and one that nests arrays and objects more than ${MAX_JSON_DEPTH} deep with 400 before it is parsed. ${SEARCH_LIMITS}`,
    body: StacSearchBodySchema,
    responses: {
      200: body(StacItemCollectionSchema, 'A page of Items.', STAC_API_TYPES.geojson),
      400: error('The body is not JSON, nests too deep, or a field is malformed or over its limit; the description names it and the limit.'),
      405: WRONG_METHOD,
      413: error(`The body is larger than ${MAX_STAC_BODY_BYTES} bytes.`),
      503: GEOMETRY_BUSY,
    },
  }),
};

/** Every route of the STAC API, in the order the OpenAPI document lists them. */
export const STAC_API_ROUTES = Object.values(STAC_ROUTES) as Route[];

/** The `info` of the STAC API's OpenAPI document. */
export const STAC_API_INFO = {
  title: 'geoshelf STAC API',
  version: API_VERSION,
  summary: 'STAC API 1.0.0 over the geoshelf catalog: item search, collections and features.',
  description: 'A STAC API over the latest version of every file (layer) of the catalog: a Collection per dataset, an Item per file. Errors are {code, description} documents. Routes without query parameters ignore any they are given; the others answer 400 to an unknown or repeated one.',
  license: { name: 'MIT', identifier: 'MIT' },
};
