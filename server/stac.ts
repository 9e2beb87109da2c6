import type { H3, H3Event } from 'h3';
import { createOpenApiDocument } from '../core/api/openapi.ts';
import type { Route } from '../core/api/route-table.ts';
import { MAX_STAC_BODY_BYTES, searchRequestFromBody, type StacCollectionsRequest, type StacSearchRequest } from '../core/api/stac/params.ts';
import { STAC_API_INFO, STAC_API_ROUTES, STAC_API_TAGS, STAC_API_TYPES, STAC_ROUTES } from '../core/api/stac/routes.ts';
import type { CatalogIndex } from '../core/catalog-index.ts';
import type { RenderContext } from '../core/api/catalog/resources.ts';
import { serializeJson } from '../core/static-files.ts';
import {
  findStacCollection, renderStacApiCollection, renderStacApiItem, renderStacCollectionsPage, renderStacLandingPage, renderStacSearchPage, stacApiUrl,
  STAC_API_CONFORMANCE, withQuery, type SearchPageLinks,
} from '../core/api/stac/api.ts';
import { StacApiFailure } from '../core/api/stac/api-errors.ts';
import { STAC_COLLECTION_QUERYABLES, STAC_COLLECTION_SORT_FIELDS } from '../core/api/stac/collection-search.ts';
import { OGC_TYPES } from '../core/api/ogc/routes.ts';
import { createStacFilterTest, readStacFilter, renderStacQueryables, renderStacSortables, type StacFilter } from '../core/api/stac/filter.ts';
import { STAC_SORTABLES, stacSearchIndex, warmStacSearchSlices } from '../core/api/stac/search.ts';
import { runInSlices } from '../core/slices.ts';
import { safeParseWithFriendlyErrors } from '../schemas/parse.ts';
import { StacSearchBodyIntakeSchema } from '../schemas/stac-api.ts';
import { readJsonBody } from './body.ts';
import type { CatalogSnapshot } from './catalog.ts';
import { mapOgcError } from './errors.ts';
import { respondComputed } from './responses.ts';
import { mountRouteTable, type RouteHandler } from './surface-kit.ts';

/** Options of the STAC API routes. */
export interface StacRouteOptions {
  /** Seconds in the Cache-Control max-age of GET answers, as for catalog documents. */
  cacheMaxAge: number;
}

type StacRouteId = keyof typeof STAC_ROUTES;
/** A document to answer, or its bytes when they are cached. */
type Answer = { body: unknown; type: string } | { bytes: Uint8Array; type: string };
type Render = (event: H3Event, context: RenderContext, path: Record<string, unknown>) => Answer | Promise<Answer>;

/**
 * Mounts the STAC API (/stac/api) from its route table, as thin adapters over core/api/stac/api.ts: parse the
 * request, render the document, answer it with an ETag (its content hash) and a cache lifetime like the catalog.
 * A GET route answers HEAD too; another method on a known path answers 405 with Allow, any other path under
 * /stac/api 404, and every failure is an OGC exception document in STAC's vocabulary, never problem+json.
 */
