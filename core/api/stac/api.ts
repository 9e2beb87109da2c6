import { findFile } from '../../catalog-index.ts';
import type { RenderContext } from '../catalog/resources.ts';
import { SITE_PATHS } from '../../site/paths.ts';
import type { StacCollection, StacItem, StacLink } from '../../../schemas/stac.ts';
import type { StacCollections, StacItemCollection, StacLandingPage } from '../../../schemas/stac-api.ts';
import { DEFAULT_COLLECTION_LIMIT, DEFAULT_ITEM_LIMIT, type StacCollectionsRequest, type StacSearchRequest } from './params.ts';
import { searchStacCollections, type StacCollectionSearch } from './collection-search.ts';
import { projectFields } from './fields.ts';
import { STAC_API_TYPES, STAC_ROUTES, STAC_SEARCH_REL } from './routes.ts';
import { StacApiFailure } from './api-errors.ts';
import { OGC_RELS, OGC_TYPES } from '../ogc/routes.ts';
import { fileVersions, renderStacCollection, renderStacItem, renderStacRoot, STAC_VERSION } from './documents.ts';
import { encodePageToken, hashText, readPageToken } from './page-token.ts';
import { searchStacItems, stacSearchIndex, type FootprintFilter } from './search.ts';

/**
 * The documents of the STAC API at /stac/api, rendered from the catalog index with the same renderers as the
 * static STAC tree (style 'api'). Pure; a request that names nothing or cannot be read throws a StacApiFailure.
 */

/**
 * The conformance classes: STAC API core, collections, features, item search with sort, free text and filter, OGC
 * Features core and GeoJSON, and the CQL2 classes the in-memory filter answers (spatial: S_INTERSECTS on footprints).
 */
export const STAC_API_CONFORMANCE = [
  'https://api.stacspec.org/v1.0.0/core',
  'https://api.stacspec.org/v1.0.0/collections',
  'https://api.stacspec.org/v1.0.0/ogcapi-features',
  'https://api.stacspec.org/v1.0.0/item-search',
  'https://api.stacspec.org/v1.0.0/item-search#sort',
  'https://api.stacspec.org/v1.0.0/ogcapi-features#sort',
  'https://api.stacspec.org/v1.1.0/item-search#sortables',
  'https://api.stacspec.org/v1.1.0/collection-search#sortables',
  'http://www.opengis.net/spec/ogcapi-features-5/1.0/conf/sortables',
  'https://api.stacspec.org/v1.0.0-rc.1/item-search#free-text',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  'https://api.stacspec.org/v1.0.0/item-search#filter',
  'https://api.stacspec.org/v1.0.0/item-search#fields',
  'https://api.stacspec.org/v1.0.0/ogcapi-features#fields',
  ...['', '#free-text', '#filter', '#sort'].map((part) => `https://api.stacspec.org/v1.0.0-rc.1/collection-search${part}`),
  'http://www.opengis.net/spec/ogcapi-common-2/1.0/conf/simple-query',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables',
  ...['cql2-text', 'cql2-json', 'basic-cql2', 'advanced-comparison-operators', 'case-insensitive-comparison', 'accent-insensitive-comparison',
    'basic-spatial-functions', 'basic-spatial-functions-plus', 'temporal-functions', 'property-property', 'arithmetic']
    .map((name) => `http://www.opengis.net/spec/cql2/1.0/conf/${name}`),
];

/** The absolute URL of a STAC API route without path parameters: the landing page by default. */
export function stacApiUrl(baseUrl: string, route: { path: string } = STAC_ROUTES.getStacLandingPage): string {
  return `${baseUrl}${route.path}`;
}

/** The landing page: the root Catalog's words, the conformance classes, and links to everything the API serves. */
export function renderStacLandingPage(context: RenderContext): StacLandingPage {
  const { baseUrl } = context.index.settings;
  const root = renderStacRoot(context);
  const json = STAC_API_TYPES.json;
  const url = (route: { path: string }) => stacApiUrl(baseUrl, route);
  const links: StacLink[] = [
    { rel: 'self', href: url(STAC_ROUTES.getStacLandingPage), type: json },
    { rel: 'root', href: url(STAC_ROUTES.getStacLandingPage), type: json },
    { rel: 'service-desc', href: url(STAC_ROUTES.getStacOpenApi), type: STAC_API_TYPES.openapi, title: 'The OpenAPI document of this API' },
    { rel: 'service-doc', href: `${baseUrl}${SITE_PATHS.developers}`, type: 'text/html', title: 'The API and agents' },
    { rel: 'conformance', href: url(STAC_ROUTES.getStacConformance), type: json, title: 'Conformance classes' },
    { rel: 'data', href: url(STAC_ROUTES.getStacCollections), type: json, title: 'Collections' },
    { rel: OGC_RELS.queryables, href: url(STAC_ROUTES.getStacQueryables), type: OGC_TYPES.schema, title: 'Queryables of item search' },
    { rel: OGC_RELS.sortables, href: url(STAC_ROUTES.getStacSortables), type: OGC_TYPES.schema, title: 'Sortables of item search' },
    ...[STAC_ROUTES.getStacSearch, STAC_ROUTES.postStacSearch].map((route) => ({ rel: STAC_SEARCH_REL, href: url(route), type: STAC_API_TYPES.geojson, method: route.method, title: 'Item search' })),
    ...[...stacSearchIndex(context.index).collections.entries()].map(([collectionId, { dataset }]) => ({
      rel: 'child', href: `${baseUrl}${STAC_ROUTES.getStacCollection.fillPath({ collectionId })}`, type: json, title: dataset.name,
    })),
  ];
  return { type: 'Catalog', stac_version: STAC_VERSION, id: root.id, ...(root.title ? { title: root.title } : {}), description: root.description, conformsTo: STAC_API_CONFORMANCE, links };
}

