import { z } from 'zod';
import {
  OgcCollectionSchema, OgcCollectionsSchema, OgcConformanceSchema, OgcExceptionSchema, OgcFeatureCollectionSchema, OgcFeatureSchema,
  OgcLandingPageSchema, OgcQueryablesSchema,
} from '../../../schemas/ogc.ts';
import { CONDITIONAL_HEADERS } from '../catalog/params.ts';
import { defineRoute, type Route, type RouteResponse } from '../route-table.ts';
import {
  AfterParam, BboxCrsParam, BboxParam, BeforeParam, CollectionIdParam, CollectionsLimitParam, CollectionsOffsetParam, DatetimeParam,
  DEFAULT_COLLECTIONS_LIMIT, FeatureIdParam, FilterCrsParam, FilterLangParam, FilterParam, FormatParam, LimitParam, NEXT_PAGE_LIMIT,
  TileIndexParam, TileMatrixSetIdParam, TilesetFormatParam,
} from './params.ts';

/** Media types of the /features surface. */
export const OGC_TYPES = {
  json: 'application/json',
  geojson: 'application/geo+json',
  schema: 'application/schema+json',
  openapi: 'application/vnd.oai.openapi+json;version=3.0',
  mvt: 'application/vnd.mapbox-vector-tile',
  html: 'text/html',
} as const;

/** The OGC link relations of queryables and sortables, which /features and the STAC API both link. */
export const OGC_RELS = {
  queryables: 'http://www.opengis.net/def/rel/ogc/1.0/queryables',
  sortables: 'http://www.opengis.net/def/rel/ogc/1.0/sortables',
} as const;

const FEATURES = 'features';
const TILES = 'tiles';
/** The tags of the /features operations: features, and the vector tiles of OGC API - Tiles. */
export const FEATURES_TAGS = [
  { name: FEATURES, description: 'OGC API - Features Parts 1 and 3: the GeoParquet files of the catalog as feature collections, filtered with CQL2.' },
  { name: TILES, description: 'OGC API - Tiles: each collection\'s vector tiles in WebMercatorQuad, from the PMTiles archive of its GeoParquet file.' },
];

const body = (type: string, schema: z.ZodType, description: string): RouteResponse => ({ description, contentType: type, schema });
const exception = (description: string): RouteResponse => body(OGC_TYPES.json, OgcExceptionSchema, description);
const FAILURES = {
  500: exception('A defect of the server; logged, never detailed.'),
};
const NOT_FOUND = { 404: exception('No such collection or feature.') };
/** Every answer carries its content hash as ETag, so a client holding it gets 304 (server/responses.ts). */
const NOT_MODIFIED = { 304: { description: 'Not modified: If-None-Match names this document.' } };
const READ_FAILURES = {
  ...FAILURES,
  503: exception('The query service is busy (Retry-After says when to come back) or shutting down.'),
  504: exception('Reading the file ran past the deadline.'),
};
const collectionPath = { collectionId: CollectionIdParam };
/** The archive of a collection's tiles in object storage could not be read. */
const ARCHIVE_UNAVAILABLE = { 503: exception('The collection\'s PMTiles archive is in object storage, which cannot be read right now; Retry-After says when to come back.') };

/**
 * The /features routes (OGC API - Features Part 1: Core, GeoJSON, OpenAPI 3.0), keyed by operationId. Declarations
 * only: `server/features.ts` attaches a handler to each. Routes without query parameters ignore any they get;
 * the items route refuses a parameter that is neither declared here nor a queryable of its collection.
 */
