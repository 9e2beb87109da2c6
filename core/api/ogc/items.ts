import type { Cql2PropertyType } from '../../cql2/check.ts';
import type { Cql2Expression } from '../../cql2/expression.ts';
import type { ParseOutcome, QueryValues } from '../route-table.ts';
import { readItemsFilter } from './filter.ts';
import type { FeatureLayer, Queryable } from './layers.ts';
import { DEFAULT_FEATURE_LIMIT, NEXT_PAGE_LIMIT } from './params.ts';
import { OGC_ROUTES } from './routes.ts';
import { splitBox } from '../../geo/lon-extent.ts';

/** An equality filter on a queryable column; the value is checked against its JSON type before it gets here. */
export interface EqualityFilter {
  column: string;
  type: 'integer' | 'number' | 'string' | 'boolean';
  value: string;
}

/** What selects features: boxes in CRS84 (any of them), a time interval on the time column, equalities, a CQL2 filter. */
export interface FeatureFilter {
  /** [west, south, east, north] in CRS84 with west ≤ east; two boxes for a request across the antimeridian. */
  boxes: [west: number, south: number, east: number, north: number][];
  time?: { column: string; type: 'date' | 'timestamp'; start: string | null; end: string | null };
  equals: EqualityFilter[];
  /** A checked CQL2 filter (OGC API - Features Part 3), with the type of every property it may name. */
  cql?: { expression: Cql2Expression; properties: [name: string, type: Cql2PropertyType][] };
}

/** Files with at most this many rows get `numberMatched` under filters: counting them scans few values. */
export const COUNT_MAX_ROWS = 250_000;

type ItemsQuery = NonNullable<(typeof OGC_ROUTES.getFeatures)['query']>;

/** A parsed items request: the declared parameters, the equality filters on queryables sorted by column, the CQL2 filter. */
export interface ItemsRequest {
  values: QueryValues<ItemsQuery>;
  equals: EqualityFilter[];
  cql?: Cql2Expression;
}

const VALUE_SPELLING: Record<Queryable['type'], { test: RegExp; expected: string }> = {
  integer: { test: /^-?\d{1,18}$/, expected: 'an integer' },
  number: { test: /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i, expected: 'a number' },
  boolean: { test: /^(true|false)$/, expected: 'true or false' },
  string: { test: /^[^\0]*$/, expected: 'text without NUL characters' },
};

/**
 * Parses the query of the items route: the declared parameters strictly (route table), then every other name
 * as an equality filter on a queryable of this collection, its value spelt as the column's type. A name that is
 * neither, a repeated one, or `after` with `before`, is refused, as OGC API - Features Part 1 asks (§7.15.1).
 */
export function parseItemsRequest(layer: FeatureLayer, params: URLSearchParams): ParseOutcome<ItemsRequest> {
  const route = OGC_ROUTES.getFeatures;
  const parsed = route.parseQuery(params);
  if (!parsed.ok) return parsed;
  const equals = new Map<string, EqualityFilter>();
  for (const [name, value] of params) {
    if (Object.hasOwn(route.query!, name)) continue;
    const queryable = layer.queryables.get(name);
    if (!queryable) {
      const accepted = [...Object.keys(route.query!), ...layer.queryables.keys()].join(', ');
      return { ok: false, name, detail: `unknown query parameter "${name.slice(0, 40)}"; this collection accepts ${accepted} (its queryables route lists the filterable columns)` };
    }
    if (equals.has(name)) return { ok: false, name, detail: `query parameter "${name.slice(0, 40)}" is given more than once` };
    const spelling = VALUE_SPELLING[queryable.type];
    if (!spelling.test.test(value)) return { ok: false, name, detail: `"${name.slice(0, 40)}" filters a column of type ${queryable.type}: the value must be ${spelling.expected}, got "${value.slice(0, 80)}"` };
    equals.set(name, { column: name, type: queryable.type, value });
  }
  if (parsed.value.after !== undefined && parsed.value.before !== undefined) return { ok: false, name: 'before', detail: 'give after or before, not both' };
  const { filter, 'filter-lang': lang = 'cql2-text' } = parsed.value;
  const cql = filter === undefined ? undefined : readItemsFilter(layer, filter, lang);
  if (cql && !cql.ok) return cql;
  return { ok: true, value: { values: parsed.value, equals: [...equals.values()].sort((a, b) => (a.column < b.column ? -1 : 1)), ...(cql ? { cql: cql.value } : {}) } };
}