/**
 * One page of the Collections: in catalog order, or those a Collection Search matches (`filter`: the request's read
 * filter and GEOS's verdicts for its geometry literals, as for item search).
 */
export function renderStacCollectionsPage(context: RenderContext, request: StacCollectionsRequest, filter?: StacCollectionSearch['filter']): StacCollections {
  const { baseUrl } = context.index.settings;
  const search = stacSearchIndex(context.index);
  const { limit: _limit, token: _token, ...criteria } = request;
  const searched = Object.keys(criteria).length > 0;
  const { filter: _filterText, ...unfiltered } = request;
  const ids = searched ? searchStacCollections(context.index, { ...unfiltered, ...(filter ? { filter } : {}) }) : undefined;
  const all = ids ? ids.map((id) => search.collections.get(id)!) : [...search.collections.values()];
  const limit = request.limit ?? DEFAULT_COLLECTION_LIMIT;
  const digest = hashText(searched ? JSON.stringify(['collections', criteria]) : 'collections');
  const offset = readOffset(request.token, digest, search.fingerprint);
  const page = all.slice(offset, offset + limit).map(({ collection, dataset }) => renderStacCollection(context, collection, dataset, 'api'));
  const pageUrl = (token?: string) => withQuery(stacApiUrl(baseUrl, STAC_ROUTES.getStacCollections), STAC_ROUTES.getStacCollections.encodeQuery({ ...request, token } as Parameters<typeof STAC_ROUTES.getStacCollections.encodeQuery>[0]));
  const links: StacLink[] = [
    { rel: 'self', href: pageUrl(request.token), type: STAC_API_TYPES.json },
    { rel: 'root', href: stacApiUrl(baseUrl), type: STAC_API_TYPES.json },
    { rel: OGC_RELS.queryables, href: stacApiUrl(baseUrl, STAC_ROUTES.getStacCollectionSearchQueryables), type: OGC_TYPES.schema, title: 'Queryables of Collection search' },
    { rel: OGC_RELS.sortables, href: stacApiUrl(baseUrl, STAC_ROUTES.getStacCollectionSearchSortables), type: OGC_TYPES.schema, title: 'Sortables of Collection search' },
  ];
  if (offset + limit < all.length) links.push({ rel: 'next', href: pageUrl(encodePageToken({ offset: offset + limit, search: digest, catalog: search.fingerprint })), type: STAC_API_TYPES.json });
  return { collections: page, links, numberMatched: all.length, numberReturned: page.length };
}

/** The Collection with an id, or a 404 that says where the ids are listed. */
export function renderStacApiCollection(context: RenderContext, collectionId: string): StacCollection {
  const { collection, dataset } = findStacCollection(context, collectionId);
  return renderStacCollection(context, collection, dataset, 'api');
}

/** The Item `{file}` (latest version) or `{file}@{version}` of a Collection, or a 404 that says what is missing. */
export function renderStacApiItem(context: RenderContext, collectionId: string, itemId: string): StacItem {
  const { collection, dataset } = findStacCollection(context, collectionId);
  const at = itemId.indexOf('@');
  const slug = at < 0 ? itemId : itemId.slice(0, at);
  const file = findFile(dataset, slug);
  if (!file) throw new StacApiFailure(404, `Collection "${collectionId}" has no Item "${slug.slice(0, 80)}"; its items link lists them.`);
  if (at < 0) return renderStacItem(context, { collection, dataset, file }, undefined, 'api');
  const version = itemId.slice(at + 1);
  const versions = fileVersions(context.index, file);
  if (!versions.includes(version)) throw new StacApiFailure(404, `Item "${slug}" has no version "${version.slice(0, 80)}"; it has ${versions.join(', ')}.`);
  return renderStacItem(context, { collection, dataset, file }, version, 'api');
}

