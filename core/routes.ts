import { DEFAULT_LIST_LIMIT, MAX_QUERY_KEY_LENGTH, QUERY_DIR } from './constants.ts';
import { parseTagFilters, serializeTagFilters, type TagFilters } from './tag-filters.ts';
import { tokenize } from './text.ts';

/** Canonical parameters of the collection dataset list. Defaults are absent. */
export interface ListingParams {
  search?: string;
  tag_filters?: TagFilters;
  limit?: number;
  offset?: number;
  include?: 'files';
  include_urls?: true;
  omit?: 'description';
}

/** Canonical parameters of the schema route. Paging is on when `column_limit` is present. */
export interface SchemaParams {
  version?: string;
  column_offset?: number;
  column_limit?: number;
}

/** A catalog GET route with its canonical parameters. */
export type CatalogRoute =
  | { route: 'root' }
  | { route: 'openapi' }
  | { route: 'health' }
  | { route: 'collections'; include?: 'datasets' | 'datasets,files' }
  | { route: 'collection'; collection: string; params: ListingParams }
  | { route: 'tags'; collection: string; tag_key?: string }
  | { route: 'dataset'; collection: string; dataset: string; include_urls?: true }
  | { route: 'file'; collection: string; dataset: string; file: string }
  | { route: 'schema'; collection: string; dataset: string; file: string; params: SchemaParams }
  | { route: 'datasets' }
  | { route: 'dataset-by-id'; id: number }
  | { route: 'stats' };

/** What a URL under /api resolves to: a route, or the Problem to answer. */
export type RouteResolution =
  | { ok: true; route: CatalogRoute }
  | { ok: false; status: 400 | 404; detail: string };

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Resolves a request under /api to a catalog route with canonical parameters, or to a 400/404 Problem.
 * Pure: it knows the URL grammar, not the catalog, so a route may still name a collection that does not exist.
 * @example resolveApiUrl('/api/collections/natural-earth', new URLSearchParams('limit=50&query=Land'))
 */
export function resolveApiUrl(pathname: string, query: URLSearchParams): RouteResolution {
  const segments = pathname.replace(/\/+$/, '').split('/').slice(1);
  if (segments[0] !== 'api') return notFound(pathname);
  const parts = segments.slice(1).map(safeDecode);
  if (parts.some((part) => part === undefined || part === '')) return notFound(pathname);
  const [a, b, c, d, e, f, g] = parts as string[];
  const params = readParams(query);
  if (!params.ok) return params;
  const known = params.values;
  const only = (names: string[], build: () => RouteResolution): RouteResolution => {
    const unknown = [...known.keys()].filter((name) => !names.includes(name));
    if (unknown.length > 0) return badRequest(`unknown query parameter ${unknown.map((name) => `"${name}"`).join(', ')}; this route accepts ${names.length ? names.join(', ') : 'none'}`);
    return build();
  };
  const ok = (route: CatalogRoute): RouteResolution => ({ ok: true, route });

  switch (parts.length) {
    case 0:
      return only([], () => ok({ route: 'root' }));
    case 1:
      if (a === 'openapi') return only([], () => ok({ route: 'openapi' }));
      if (a === 'health') return only([], () => ok({ route: 'health' }));
      if (a === 'collections') return only(['include'], () => readCollectionsInclude(known.get('include')));
      if (a === 'datasets') return only([], () => ok({ route: 'datasets' }));
      break;
    case 2:
      if (a === 'collections' && SLUG.test(b!)) return only(LISTING_PARAMS, () => readListingParams(b!, known));
      if (a === 'datasets' && b === 'stats') return only([], () => ok({ route: 'stats' }));
      if (a === 'datasets') return only([], () => readDatasetId(b!));
      break;
    case 4:
      if (a === 'collections' && c === 'datasets' && d === 'tags' && SLUG.test(b!)) {
        return only(['tag_key'], () => ok({ route: 'tags', collection: b!, ...optional('tag_key', known.get('tag_key')?.trim() || undefined) }));
      }
      if (a === 'collections' && c === 'datasets' && SLUG.test(b!) && SLUG.test(d!)) {
        return only(['include_urls'], () => {
          const includeUrls = readBoolean('include_urls', known.get('include_urls'));
          if (typeof includeUrls === 'object') return includeUrls;
          return ok({ route: 'dataset', collection: b!, dataset: d!, ...(includeUrls ? { include_urls: true as const } : {}) });
        });
      }
      break;
    case 6:
    case 7:
      if (a === 'collections' && c === 'datasets' && e === 'files' && SLUG.test(b!) && SLUG.test(d!) && SLUG.test(f!)) {
        if (g === undefined) return only([], () => ok({ route: 'file', collection: b!, dataset: d!, file: f! }));
        if (g === 'schema') return only(['version', 'column_offset', 'column_limit'], () => readSchemaParams(b!, d!, f!, known));
      }
      break;
  }
  return notFound(pathname);
}

