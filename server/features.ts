import type { H3, H3Event } from 'h3';
import type { CatalogIndex } from '../core/catalog-index.ts';
import { renderCollection, renderCollections, renderConformance, renderLandingPage, renderQueryables, writeFeature, writeFeatureCollection } from '../core/api/ogc/documents.ts';
import { COUNT_MAX_ROWS, isFiltered, itemsUrl, neighbourCursors, parseItemsRequest, toFeatureFilter } from '../core/api/ogc/items.ts';
import { listFeatureLayers, type FeatureLayer } from '../core/api/ogc/layers.ts';
import { DEFAULT_COLLECTIONS_LIMIT, DEFAULT_FEATURE_LIMIT } from '../core/api/ogc/params.ts';
import { createFeaturesOpenApiDocument } from '../core/api/ogc/openapi.ts';
import { OGC_ROUTES, OGC_TYPES } from '../core/api/ogc/routes.ts';
import { ogcFailure } from '../core/api/ogc-exception.ts';
import { QUERY_ERRORS } from '../query/errors.ts';
import { renderStyle, renderTileJson, STYLE_TYPE, renderTileMatrixSet, renderTileMatrixSets, renderTilesets, renderTileset, tileRange } from '../core/api/ogc/tiles.ts';
import { serializeJson } from '../core/static-files.ts';
import { CORS_HEADERS } from './headers.ts';
import { createTileArchives } from './tile-archives.ts';
import type { FeatureFile, QueryService } from '../query/service.ts';
import { requestClientOf } from './client-address.ts';
import { mapOgcError } from './errors.ts';
import { respondComputed } from './responses.ts';
import { mountRouteTable, type RouteHandler } from './surface-kit.ts';

/** What the /features routes read: the build in force and the query engine. */
export interface FeatureRouteOptions {
  queries: QueryService;
  /** The catalog of the build being served, its `{base_url}`, and an id that changes with every build. */
  catalog: () => { index: CatalogIndex; baseUrl: string; buildId: string };
  cacheMaxAge: number;
  /** The data folder, where the PMTiles twins that the tiles routes read are. */
  dataDir: string;
}

type OgcRouteId = keyof typeof OGC_ROUTES;

const notFound = (what: string) => ogcFailure(404, what);

/**
 * Mounts OGC API - Features at /features: thin adapters over the route table (core/api/ogc), the catalog
 * index and the query engine, whose `features` reads run in the same worker pool and sandbox as /api/queries.
 * Every error is an OGC exception `{code, description}` (core/api/ogc-exception.ts): 400 for a bad parameter, 404
 * for an unknown collection, feature or path (never the site's 404 page), 405 for another method, and the query
 * engine's failures with their own code and status (503 with Retry-After, 504 at the deadline).
 */
