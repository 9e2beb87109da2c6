import fc from 'fast-check';
import { z } from 'zod';
import { parameterJsonSchema, type Route } from '../../core/api/route-table.ts';
import { requestLine, send, type FuzzRequest } from './fuzz-server.ts';
import { hostileText, jsonSchemaValue, mutatedToken, parameterText, sometimes, type ValuePools } from './fuzz-values.ts';

/** A GeoParquet source of the catalog, as a query names it, with its columns. */
export interface HarvestedSource {
  collection_id: number;
  dataset_id: number;
  file_id: number;
  file_source_id: number;
  columns: { name: string; type: string }[];
}

/** What the fuzzer knows of the running catalog: values by parameter name, path values by route, sources. */
export interface Harvest {
  pools: ValuePools;
  /** Path parameter values of links that lead to each route, by route id. */
  paths: Map<string, Record<string, string>[]>;
  /** Query strings of links that lead to each route, by route id. */
  queries: Map<string, string[]>;
  sources: HarvestedSource[];
}

type Json = Record<string, any>;

/** A route's path template as a pattern whose groups are its parameters, in order. */
function templatePattern(route: Route): { pattern: RegExp; names: string[]; literals: number } {
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
  const source = route.path.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('([^/]+)');
  return { pattern: new RegExp(`^${source}/?$`), names, literals: route.path.split('/').filter((part) => part && !part.includes('{')).length };
}

/**
 * Crawls the running server from every GET route without path parameters, following the links of its answers
 * (at most `perRoute` documents per route), and keeps what they name: path values per route, query values and
 * ETags by name, and the GeoParquet sources with their columns. So valid values come from the build itself, and
 * a route added later is reached as soon as a document links to it.
 */
export async function harvestCatalog(origin: string, baseUrl: string, routes: readonly Route[], perRoute = 12): Promise<Harvest> {
  const gets = routes.filter((route) => route.method === 'GET').map((route) => ({ route, ...templatePattern(route) })).sort((a, b) => b.literals - a.literals);
  const harvest: Harvest = { pools: new Map(), paths: new Map(), queries: new Map(), sources: [] };
  const columns = new Map<number, { name: string; type: string }[]>();
  const visits = new Map<string, number>();
  const seen = new Set<string>();
  const queue = gets.filter(({ names }) => names.length === 0).map(({ route }) => route.path);
  const remember = (name: string, value: string) => {
    const list = harvest.pools.get(name) ?? [];
    if (!list.includes(value) && list.length < 200) list.push(value);
    harvest.pools.set(name, list);
  };
  for (let target = queue.shift(); target !== undefined; target = queue.shift()) {
    const response = await send(origin, { method: 'GET', target, headers: {} });
    if (response.headers.etag) remember('If-None-Match', response.headers.etag);
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      continue;
    }
    collectSources(body, harvest.sources, columns);
    for (const link of linksOf(body, baseUrl)) {
      const url = new URL(link, origin);
      const found = gets.find(({ pattern }) => pattern.test(url.pathname));
      if (!found) continue;
      const values = Object.fromEntries(found.names.map((name, index) => [name, decodeURIComponent(found.pattern.exec(url.pathname)![index + 1]!)]));
      for (const [name, value] of Object.entries(values)) remember(name, value);
      for (const [name, value] of url.searchParams) remember(name, value);
      const key = url.pathname + url.search;
      if (seen.has(key)) continue;
      seen.add(key);
      (harvest.paths.get(found.route.id) ?? harvest.paths.set(found.route.id, []).get(found.route.id)!).push(values);
      if (url.search) (harvest.queries.get(found.route.id) ?? harvest.queries.set(found.route.id, []).get(found.route.id)!).push(url.search.slice(1));
      const count = visits.get(found.route.id) ?? 0;
      if (count < perRoute) {
        visits.set(found.route.id, count + 1);
        queue.push(key);
      }
    }
  }
  for (const source of harvest.sources) source.columns = columns.get(source.file_source_id) ?? [];
  return harvest;
}

/** Every link of a document that points into this server, as a path and query. */
function linksOf(value: unknown, baseUrl: string, found: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value.startsWith(`${baseUrl}/`)) found.push(value.slice(baseUrl.length));
  } else if (Array.isArray(value)) for (const item of value) linksOf(item, baseUrl, found);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) linksOf(item, baseUrl, found);
  return found;
}