const LISTING_PARAMS = ['search', 'query', 'tag_filters', 'limit', 'offset', 'include', 'include_urls', 'omit'];

function readListingParams(collection: string, known: Map<string, string>): RouteResolution {
  const search = known.get('search');
  const alias = known.get('query');
  if (search !== undefined && alias !== undefined && search !== alias) {
    return badRequest('"query" is an alias of "search"; give one of them, or both with the same value');
  }
  const params: ListingParams = {};
  const tokens = [...new Set(tokenize(search ?? alias ?? ''))].sort();
  if (tokens.length > 0) params.search = tokens.join(' ');
  const tagText = known.get('tag_filters');
  if (tagText !== undefined && tagText.trim() !== '') {
    const filters = parseTagFilters(tagText);
    if (!filters.ok) return badRequest(filters.detail);
    params.tag_filters = filters.filters;
  }
  const limit = readInteger('limit', known.get('limit'), 1);
  if (typeof limit === 'object') return limit;
  if (limit !== undefined && limit !== DEFAULT_LIST_LIMIT) params.limit = limit;
  const offset = readInteger('offset', nullAsAbsent(known.get('offset')), 0);
  if (typeof offset === 'object') return offset;
  if (offset) params.offset = offset;
  const include = known.get('include');
  if (include !== undefined && include !== '' && include !== 'files') return badRequest('"include" accepts only "files"');
  if (include === 'files') params.include = 'files';
  const includeUrls = readBoolean('include_urls', known.get('include_urls'));
  if (typeof includeUrls === 'object') return includeUrls;
  if (includeUrls) params.include_urls = true;
  const omit = known.get('omit');
  if (omit !== undefined && omit !== '') {
    const names = new Set(omit.split(',').map((name) => name.trim()).filter(Boolean));
    const unknown = [...names].filter((name) => name !== 'description');
    if (unknown.length > 0) return badRequest(`"omit" accepts only "description"; got ${unknown.map((name) => `"${name}"`).join(', ')}`);
    if (names.size > 0) params.omit = 'description';
  }
  return { ok: true, route: { route: 'collection', collection, params } };
}

function readSchemaParams(collection: string, dataset: string, file: string, known: Map<string, string>): RouteResolution {
  const params: SchemaParams = {};
  const version = known.get('version')?.trim();
  if (version) params.version = version;
  const offset = readInteger('column_offset', nullAsAbsent(known.get('column_offset')), 0);
  if (typeof offset === 'object') return offset;
  const limit = readInteger('column_limit', nullAsAbsent(known.get('column_limit')), 1, 50);
  if (typeof limit === 'object') return limit;
  if (offset !== undefined || limit !== undefined) {
    params.column_offset = offset ?? 0;
    params.column_limit = limit ?? 25;
  }
  return { ok: true, route: { route: 'schema', collection, dataset, file, params } };
}

function readCollectionsInclude(value: string | undefined): RouteResolution {
  if (value === undefined || value === '') return { ok: true, route: { route: 'collections' } };
  const names = new Set(value.split(',').map((name) => name.trim()));
  if (names.has('datasets') && [...names].every((name) => name === 'datasets' || name === 'files')) {
    return { ok: true, route: { route: 'collections', include: names.has('files') ? 'datasets,files' : 'datasets' } };
  }
  return badRequest('"include" accepts "datasets" or "datasets,files"');
}

function readDatasetId(text: string): RouteResolution {
  if (!/^\d{1,15}$/.test(text) || Number(text) === 0) return badRequest(`dataset id must be a positive integer, got "${text}"`);
  return { ok: true, route: { route: 'dataset-by-id', id: Number(text) } };
}

function readParams(query: URLSearchParams): { ok: true; values: Map<string, string> } | { ok: false; status: 400; detail: string } {
  const values = new Map<string, string>();
  for (const [name, value] of query) {
    if (values.has(name)) return badRequest(`query parameter "${name}" is given more than once`);
    values.set(name, value);
  }
  return { ok: true, values };
}