export function registerStacRoutes(app: H3, snapshot: () => CatalogSnapshot, options: StacRouteOptions): void {
  // Right after start rather than on the first search, in slices so that other requests are answered meanwhile; a
  // STAC request waits for them. A reloaded build's indexes are built as it loads (server/catalog.ts).
  setImmediate(() => void warmIndexes(snapshot().context.index)).unref();
  /** Answers what a route renders, with its ETag and the cache lifetime of its method (none for a POST search). */
  const answerWith = (render: Render): RouteHandler => async (event, path) => {
    const { context } = snapshot();
    await warmIndexes(context.index);
    const result = await render(event, context, path);
    const bytes = 'bytes' in result ? result.bytes : serializeJson(result.body);
    return respondComputed(event.req, bytes, { type: result.type, cacheMaxAge: event.req.method === 'POST' ? 0 : options.cacheMaxAge });
  };
  /** A JSON Schema of a Collection's items (queryables, sortables) at its own URL; a 404 for an id that names no Collection. */
  const ofCollection = (route: typeof STAC_ROUTES.getStacCollectionQueryables, render: (url: string, id: string) => object) => answerWith((_event, context, { collectionId }) => {
    const id = String(collectionId);
    findStacCollection(context, id);
    return { body: render(`${context.index.settings.baseUrl}${route.fillPath({ collectionId: id })}`, id), type: OGC_TYPES.schema };
  });
  const handlers: Record<StacRouteId, RouteHandler> = {
    getStacLandingPage: answerWith((_event, context) => cached(landingPages, context.index, STAC_API_TYPES.json, () => renderStacLandingPage(context))),
    getStacOpenApi: answerWith((_event, context) => cached(openApiDocuments, context.index, STAC_API_TYPES.openapi, () => createOpenApiDocument({
      routes: STAC_API_ROUTES, tags: STAC_API_TAGS, info: STAC_API_INFO, serverUrl: context.index.settings.baseUrl,
    }))),
    getStacConformance: answerWith(() => ({ body: { conformsTo: STAC_API_CONFORMANCE }, type: STAC_API_TYPES.json })),
    getStacCollections: answerWith(async (event, context) => {
      const request = parseQuery(STAC_ROUTES.getStacCollections, event) as StacCollectionsRequest;
      const filter = readStacFilter(request, STAC_COLLECTION_QUERYABLES);
      const hits = filter && await testFilterGeometries(context, filter);
      return { body: renderStacCollectionsPage(context, request, filter && { filter, hits: hits! }), type: STAC_API_TYPES.json };
    }),
    getStacCollectionSearchQueryables: answerWith((_event, context) => ({
      body: renderStacQueryables(stacApiUrl(context.index.settings.baseUrl, STAC_ROUTES.getStacCollectionSearchQueryables), 'Queryables of Collection search', STAC_COLLECTION_QUERYABLES), type: OGC_TYPES.schema,
    })),
    getStacCollectionSearchSortables: answerWith((_event, context) => ({
      body: renderStacSortables(stacApiUrl(context.index.settings.baseUrl, STAC_ROUTES.getStacCollectionSearchSortables), 'Sortables of Collection search', STAC_COLLECTION_SORT_FIELDS, STAC_COLLECTION_QUERYABLES), type: OGC_TYPES.schema,
    })),
    getStacCollection: answerWith((_event, context, { collectionId }) => ({ body: renderStacApiCollection(context, String(collectionId)), type: STAC_API_TYPES.json })),
    getStacQueryables: answerWith((_event, context) => ({ body: renderStacQueryables(stacApiUrl(context.index.settings.baseUrl, STAC_ROUTES.getStacQueryables), 'Queryables of item search'), type: OGC_TYPES.schema })),
    getStacSortables: answerWith((_event, context) => ({ body: renderStacSortables(stacApiUrl(context.index.settings.baseUrl, STAC_ROUTES.getStacSortables), 'Sortables of item search', STAC_SORTABLES), type: OGC_TYPES.schema })),
    getStacCollectionQueryables: ofCollection(STAC_ROUTES.getStacCollectionQueryables, (url, id) => renderStacQueryables(url, `Queryables of the items of ${id}`)),
    getStacCollectionSortables: ofCollection(STAC_ROUTES.getStacCollectionSortables, (url, id) => renderStacSortables(url, `Sortables of the items of ${id}`, STAC_SORTABLES)),
    getStacItem: answerWith((_event, context, { collectionId, itemId }) => ({ body: renderStacApiItem(context, String(collectionId), String(itemId)), type: STAC_API_TYPES.geojson })),
    getStacItems: answerWith((event, context, { collectionId }) => {
      const route = STAC_ROUTES.getStacItems;
      const { baseUrl } = context.index.settings;
      const path = { collectionId: String(collectionId) };
      const url = (query: object) => withQuery(`${baseUrl}${route.fillPath(path)}`, route.encodeQuery(query));
      const values = parseQuery(route, event);
      return search(context, values, { collectionId: path.collectionId, links: pageLinks(url, values, `${baseUrl}${STAC_ROUTES.getStacCollection.fillPath(path)}`) });
    }),
    getStacSearch: answerWith((event, context) => {
      const route = STAC_ROUTES.getStacSearch;
      const values = parseQuery(route, event);
      const url = (query: object) => withQuery(`${context.index.settings.baseUrl}${route.fillPath({})}`, route.encodeQuery(query));
      return search(context, values, { links: pageLinks(url, values) });
    }),
    postStacSearch: answerWith(async (event, context) => {
      const parsed = safeParseWithFriendlyErrors(StacSearchBodyIntakeSchema, await readJsonBody(event.req, MAX_STAC_BODY_BYTES, (why, detail) => why === 'too_large'
        ? new StacApiFailure(413, `The body is larger than ${MAX_STAC_BODY_BYTES} bytes; send a simpler intersects geometry, or a bbox.`)
        : why === 'too_deep'
          ? new StacApiFailure(400, `The body ${detail}; a search body needs 8 at most.`)
          : new StacApiFailure(400, 'The body is not JSON; send the search as a JSON object with Content-Type: application/json.')), { source: 'request body' });
      if (!parsed.ok) throw new StacApiFailure(400, `The search body is not valid: ${parsed.issues.slice(0, 3).map((issue) => `${issue.path}: ${issue.message}`).join('; ')}.`);
      const request = searchRequestFromBody(parsed.data);
      if (!request.ok) throw new StacApiFailure(400, `${request.detail}.`);
      const self = stacApiUrl(context.index.settings.baseUrl, STAC_ROUTES.postStacSearch);
      const next = (token: string) => ({ rel: 'next', href: self, type: STAC_API_TYPES.geojson, method: 'POST', body: { token }, merge: true });
      return search(context, request.value, { links: { self, next } });
    }),
  };

  mountRouteTable(app, {
    routes: STAC_ROUTES,
    handlers,
    invalidPath: (path, event) => {
      throw new StacApiFailure(404, `Nothing is at ${event.url.pathname.slice(0, 200)}: ${path.detail}.`);
    },
    methodNotAllowed: (methods, event) => {
      throw new StacApiFailure(405, `${event.req.method} is not allowed on ${event.url.pathname}; it accepts ${methods.join(', ')}.`, { allow: [...methods, 'OPTIONS'].join(', ') });
    },
    notFound: (event) => {
      throw new StacApiFailure(404, `Nothing is at ${event.url.pathname.slice(0, 200)}; the landing page ${stacApiUrl(snapshot().context.index.settings.baseUrl)} links everything this API serves.`);
    },
  }, mapOgcError('stac'));
}