/** GeoParquet sources of dataset documents, and the columns of schema documents by source id. */
function collectSources(body: unknown, sources: HarvestedSource[], columns: Map<number, { name: string; type: string }[]>): void {
  const document = body as Json;
  if (document?.schema?.source_id && Array.isArray(document.schema.columns)) {
    columns.set(document.schema.source_id, document.schema.columns.map((column: Json) => ({ name: column.name, type: column.type })));
  }
  const collectionId = document?.collection?.id;
  for (const file of document?.dataset?.files ?? []) {
    for (const format of file.formats ?? []) {
      if (format.format?.format_type !== 'geoparquet') continue;
      for (const source of format.sources ?? []) {
        if (sources.some((known) => known.file_source_id === source.id)) continue;
        sources.push({ collection_id: collectionId, dataset_id: document.dataset.id, file_id: file.id, file_source_id: source.id, columns: [] });
      }
    }
  }
}

/** Values a parameter's schema itself names: its enum, bounds and default, and both booleans. */
function schemaValues(schema: z.ZodType): string[] {
  const json = parameterJsonSchema(schema) as Json;
  const variants: Json[] = [json, ...(json.anyOf ?? [])];
  const values = variants.flatMap((variant) => [
    ...(variant.enum ?? []), variant.default, variant.minimum, variant.maximum,
    ...(variant.type === 'boolean' ? [true, false] : []),
    ...(variant.type === 'integer' ? [(variant.minimum ?? 0) - 1, (variant.maximum ?? 2 ** 53) + 1] : []),
  ]);
  return [...new Set(values.filter((value) => value !== undefined && value !== null).map(String))];
}

/**
 * Longest request target sent. Node refuses a request line and headers over 16 KiB itself (431) before any route
 * sees them, and proxies cut at 8 KiB (nginx's large_client_header_buffers), so longer ones test neither.
 */
const MAX_TARGET_LENGTH = 8000;

/** Other methods, all of them known to Node's HTTP parser (it answers an unknown one itself, before any route). */
const OTHER_METHODS = ['PUT', 'DELETE', 'PATCH', 'POST', 'GET', 'TRACE', 'PROPFIND', 'PURGE'];
const ACCEPT = ['application/json', 'application/geo+json', 'text/html', '*/*', 'application/vnd.apache.arrow.stream', 'image/png;q=0', '', 'garbage/;;;'];
const ENCODINGS = ['br', 'gzip', 'gzip, br', 'identity', 'br;q=0, gzip;q=0', 'deflate', '*', 'x'];
const RANGES = ['bytes=0-10', 'bytes=-5', 'bytes=5-', 'bytes=10-0', 'bytes=0-0,2-3', 'bytes=99999999-', 'items=0-1', 'bytes=--', 'bytes=0-1e3'];
const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''];

/** Header values node:http can send: no controls (other than tab) and nothing past Latin-1. */
const headerSafe = (text: string) => text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?').slice(0, 4000);

/** Options of {@link routeRequest}. */
export interface RouteRequestOptions {
  /** Arbitraries of bodies by schema, used instead of the schema-derived one (query bodies from the SQL grammar). */
  bodies?: Map<z.ZodType, fc.Arbitrary<unknown>>;
  /** Query tokens from real queries, mixed with mutated ones in the token header and parameter. */
  tokens?: readonly string[];
}

/**
 * Requests for one route of a route table: path values of links the crawl found or made-up ones (encoded or
 * raw), a subset of its query parameters with catalog, schema, domain or hostile values, sometimes repeated or
 * joined by unknown names, mostly its own method, random headers, and a body from its body schema.
 */
export function routeRequest(route: Route, harvest: Harvest, options: RouteRequestOptions = {}): fc.Arbitrary<FuzzRequest> {
  const pools = new Map(harvest.pools);
  if (options.tokens?.length) pools.set('token', [...options.tokens]);
  return fc.record({
    path: pathArbitrary(route, harvest, pools),
    query: queryArbitrary(route, harvest, pools),
    method: fc.oneof({ weight: 12, arbitrary: fc.constant(route.method as string) }, { weight: 1, arbitrary: fc.constantFrom('HEAD', 'OPTIONS') }, { weight: 2, arbitrary: fc.constantFrom(...OTHER_METHODS) }),
    headers: headersArbitrary(route, pools, options.tokens ?? []),
    body: bodyArbitrary(route, pools, options.bodies),
  }).map(({ path, query, method, headers, body }) => {
    const carriesBody = body !== undefined && !['GET', 'HEAD', 'OPTIONS', 'TRACE'].includes(method);
    return { method, target: query ? `${path}?${query}` : path, headers, ...(carriesBody ? { body } : {}) };
  }).filter((request) => requestLine(request.target).length <= MAX_TARGET_LENGTH);
}