/** Whether a request filters rows (anything but paging). */
export function isFiltered(request: ItemsRequest): boolean {
  const { bbox, datetime } = request.values;
  return bbox !== undefined || datetime !== undefined || request.equals.length > 0 || request.cql !== undefined;
}

/**
 * The engine's filter of a request; null when nothing can match: a `datetime` on a collection without a time
 * column (a feature without a time does not meet any instant or interval, OGC API - Features §7.15.4).
 */
export function toFeatureFilter(layer: FeatureLayer, request: ItemsRequest): FeatureFilter | null {
  const { bbox, datetime } = request.values;
  if (datetime !== undefined && !layer.timeColumn) return null;
  const boxes: FeatureFilter['boxes'] = bbox ? splitBox(...bbox) : [];
  const iso = (bound: number | null) => (bound === null ? null : new Date(bound).toISOString());
  return {
    boxes,
    equals: request.equals,
    ...(request.cql === undefined ? {} : { cql: { expression: request.cql, properties: [...layer.filterables] } }),
    ...(datetime && layer.timeColumn ? { time: { column: layer.timeColumn.name, type: layer.timeColumn.type, start: iso(datetime.start), end: iso(datetime.end) } } : {}),
  };
}

/** The URL of the items of a request at another cursor: declared parameters sorted, then the filters sorted. */
export function itemsUrl(baseUrl: string, layer: FeatureLayer, request: ItemsRequest, cursor: PageCursor): string {
  const { after: _after, before: _before, ...values } = request.values;
  const declared = OGC_ROUTES.getFeatures.encodeQuery({ ...values, ...cursor });
  const filters = request.equals.map(({ column, value }) => `${encodeURIComponent(column)}=${encodeURIComponent(value)}`);
  const query = [declared, ...filters].filter(Boolean).join('&');
  return `${baseUrl}${OGC_ROUTES.getFeatures.fillPath({ collectionId: layer.id })}${query ? `?${query}` : ''}`;
}

/** The limit of the next link of a page of `limit` features: doubled, up to {@link NEXT_PAGE_LIMIT}. */
export function growPageLimit(limit: number): number {
  return limit >= NEXT_PAGE_LIMIT ? limit : Math.min(limit * 2, NEXT_PAGE_LIMIT);
}

/** Where a neighbour page starts, and its size when it differs from the page's own. */
export interface PageCursor {
  after?: number;
  before?: number;
  limit?: number;
}

/**
 * The cursors of the pages around one: `next` after its last id while more follow, with a grown limit
 * ({@link growPageLimit}); `prev` the page before its first id. Without filters that page is plain arithmetic (ids
 * are consecutive), so it is an `after` cursor like any other, or the first page cut to the features before this
 * one; with filters it is `before`, which reads the rows before the id backwards.
 */
export function neighbourCursors(request: ItemsRequest, ids: number[], hasMore: boolean): { next?: PageCursor; prev?: PageCursor } {
  const { after, before } = request.values;
  const limit = request.values.limit ?? DEFAULT_FEATURE_LIMIT;
  const first = ids[0];
  const last = ids.at(-1);
  const backwards = before !== undefined;
  const next = last === undefined ? undefined : backwards || hasMore ? { after: last, limit: growPageLimit(limit) } : undefined;
  let prev: PageCursor | undefined;
  if (backwards) prev = hasMore && first !== undefined ? { before: first } : undefined;
  else if (after !== undefined) {
    const edge = first ?? after + 1;
    prev = isFiltered(request) ? { before: edge } : edge - limit - 1 >= 0 ? { after: edge - limit - 1 } : { limit: edge };
  }
  return { ...(next ? { next } : {}), ...(prev ? { prev } : {}) };
}