export function registerFeatureRoutes(app: H3, options: FeatureRouteOptions): void {
  const { queries, catalog } = options;
  const layerOf = (path: Record<string, unknown>): FeatureLayer => {
    const layer = listFeatureLayers(catalog().index).get(String(path.collectionId));
    if (!layer) throw notFound(`There is no collection "${String(path.collectionId).slice(0, 100)}"; /features/collections lists them.`);
    return layer;
  };
  /** The OpenAPI document of the build in force, made once per build: it lists every collection's queryables. */
  const apiDocuments = new WeakMap<CatalogIndex, { baseUrl: string; bytes: Uint8Array }>();
  const readApiDocument = (): Uint8Array => {
    const { index, baseUrl } = catalog();
    let cached = apiDocuments.get(index);
    if (cached?.baseUrl !== baseUrl) {
      cached = { baseUrl, bytes: serializeJson(createFeaturesOpenApiDocument(baseUrl, listFeatureLayers(index).values())) };
      apiDocuments.set(index, cached);
    }
    return cached.bytes;
  };
  const archives = createTileArchives(options.dataDir, queries.remoteCopy);
  /** A layer's open twin: a 404 for a layer without one (its file is in object storage, or the build made none). */
  const archiveOf = async (layer: FeatureLayer) => {
    const archive = layer.tiles;
    if (!archive) throw notFound(`Collection "${layer.id}" has no vector tiles: the build made no PMTiles archive of its file.`);
    return archives(archive, catalog().buildId).catch((error: unknown) => {
      if (!archive.remote) throw error;
      // As a download-zip answers when object storage cannot be read: the operator's or the store's, not the client's.
      throw ogcFailure(503, 'The vector tiles of this collection are in object storage, which cannot be read right now; retry later.', { 'retry-after': String(QUERY_ERRORS.source_unavailable.retryAfter) });
    });
  };
  const handlers: Record<OgcRouteId, RouteHandler> = {
    getTileMatrixSets: async (event) => answer(event, renderTileMatrixSets(catalog().baseUrl)),
    getTileMatrixSet: async (event) => answer(event, renderTileMatrixSet()),
    getCollectionTilesets: async (event, path) => {
      const layer = layerOf(path);
      await archiveOf(layer);
      return answer(event, renderTilesets(catalog().baseUrl, layer));
    },
    getCollectionTileset: async (event, path) => {
      const layer = layerOf(path);
      const { facts } = await archiveOf(layer);
      const query = OGC_ROUTES.getCollectionTileset.parseQuery(event.url.searchParams);
      if (!query.ok) throw ogcFailure(400, query.detail);
      return answer(event, query.value.f === 'tilejson' ? renderTileJson(catalog().baseUrl, layer, facts) : renderTileset(catalog().baseUrl, layer, facts));
    },
    getCollectionStyle: async (event, path) => {
      const layer = layerOf(path);
      const { facts } = await archiveOf(layer);
      return answer(event, renderStyle(catalog().baseUrl, layer, facts), STYLE_TYPE);
    },
    getCollectionTile: async (event, path) => {
      const layer = layerOf(path);
      const { reader, facts } = await archiveOf(layer);
      const [z, row, col] = [Number(path.tileMatrix), Number(path.tileRow), Number(path.tileCol)];
      const range = z >= facts.minZoom && z <= facts.maxZoom ? tileRange(facts.bounds, z) : undefined;
      if (!range || row < range.minTileRow || row > range.maxTileRow || col < range.minTileCol || col > range.maxTileCol) {
        throw notFound(`Tile ${z}/${row}/${col} is outside the tileset of "${layer.id}": zoom levels ${facts.minZoom}–${facts.maxZoom}${range ? `, rows ${range.minTileRow}–${range.maxTileRow} and columns ${range.minTileCol}–${range.maxTileCol} at this one` : ''}.`);
      }
      const tile = await reader.getZxy(z, col, row);
      if (!tile) return new Response(null, { status: 204, headers: { ...CORS_HEADERS, 'cache-control': `public, max-age=${options.cacheMaxAge}` } });
      return answerBytes(event, new Uint8Array(tile.data), OGC_TYPES.mvt);
    },
    getFeaturesLanding: async (event) => answer(event, renderLandingPage(catalog().baseUrl)),
    getFeaturesConformance: async (event) => answer(event, renderConformance()),
    getFeaturesApi: async (event) => respondComputed(event.req, readApiDocument(), { type: OGC_TYPES.openapi, cacheMaxAge: options.cacheMaxAge }),
    getFeatureCollections: async (event) => {
      const query = OGC_ROUTES.getFeatureCollections.parseQuery(event.url.searchParams);
      if (!query.ok) throw ogcFailure(400, query.detail);
      const page = { offset: query.value.offset ?? 0, limit: query.value.limit ?? DEFAULT_COLLECTIONS_LIMIT };
      return answer(event, renderCollections(catalog().baseUrl, [...listFeatureLayers(catalog().index).values()], page));
    },
    getFeatureCollection: async (event, path) => answer(event, renderCollection(catalog().baseUrl, layerOf(path))),
    getFeatureQueryables: async (event, path) => answer(event, renderQueryables(catalog().baseUrl, layerOf(path)), OGC_TYPES.schema),
    getFeatures: async (event, path) => answerBytes(event, await readItems(layerOf(path), event.url.searchParams, requestClientOf(event)), OGC_TYPES.geojson),
    getFeature: async (event, path) => {
      const layer = layerOf(path);
      const id = Number(path.featureId);
      const known = layer.source.metadata?.feature_count;
      const found = typeof known === 'number' && id >= known ? undefined : await queries.features(fileOf(layer), { mode: 'one', id }, requestClientOf(event));
      if (!found || found.ids.length === 0) throw notFound(`Collection "${layer.id}" has no feature ${id}; ids are row positions from 0.`);
      return answerBytes(event, writeFeature(catalog().baseUrl, layer, id, found.featuresJson), OGC_TYPES.geojson);
    },
  };

  /** A page of items as UTF-8 JSON: the engine reads it, numberMatched comes from the catalog when no filter applies. */
  const readItems = async (layer: FeatureLayer, params: URLSearchParams, client: string | undefined) => {
    const { baseUrl } = catalog();
    const parsed = parseItemsRequest(layer, params);
    if (!parsed.ok) throw ogcFailure(400, parsed.detail);
    const request = parsed.value;
    const filter = toFeatureFilter(layer, request);
    const rows = typeof layer.source.metadata?.feature_count === 'number' ? layer.source.metadata.feature_count : undefined;
    const filtered = isFiltered(request);
    const { limit = DEFAULT_FEATURE_LIMIT, after, before } = request.values;
    const page = filter === null
      ? { featuresJson: new TextEncoder().encode('[]'), ids: [], hasMore: false, matched: 0 }
      : await queries.features(fileOf(layer), {
        mode: 'page', filter, limit, count: filtered && rows !== undefined && rows <= COUNT_MAX_ROWS,
        ...(after === undefined ? {} : { after }), ...(before === undefined ? {} : { before }),
      }, client);
    const cursors = neighbourCursors(request, page.ids, page.hasMore);
    const links = {
      self: itemsUrl(baseUrl, layer, request, { ...(after === undefined ? {} : { after }), ...(before === undefined ? {} : { before }) }),
      ...(cursors.next ? { next: itemsUrl(baseUrl, layer, request, cursors.next) } : {}),
      ...(cursors.prev ? { prev: itemsUrl(baseUrl, layer, request, cursors.prev) } : {}),
    };
    return writeFeatureCollection(baseUrl, layer, page.featuresJson, page.ids.length, links, filtered ? page.matched : rows);
  };

  mountRouteTable(app, {
    routes: OGC_ROUTES,
    handlers,
    invalidPath: (path) => {
      const what = path.name === 'featureId' ? 'feature' : path.name === 'tileMatrixSetId' ? 'tile matrix set' : ['tileMatrix', 'tileRow', 'tileCol'].includes(path.name) ? 'tile' : 'collection';
      throw notFound(`No such ${what}: ${path.detail}.`);
    },
    methodNotAllowed: () => {
      throw ogcFailure(405, 'The /features routes are read-only: GET and HEAD.', { allow: 'GET, HEAD, OPTIONS' });
    },
    notFound: () => {
      throw notFound('There is no such /features path; the landing page /features links every resource.');
    },
  }, mapOgcError('features'));

  function answer(event: H3Event, body: unknown, type: string = OGC_TYPES.json): Response | Promise<Response> {
    return respondComputed(event.req, serializeJson(body), { type, cacheMaxAge: options.cacheMaxAge });
  }

  function answerBytes(event: H3Event, bytes: Uint8Array, type: string): Response | Promise<Response> {
    return respondComputed(event.req, bytes, { type, cacheMaxAge: options.cacheMaxAge });
  }
}

/** The file a layer's features are read from. */
function fileOf(layer: FeatureLayer): FeatureFile {
  return { key: layer.id, path: layer.path, ...(layer.remote ? { remote: layer.remote } : {}), crs: layer.source.stored?.crs ?? null, geometryColumn: layer.source.stored?.geometry_column ?? null };
}