function pathArbitrary(route: Route, harvest: Harvest, pools: ValuePools): fc.Arbitrary<string> {
  const names = Object.keys(route.pathParams ?? {});
  if (names.length === 0) return fc.constantFrom(route.path, `${route.path}/`);
  const known = harvest.paths.get(route.id) ?? [];
  const made = fc.record(Object.fromEntries(names.map((name) => [name, parameterText(name, pools, schemaValues(route.pathParams![name]!))])));
  const values = known.length === 0 ? made : fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: made }, {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom(...known), made, fc.constantFrom(...names)).map(([base, other, name]) => ({ ...base, [name]: other[name]! })),
  });
  return fc.tuple(values, fc.array(fc.boolean(), { minLength: names.length, maxLength: names.length })).map(([given, raw]) =>
    route.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = given[name] ?? '';
      return raw[names.indexOf(name)] && value !== '' ? value : encodeText(value);
    }));
}

function queryArbitrary(route: Route, harvest: Harvest, pools: ValuePools): fc.Arbitrary<string> {
  const declared = Object.entries(route.query ?? {});
  const pair = fc.oneof(
    ...declared.map(([name, schema]) => parameterText(name, pools, schemaValues(schema)).map((value) => [name, value] as const)),
    fc.tuple(fc.constantFrom('__proto__', 'constructor', 'toString', 'unknown', '', 'a[b]', 'limit[]', '%00'), hostileText()),
  );
  const pairs = fc.array(pair, { maxLength: declared.length + 2 });
  const written = fc.tuple(pairs, fc.constantFrom('component', 'raw', 'plus')).map(([list, style]) => list.map(([name, value]) => `${encodeText(name)}=${encodeValue(value, style)}`).join('&'));
  const linked = harvest.queries.get(route.id) ?? [];
  const choices: fc.Arbitrary<string>[] = [fc.constant(''), written];
  if (linked.length > 0) choices.push(fc.constantFrom(...linked), fc.tuple(fc.constantFrom(...linked), written).map(([link, more]) => (more ? `${link}&${more}` : link)));
  return fc.oneof(...choices);
}

/** encodeURIComponent that takes any string: a lone surrogate is written as U+FFFD, as a browser would send it. */
function encodeText(value: string): string {
  return encodeURIComponent(value.toWellFormed());
}

function encodeValue(value: string, style: 'component' | 'raw' | 'plus'): string {
  if (style === 'raw') return value;
  const encoded = encodeText(value);
  return style === 'plus' ? encoded.replaceAll('%20', '+') : encoded;
}

function headersArbitrary(route: Route, pools: ValuePools, tokens: readonly string[]): fc.Arbitrary<Record<string, string>> {
  const declared = Object.keys(route.headers ?? {});
  const token = mutatedToken(tokens);
  const entries: Record<string, fc.Arbitrary<string>> = {
    accept: fc.constantFrom(...ACCEPT),
    'accept-encoding': fc.constantFrom(...ENCODINGS),
    range: fc.oneof(fc.constantFrom(...RANGES), hostileText()),
    'if-none-match': parameterText('If-None-Match', pools, ['*', 'W/"x"', '"a", "b"']),
    'x-service-query-token': token,
    'content-type': fc.constantFrom(...CONTENT_TYPES),
    origin: fc.constantFrom('https://evil.example', 'null', 'https://catalog.example.org'),
  };
  for (const name of declared) entries[name.toLowerCase()] ??= parameterText(name, pools);
  const keys = Object.keys(entries);
  return fc.record(Object.fromEntries(keys.map((key) => [key, sometimes(entries[key]!, declared.some((name) => name.toLowerCase() === key) ? 0.5 : 0.2)])))
    .map((headers) => Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined).map(([name, value]) => [name, headerSafe(value!)])));
}

function bodyArbitrary(route: Route, pools: ValuePools, bodies?: Map<z.ZodType, fc.Arbitrary<unknown>>): fc.Arbitrary<string | undefined> {
  const schema = route.body ? (z.toJSONSchema(route.body, { io: 'input', unrepresentable: 'any' }) as Json) : { type: 'object' };
  const value = (route.body && bodies?.get(route.body)) ?? jsonSchemaValue(schema, pools);
  return fc.oneof(
    { weight: 8, arbitrary: value.map((body) => JSON.stringify(body) ?? 'null') },
    { weight: 1, arbitrary: fc.constantFrom('', '{', 'null', '[]', '"x"', '{"a":1,"a":2}', '\u0000', '{"__proto__":{"polluted":1}}') },
    { weight: 1, arbitrary: hostileText() },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}