export const OGC_ROUTES = {
  getFeaturesLanding: defineRoute({
    id: 'getFeaturesLanding', method: 'GET', path: '/features', tag: FEATURES, summary: 'Landing page',
    description: 'Links to the API definition, the conformance declaration and the collections.',
    headers: CONDITIONAL_HEADERS,
    responses: { ...NOT_MODIFIED, 200: body(OGC_TYPES.json, OgcLandingPageSchema, 'The landing page.'), ...FAILURES },
  }),
  getFeaturesConformance: defineRoute({
    id: 'getFeaturesConformance', method: 'GET', path: '/features/conformance', tag: FEATURES, summary: 'Conformance declaration',
    description: 'The conformance classes implemented: core, geojson and oas30.',
    headers: CONDITIONAL_HEADERS,
    responses: { ...NOT_MODIFIED, 200: body(OGC_TYPES.json, OgcConformanceSchema, 'The conformance classes.'), ...FAILURES },
  }),
  getFeaturesApi: defineRoute({
    id: 'getFeaturesApi', method: 'GET', path: '/features/api', tag: FEATURES, summary: 'API definition',
    description: 'This OpenAPI 3.0 document.',
    headers: CONDITIONAL_HEADERS,
    responses: { ...NOT_MODIFIED, 200: body(OGC_TYPES.openapi, z.looseObject({}), 'The OpenAPI document.'), ...FAILURES },
  }),
  getFeatureCollections: defineRoute({
    id: 'getFeatureCollections', method: 'GET', path: '/features/collections', tag: FEATURES, summary: 'Feature collections',
    description: `A collection per file (layer) of the catalog that has a GeoParquet source, read from its latest version, in a stable order. Paged as OGC API - Common Part 2 pages collections: ${DEFAULT_COLLECTIONS_LIMIT} per page unless limit says otherwise, with next and prev links, numberMatched and numberReturned.`,
    query: { limit: CollectionsLimitParam, offset: CollectionsOffsetParam, f: FormatParam },
    headers: CONDITIONAL_HEADERS,
    unknownQuery: 'ignore',
    responses: {
      ...NOT_MODIFIED,
      200: body(OGC_TYPES.json, OgcCollectionsSchema, 'A page of the collections.'),
      400: exception('limit or offset is not a whole number in range; the description names it.'),
      ...READ_FAILURES,
    },
  }),
  getFeatureCollection: defineRoute({
    id: 'getFeatureCollection', method: 'GET', path: '/features/collections/{collectionId}', tag: FEATURES, summary: 'A feature collection',
    description: 'Title, extent, CRS and links of one collection.',
    pathParams: collectionPath,
    headers: CONDITIONAL_HEADERS,
    responses: { ...NOT_MODIFIED, 200: body(OGC_TYPES.json, OgcCollectionSchema, 'The collection.'), ...NOT_FOUND, ...READ_FAILURES },
  }),
  getFeatureQueryables: defineRoute({
    id: 'getFeatureQueryables', method: 'GET', path: '/features/collections/{collectionId}/queryables', tag: FEATURES, summary: 'Queryables',
    description: 'A JSON Schema of the columns a CQL2 filter names: the scalar ones (which `?name=value` filters on too), the dates and timestamps, and the geometry.',
    pathParams: collectionPath,
    headers: CONDITIONAL_HEADERS,
    responses: { ...NOT_MODIFIED, 200: body(OGC_TYPES.schema, OgcQueryablesSchema, 'The queryables.'), ...NOT_FOUND, ...FAILURES },
  }),
  getFeatures: defineRoute({
    id: 'getFeatures', method: 'GET', path: '/features/collections/{collectionId}/items', tag: FEATURES, summary: 'Features',
    description: `One page of the features of a collection, filtered by bbox, datetime, queryables (\`?name=value\`, each a column the queryables route lists) and a CQL2 filter, in file order. next and prev links page by feature id, so a deep page costs what the first does; each next link asks for twice the features of its page, up to ${NEXT_PAGE_LIMIT} (a larger limit is kept), so a client that follows them from a small limit reads a collection in few requests. numberMatched is given when it is cheap: without filters, or when the file has at most 250,000 rows.`,
    pathParams: collectionPath,
    query: {
      limit: LimitParam, bbox: BboxParam, 'bbox-crs': BboxCrsParam, datetime: DatetimeParam,
      filter: FilterParam, 'filter-lang': FilterLangParam, 'filter-crs': FilterCrsParam,
      after: AfterParam, before: BeforeParam, f: FormatParam,
    },
    headers: CONDITIONAL_HEADERS,
    unknownQuery: 'ignore',
    responses: {
      ...NOT_MODIFIED,
      200: body(OGC_TYPES.geojson, OgcFeatureCollectionSchema, 'A page of features.'),
      400: exception('A parameter is not valid, repeated, or neither declared nor a queryable, or the filter is not valid CQL2 or names what the collection does not have; the description names it, and where in the filter.'),
      ...NOT_FOUND, ...READ_FAILURES,
    },
  }),
  getTileMatrixSets: defineRoute({
    id: 'getTileMatrixSets', method: 'GET', path: '/features/tileMatrixSets', tag: TILES, summary: 'Tile matrix sets',
    description: 'The tiling schemes of the vector tiles: WebMercatorQuad only.',
    headers: CONDITIONAL_HEADERS,
    responses: { ...NOT_MODIFIED, 200: body(OGC_TYPES.json, z.looseObject({ tileMatrixSets: z.array(z.looseObject({ id: z.string() })) }), 'The tile matrix sets.'), ...FAILURES },
  }),
  getTileMatrixSet: defineRoute({
    id: 'getTileMatrixSet', method: 'GET', path: '/features/tileMatrixSets/{tileMatrixSetId}', tag: TILES, summary: 'A tile matrix set',
    description: 'The definition of WebMercatorQuad in the JSON encoding of OGC Two Dimensional Tile Matrix Set 2.0: zoom levels 0 to 24.',
    pathParams: { tileMatrixSetId: TileMatrixSetIdParam },
    headers: CONDITIONAL_HEADERS,
    responses: { ...NOT_MODIFIED, 200: body(OGC_TYPES.json, z.looseObject({ id: z.string(), tileMatrices: z.array(z.looseObject({})) }), 'The tile matrix set.'), 404: exception('No such tile matrix set.'), ...FAILURES },
  }),
  getCollectionTilesets: defineRoute({
    id: 'getCollectionTilesets', method: 'GET', path: '/features/collections/{collectionId}/tiles', tag: TILES, summary: 'Vector tilesets of a collection',
    description: 'The tilesets of a collection: one, in WebMercatorQuad, from the PMTiles archive the build made of its GeoParquet source.',
    pathParams: collectionPath,
    headers: CONDITIONAL_HEADERS,
    responses: { ...NOT_MODIFIED, 200: body(OGC_TYPES.json, z.looseObject({ tilesets: z.array(z.looseObject({})) }), 'The tilesets.'), 404: exception('No such collection, or it has no tiles (a file in object storage).'), ...ARCHIVE_UNAVAILABLE, ...FAILURES },
  }),
  getCollectionTileset: defineRoute({
    id: 'getCollectionTileset', method: 'GET', path: '/features/collections/{collectionId}/tiles/{tileMatrixSetId}', tag: TILES, summary: 'A vector tileset',
    description: 'The tileset: its zoom levels and the rows and columns at each (tileMatrixSetLimits), its layers, and the template of its tiles; with f=tilejson, the same as TileJSON 3.0.0 for MapLibre.',
    pathParams: { ...collectionPath, tileMatrixSetId: TileMatrixSetIdParam },
    query: { f: TilesetFormatParam },
    headers: CONDITIONAL_HEADERS,
    unknownQuery: 'ignore',
    responses: {
      ...NOT_MODIFIED,
      200: body(OGC_TYPES.json, z.looseObject({}), 'The tileset, or its TileJSON.'),
      400: exception('f is neither json nor tilejson, or is given twice.'),
      404: exception('No such collection or tile matrix set, or the collection has no tiles.'),
      ...ARCHIVE_UNAVAILABLE, ...FAILURES,
    },
  }),
  getCollectionTile: defineRoute({
    id: 'getCollectionTile', method: 'GET', path: '/features/collections/{collectionId}/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}', tag: TILES, summary: 'A vector tile',
    description: 'One Mapbox Vector Tile, read from the collection\'s PMTiles archive by range: 204 when the tile is inside the tileset\'s limits and holds nothing, 404 outside them (past the deepest zoom level, clients draw the tiles of that level larger).',
    pathParams: { ...collectionPath, tileMatrixSetId: TileMatrixSetIdParam, tileMatrix: TileIndexParam, tileRow: TileIndexParam, tileCol: TileIndexParam },
    headers: CONDITIONAL_HEADERS,
    responses: {
      ...NOT_MODIFIED,
      200: { description: 'The tile.', contentType: OGC_TYPES.mvt, schema: z.string().meta({ format: 'binary' }) },
      204: { description: 'The tile is inside the limits and empty.' },
      404: exception('No such collection, or the tile is outside the tileset\'s limits.'),
      ...ARCHIVE_UNAVAILABLE, ...FAILURES,
    },
  }),
  getCollectionStyle: defineRoute({
    id: 'getCollectionStyle', method: 'GET', path: '/features/collections/{collectionId}/styles/default', tag: TILES, summary: 'A MapLibre style',
    description: 'A MapLibre style (version 8) that draws the collection from its vector tiles (their TileJSON is its source): circles, lines or fills by the file\'s geometry type.',
    pathParams: collectionPath,
    headers: CONDITIONAL_HEADERS,
    responses: { ...NOT_MODIFIED, 200: body('application/vnd.mapbox.style+json', z.looseObject({ version: z.literal(8) }), 'The style.'), 404: exception('No such collection, or it has no tiles.'), ...ARCHIVE_UNAVAILABLE, ...FAILURES },
  }),
  getFeature: defineRoute({
    id: 'getFeature', method: 'GET', path: '/features/collections/{collectionId}/items/{featureId}', tag: FEATURES, summary: 'A feature',
    description: 'One feature by its id (the position of its row in the file, from 0).',
    pathParams: { ...collectionPath, featureId: FeatureIdParam },
    headers: CONDITIONAL_HEADERS,
    responses: { ...NOT_MODIFIED, 200: body(OGC_TYPES.geojson, OgcFeatureSchema, 'The feature.'), ...NOT_FOUND, ...READ_FAILURES },
  }),
};

/** Every /features route, for the OpenAPI document and the server. */
export const FEATURES_ROUTES = Object.values(OGC_ROUTES) as Route[];
