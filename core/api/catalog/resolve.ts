import { MAX_QUERY_KEY_LENGTH, QUERY_DIR } from '../../constants.ts';
import type { PathValues, QueryValues, Route } from '../route-table.ts';
import { CATALOG_ROUTES } from './routes.ts';

type Table = typeof CATALOG_ROUTES;
/** Name of a catalog GET route: `root`, `collection`, `dataset-by-id`, … */
export type CatalogRouteName = keyof Table;
type PathOf<N extends CatalogRouteName> = Table[N] extends Route<infer P, infer _Q, infer _H> ? PathValues<P> : never;
type QueryOf<N extends CatalogRouteName> = Table[N] extends Route<infer _P, infer Q, infer _H> ? QueryValues<Q> : never;

/**
 * A catalog GET route: its name, its path parameters (named as in the path template) and its canonical query
 * parameters. Types come from the route table.
 * @example { route: 'dataset', collectionSlug: 'natural-earth', datasetSlug: 'land', params: { include_urls: true } }
 */
export type CatalogRoute = { [N in CatalogRouteName]: { route: N; params?: QueryOf<N> } & PathOf<N> }[CatalogRouteName];
/** Canonical parameters of the collection dataset list. */
export type ListingParams = QueryOf<'collection'>;
/** Canonical parameters of the schema route; paging is on when `column_limit` is present. */
export type SchemaParams = QueryOf<'schema'>;

/** What a URL under /api resolves to: a route, or the Problem to answer. */
export type RouteResolution =
  | { ok: true; route: CatalogRoute }
  | { ok: false; status: 400 | 404; detail: string };

/** Route templates as segments, most specific first: a literal segment wins over a placeholder at the same place. */
const TEMPLATES = Object.entries(CATALOG_ROUTES)
  .map(([name, route]) => ({ name: name as CatalogRouteName, route: route as Route, segments: route.path.split('/').slice(1) }))
  .sort((a, b) => specificity(b.segments).localeCompare(specificity(a.segments)));

function specificity(segments: string[]): string {
  return segments.map((segment) => (segment.startsWith('{') ? '0' : '1')).join('');
}

/**
 * Resolves a request under /api to a catalog route with canonical parameters, or to a 400/404 Problem.
 * Pure: it knows the URL grammar of the route table, not the catalog, so a route may still name a collection that
 * does not exist.
 * @example resolveApiUrl('/api/collections/natural-earth', new URLSearchParams('limit=50&query=Land'))
 */
export function resolveApiUrl(pathname: string, query: URLSearchParams): RouteResolution {
  const raw = pathname.replace(/\/+$/, '').split('/').slice(1);
  const segments = raw.map((segment, index) => (index === 0 ? segment : safeDecode(segment)));
  if (segments[0] !== 'api' || segments.some((segment) => segment === undefined || segment === '')) return notFound(pathname);
  for (const { name, route, segments: template } of TEMPLATES) {
    if (template.length !== segments.length) continue;
    const values: Record<string, string> = {};
    const matches = template.every((part, index) => {
      if (!part.startsWith('{')) return part === segments[index];
      values[part.slice(1, -1)] = segments[index]!;
      return true;
    });
    if (!matches) continue;
    const path = route.parsePath(values);
    if (!path.ok) return route.invalidPathStatus === 400 ? { ok: false, status: 400, detail: path.detail } : notFound(pathname);
    const params = route.parseQuery(query);
    if (!params.ok) return { ok: false, status: 400, detail: params.detail };
    const hasQuery = Object.keys(route.query ?? {}).length > 0;
    return { ok: true, route: { route: name, ...path.value, ...(hasQuery ? { params: params.value } : {}) } as CatalogRoute };
  }
  return notFound(pathname);
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function notFound(pathname: string): { ok: false; status: 404; detail: string } {
  const shown = pathname.length > 200 ? `${pathname.slice(0, 200)}…` : pathname;
  return { ok: false, status: 404, detail: `There is no route ${shown}. Start from /api or read /api/openapi.` };
}

/** The path of a route, without query, e.g. `/api/collections/natural-earth`. */
export function pathForRoute(route: CatalogRoute): string {
  return (CATALOG_ROUTES[route.route] as Route).fillPath(route as never);
}

/** The canonical query string of a route: defaults dropped, names sorted, values normalised and encoded. */
export function queryForRoute(route: CatalogRoute): string {
  return (CATALOG_ROUTES[route.route] as Route).encodeQuery((route.params ?? {}) as never);
}

/** The canonical URL of a route under `baseUrl`; what `links` in documents point at. */
export function urlForRoute(baseUrl: string, route: CatalogRoute): string {
  const query = queryForRoute(route);
  return `${baseUrl}${pathForRoute(route)}${query ? `?${query}` : ''}`;
}

/**
 * The file of `dist/` that holds a route's document, or undefined when its canonical query is too long to be a
 * file name (such answers are always computed). Clean URLs map to `index.json`; parameter variants live in `_query/`.
 * @example fileKeyForRoute({ route: 'collection', slug: 'ne', params: { offset: 50 } }) // 'api/collections/ne/_query/offset=50.json'
 */
export function fileKeyForRoute(route: CatalogRoute): string | undefined {
  const directory = pathForRoute(route).slice(1);
  const query = queryForRoute(route);
  if (query === '') return `${directory}/index.json`;
  if (query.length > MAX_QUERY_KEY_LENGTH) return undefined;
  return `${directory}/${QUERY_DIR}/${query}.json`;
}