/** How the links of a page of search results are written: GET links carry the search in the URL, POST links merge a token into the body. */
export interface SearchPageLinks {
  self: string;
  /** The next link for a token. */
  next: (token: string) => StacLink;
  /** The Collection of a per-Collection listing. */
  collection?: string;
}

/**
 * Runs a search and renders one page: the matching Items from the token's offset, the counts, and a next link
 * while more remain. `collectionId` scopes it to one Collection (a 404 when there is none); `footprint` holds the
 * verdicts of `intersects`, which the caller has GEOS decide (GEOS lives outside core/, on a worker thread).
 */
export function renderStacSearchPage(
  context: RenderContext,
  request: StacSearchRequest,
  options: { collectionId?: string; footprint?: FootprintFilter; filter?: (position: number) => boolean; links: SearchPageLinks },
): StacItemCollection {
  const search = stacSearchIndex(context.index);
  if (request.intersects && !options.footprint) throw new Error('an intersects search needs the footprint filter its geometry was tested into');
  if (request.filter !== undefined && !options.filter) throw new Error('a filtered search needs its filter compiled (core/api/stac/filter.ts)');
  if (options.collectionId !== undefined) findStacCollection(context, options.collectionId);
  const digest = searchDigest(request, options.collectionId, options.footprint);
  const offset = readOffset(request.token, digest, search.fingerprint);
  const limit = request.limit ?? DEFAULT_ITEM_LIMIT;
  const collections = options.collectionId !== undefined ? [options.collectionId] : request.collections;
  const matched = searchStacItems(context.index, {
    ...(collections ? { collections } : {}),
    ...(request.ids ? { ids: request.ids } : {}),
    ...(request.bbox ? { bbox: request.bbox } : {}),
    ...(options.footprint ? { intersects: options.footprint } : {}),
    ...(request.datetime ? { datetime: request.datetime } : {}),
    ...(request.q ? { q: request.q } : {}),
    ...(request.sortby ? { sortby: request.sortby } : {}),
    ...(options.filter ? { test: options.filter } : {}),
  });
  const items = Array.from(matched.subarray(offset, offset + limit), (position) => renderStacItem(context, search.entries[position]!, undefined, 'api'));
  const features = request.fields ? items.map((item) => projectFields(item as unknown as Record<string, unknown>, request.fields!) as unknown as StacItem) : items;
  const { baseUrl } = context.index.settings;
  const links: StacLink[] = [
    { rel: 'self', href: options.links.self, type: STAC_API_TYPES.geojson },
    { rel: 'root', href: stacApiUrl(baseUrl), type: STAC_API_TYPES.json },
    ...(options.links.collection ? [{ rel: 'collection', href: options.links.collection, type: STAC_API_TYPES.json }] : []),
  ];
  if (offset + limit < matched.length) links.push(options.links.next(encodePageToken({ offset: offset + limit, search: digest, catalog: search.fingerprint })));
  return { type: 'FeatureCollection', features, links, numberMatched: matched.length, numberReturned: features.length };
}

/**
 * The digest of a search a token is bound to: every filter and the order, but not the limit (a client may change
 * its page size between pages) and not the token. GET and POST digests agree for the same search. An `intersects`
 * geometry is there as the digest its footprint filter brings.
 */
function searchDigest(request: StacSearchRequest, collectionId: string | undefined, footprint: FootprintFilter | undefined): string {
  const { limit: _limit, token: _token, ...filters } = request;
  const sorted = (list?: string[]) => (list ? [...list].sort() : null);
  return hashText(JSON.stringify([
    collectionId ?? null, filters.bbox ?? null, filters.intersects ? (footprint?.digest ?? null) : null, filters.datetime ? [filters.datetime.start, filters.datetime.end] : null,
    sorted(filters.ids), sorted(filters.collections), filters.q ?? null, filters.sortby ?? null,
    filters.filter === undefined ? null : [filters['filter-lang'] ?? 'cql2-text', filters.filter],
  ]));
}

function readOffset(token: string | undefined, digest: string, fingerprint: string): number {
  if (token === undefined) return 0;
  const read = readPageToken(token, digest, fingerprint);
  if (!read.ok) throw new StacApiFailure(400, `"token" ${read.detail}.`);
  return read.offset;
}

/** The search index's range of a Collection, or a 404 that says where the ids are listed. */
export function findStacCollection(context: RenderContext, collectionId: string) {
  const found = stacSearchIndex(context.index).collections.get(collectionId);
  if (!found) throw new StacApiFailure(404, `There is no Collection "${collectionId.slice(0, 120)}"; GET ${stacApiUrl(context.index.settings.baseUrl, STAC_ROUTES.getStacCollections)} lists them.`);
  return found;
}

/** A URL with a query string, when there is one. */
export function withQuery(url: string, query: string): string {
  return query ? `${url}?${query}` : url;
}