function readInteger(name: string, text: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined | { ok: false; status: 400; detail: string } {
  if (text === undefined) return undefined;
  const value = /^\d{1,15}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer of at least ${min}` : `an integer from ${min} to ${max}`;
    return badRequest(`"${name}" must be ${range}, got "${text}"`);
  }
  return value;
}

function readBoolean(name: string, text: string | undefined): boolean | { ok: false; status: 400; detail: string } {
  if (text === undefined || text === 'false') return false;
  if (text === 'true') return true;
  return badRequest(`"${name}" must be true or false, got "${text}"`);
}

function nullAsAbsent(text: string | undefined): string | undefined {
  return text === undefined || text === '' || text === 'null' ? undefined : text;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function badRequest(detail: string): { ok: false; status: 400; detail: string } {
  return { ok: false, status: 400, detail };
}

function notFound(pathname: string): { ok: false; status: 404; detail: string } {
  return { ok: false, status: 404, detail: `There is no route ${pathname.length > 200 ? `${pathname.slice(0, 200)}…` : pathname}. Start from /api or read /api/openapi.` };
}

/** The path of a route, without query, e.g. `/api/collections/natural-earth`. */
export function pathForRoute(route: CatalogRoute): string {
  switch (route.route) {
    case 'root': return '/api';
    case 'openapi': return '/api/openapi';
    case 'health': return '/api/health';
    case 'collections': return '/api/collections';
    case 'collection': return `/api/collections/${route.collection}`;
    case 'tags': return `/api/collections/${route.collection}/datasets/tags`;
    case 'dataset': return `/api/collections/${route.collection}/datasets/${route.dataset}`;
    case 'file': return `/api/collections/${route.collection}/datasets/${route.dataset}/files/${route.file}`;
    case 'schema': return `/api/collections/${route.collection}/datasets/${route.dataset}/files/${route.file}/schema`;
    case 'datasets': return '/api/datasets';
    case 'dataset-by-id': return `/api/datasets/${route.id}`;
    case 'stats': return '/api/datasets/stats';
  }
}

/** The canonical query string of a route: defaults dropped, names sorted, values normalised and encoded. */
export function queryForRoute(route: CatalogRoute): string {
  const pairs: [string, string][] = [];
  switch (route.route) {
    case 'collections':
      if (route.include) pairs.push(['include', route.include]);
      break;
    case 'collection': {
      const p = route.params;
      if (p.include) pairs.push(['include', p.include]);
      if (p.include_urls) pairs.push(['include_urls', 'true']);
      if (p.limit !== undefined) pairs.push(['limit', String(p.limit)]);
      if (p.offset) pairs.push(['offset', String(p.offset)]);
      if (p.omit) pairs.push(['omit', p.omit]);
      if (p.search) pairs.push(['search', p.search]);
      if (p.tag_filters) pairs.push(['tag_filters', serializeTagFilters(p.tag_filters)]);
      break;
    }
    case 'tags':
      if (route.tag_key) pairs.push(['tag_key', route.tag_key]);
      break;
    case 'dataset':
      if (route.include_urls) pairs.push(['include_urls', 'true']);
      break;
    case 'schema':
      if (route.params.column_limit !== undefined) pairs.push(['column_limit', String(route.params.column_limit)]);
      if (route.params.column_offset !== undefined) pairs.push(['column_offset', String(route.params.column_offset)]);
      if (route.params.version !== undefined) pairs.push(['version', route.params.version]);
      break;
  }
  return pairs.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&');
}

/** The canonical URL of a route under `baseUrl`; what `links` in documents point at. */
export function urlForRoute(baseUrl: string, route: CatalogRoute): string {
  const query = queryForRoute(route);
  return `${baseUrl}${pathForRoute(route)}${query ? `?${query}` : ''}`;
}

/**
 * The file of `dist/` that holds a route's document, or undefined when its canonical query is too long to be a
 * file name (such answers are always computed). Clean URLs map to `index.json`; parameter variants live in `_query/`.
 * @example fileKeyForRoute({ route: 'collection', collection: 'ne', params: { offset: 50 } }) // 'api/collections/ne/_query/offset=50.json'
 */
export function fileKeyForRoute(route: CatalogRoute): string | undefined {
  const directory = pathForRoute(route).slice(1);
  const query = queryForRoute(route);
  if (query === '') return `${directory}/index.json`;
  if (query.length > MAX_QUERY_KEY_LENGTH) return undefined;
  return `${directory}/${QUERY_DIR}/${query}.json`;
}