const warming = new WeakMap<CatalogIndex, Promise<void>>();

/** Builds a catalog's STAC search indexes in slices, once; resolves when they are there. */
function warmIndexes(index: CatalogIndex): Promise<void> {
  let warmed = warming.get(index);
  if (!warmed) {
    warmed = runInSlices(warmStacSearchSlices(index)).catch((error: unknown) => {
      console.error('could not build the STAC search index ahead of the first search:', error);
    });
    warming.set(index, warmed);
  }
  return warmed;
}

/**
 * Runs a search and renders its page. An `intersects` geometry is first checked and tested against every footprint
 * by GEOS on a worker thread; the search then reads its verdicts.
 */
async function search(context: RenderContext, request: StacSearchRequest, options: { collectionId?: string; links: SearchPageLinks }): Promise<Answer> {
  const filter = readStacFilter(request);
  const index = stacSearchIndex(context.index);
  const test = filter && createStacFilterTest(index, filter, await testFilterGeometries(context, filter));
  const searchOptions = { ...options, ...(test ? { filter: test } : {}) };
  if (!request.intersects) return { body: renderStacSearchPage(context, request, searchOptions), type: STAC_API_TYPES.geojson };
  const { hits, digest } = await testGeometry(request.intersects, index.boxes, '"intersects"');
  return { body: renderStacSearchPage(context, request, { ...searchOptions, footprint: { meets: (position) => hits[position] === 1, digest } }), type: STAC_API_TYPES.geojson };
}

/** GEOS's verdicts on every footprint for each geometry literal of a filter; none for a BBOX, tested in memory. */
async function testFilterGeometries(context: RenderContext, filter: StacFilter): Promise<(Uint8Array | undefined)[]> {
  const { boxes } = stacSearchIndex(context.index);
  const tested = await Promise.all(filter.literals.map((literal) => ('bbox' in literal ? undefined : testGeometry(literal, boxes, '"filter" holds a geometry that'))));
  return tested.map((verdicts) => verdicts?.hits);
}

/**
 * Tests a geometry against every footprint with GEOS on its worker thread, or fails with the reason (`what` names
 * where the geometry came from).
 */
async function testGeometry(geometry: object, boxes: Float64Array, what: string): Promise<{ hits: Uint8Array; digest: string }> {
  const { testFootprints } = await import('../runtime/geometry-intersects.ts');
  // Reading the body (JSON.parse of up to ~800 KB) and copying the geometry to the thread (structured clone, 9–19 ms
  // for 20,000 positions) are each short; run back to back they held the event loop 30–50 ms. A turn between them.
  await new Promise((resolve) => setImmediate(resolve));
  const tested = await testFootprints(geometry as Parameters<typeof testFootprints>[0], boxes);
  if (!tested.ok) throw new StacApiFailure(tested.status, `${what} ${tested.detail}.`, tested.status === 503 ? { 'retry-after': '1' } : {});
  return { hits: tested.hits, digest: tested.digest };
}

/** Links of a GET page: self is the canonical URL of this page, next the same search with the next token. */
function pageLinks(url: (query: object) => string, values: StacSearchRequest, collection?: string): SearchPageLinks {
  return {
    self: url(values),
    next: (token) => ({ rel: 'next', href: url({ ...values, token }), type: STAC_API_TYPES.geojson }),
    ...(collection ? { collection } : {}),
  };
}

/** The canonical query values of a GET route, which are a search request's fields; a 400 naming the parameter at fault. */
function parseQuery(route: Pick<Route, 'parseQuery'>, event: H3Event): StacSearchRequest {
  const parsed = route.parseQuery(event.url.searchParams);
  if (!parsed.ok) throw new StacApiFailure(400, `${parsed.detail}.`);
  return parsed.value as StacSearchRequest;
}

const landingPages = new WeakMap<CatalogIndex, Uint8Array>();
const openApiDocuments = new WeakMap<CatalogIndex, Uint8Array>();

/** Documents that depend on the catalog only are rendered once per snapshot. */
function cached(cache: WeakMap<CatalogIndex, Uint8Array>, index: CatalogIndex, type: string, render: () => unknown): Answer {
  let bytes = cache.get(index);
  if (!bytes) {
    bytes = serializeJson(render());
    cache.set(index, bytes);
  }
  return { bytes, type };
}
