import { z } from 'zod';
import { tokenize } from '../../text.ts';
import { STAC_SORT_FIELDS, type StacSortKey } from '../../stac/search.ts';
import { GeoJsonGeometrySchema, type GeoJsonGeometry, type StacSearchBody } from '../../../schemas/stac-api.ts';
import type { ParseFailure } from '../route-table.ts';
import { readBbox, readBboxText, readDatetime, type Bbox2d, type TimeInterval } from '../extent-params.ts';

/**
 * Parameters of the STAC API, each declared once: the GET query codecs (text ↔ value, so next links are written
 * back canonically), the readers the POST body shares with them, and the limits.
 */

/** Items per page when `limit` is omitted (STAC API and OGC API - Features). */
export const DEFAULT_ITEM_LIMIT = 10;
/** Largest page; a larger `limit` is read as this, as the standards say, rather than refused. */
export const MAX_ITEM_LIMIT = 10_000;
/** Collections per page of /stac/api/collections when `limit` is omitted. */
export const DEFAULT_COLLECTION_LIMIT = 100;
/** Largest page of Collections; a larger `limit` is read as this. */
export const MAX_COLLECTION_LIMIT = 1_000;
/** Largest POST body, and longest `intersects` query parameter: 1 MiB. A larger body is a 413. */
export const MAX_STAC_BODY_BYTES = 1024 * 1024;
/** Most ids or collections one search may name. */
export const MAX_SEARCH_NAMES = 1_000;

/** A search, from GET parameters or a POST body alike. */
export interface StacSearchRequest {
  bbox?: Bbox2d;
  intersects?: GeoJsonGeometry;
  datetime?: TimeInterval;
  ids?: string[];
  collections?: string[];
  /** Free-text terms, each its folded words. */
  q?: string[][];
  sortby?: StacSortKey[];
  limit?: number;
  token?: string;
}

/** Reads sort keys; an unknown field is refused, naming the fields that sort. */
export function parseSortKeys(keys: readonly { field: string; direction: 'asc' | 'desc' }[]): { ok: true; value: StacSortKey[] } | { ok: false; detail: string } {
  const value: StacSortKey[] = [];
  for (const { field, direction } of keys) {
    const canonical = Object.hasOwn(STAC_SORT_FIELDS, field) ? STAC_SORT_FIELDS[field as keyof typeof STAC_SORT_FIELDS] : undefined;
    if (!canonical) return { ok: false, detail: `cannot sort on "${field.slice(0, 60)}"; the fields that sort are ${Object.keys(STAC_SORT_FIELDS).join(', ')}` };
    value.push({ field: canonical, direction });
  }
  return { ok: true, value };
}

/** Free-text terms as folded words; terms without a word are dropped. */
export function freeTextTerms(terms: readonly string[]): string[][] {
  return terms.map((term) => [...new Set(tokenize(term))].sort()).filter((words) => words.length > 0);
}

/** A parameter whose text is read by `decode` (which returns the value or the problem) and written back by `encode`. */
function textCodec<T>(decode: (text: string) => { ok: true; value: T } | { ok: false; detail: string }, encode: (value: T) => string, description: string) {
  return z
    .codec(z.string(), z.custom<T>(() => true).optional(), {
      decode: (text, ctx) => {
        const read = decode(text);
        if (read.ok) return read.value;
        ctx.issues.push({ code: 'custom', input: text, message: read.detail });
        return z.NEVER;
      },
      encode: (value) => (value === undefined ? '' : encode(value)),
    })
    .describe(description);
}

/** Comma-separated names, blanks dropped, at most MAX_SEARCH_NAMES. */
const names = (what: string) =>
  textCodec<string[]>(
    (text) => {
      const list = [...new Set(text.split(',').map((name) => name.trim()).filter(Boolean))];
      return list.length <= MAX_SEARCH_NAMES ? { ok: true, value: list } : { ok: false, detail: `names at most ${MAX_SEARCH_NAMES} ${what}` };
    },
    (list) => list.join(','),
    `Comma-separated ${what}.`,
  );

const BboxParam = textCodec<Bbox2d>(readBboxText, (box) => box.join(','),
  'west,south,east,north (or west,south,min,east,north,max, whose heights are dropped) in WGS84 longitude/latitude. west > east is a box crossing the antimeridian; south > north is refused.');

const DatetimeParam = textCodec<TimeInterval>(readDatetime, (value) => value.text,
  'An RFC 3339 date-time (2026-11-22T00:00:00Z) or a date (2026-11-22, its whole UTC day), a closed interval start/end, or one open at one end (../end, start/.., start/). Compared with each Item\'s datetime, bounds included.');

const IntersectsParam = textCodec<GeoJsonGeometry>(
  (text) => {
    if (text.length > MAX_STAC_BODY_BYTES) return { ok: false, detail: `is longer than ${MAX_STAC_BODY_BYTES} characters; send a simpler geometry, with POST` };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { ok: false, detail: 'must be a GeoJSON geometry written as JSON' };
    }
    const parsed = GeoJsonGeometrySchema.safeParse(json);
    return parsed.success ? { ok: true, value: parsed.data } : { ok: false, detail: `is not a usable GeoJSON geometry: ${describeIssue(parsed.error.issues[0]!)}` };
  },
  (geometry) => JSON.stringify(geometry),
  'A GeoJSON geometry (JSON text): Items whose footprint meets it. Not together with bbox.',
);

const SortByParam = textCodec<StacSortKey[]>(
  (text) => {
    // A literal `+` arrives as a space when the client did not percent-encode it.
    const keys = text.split(',').map((key) => key.trim() === key ? key : `+${key.trim()}`).filter((key) => key !== '' && key !== '+');
    return parseSortKeys(keys.map((key) => ({ field: key.replace(/^[+-]/, ''), direction: key.startsWith('-') ? 'desc' : 'asc' })));
  },
  (keys) => keys.map((key) => `${key.direction === 'desc' ? '-' : '+'}${key.field}`).join(','),
  'Sort keys separated by commas, each +field (ascending, the default) or -field: id, collection, datetime, title (or properties.datetime, properties.title). Ties keep catalog order.',
);

const FreeTextParam = textCodec<string[][]>(
  (text) => ({ ok: true, value: freeTextTerms(text.split(',')) }),
  (terms) => terms.map((words) => words.join(' ')).join(','),
  'Free text: terms separated by commas; an Item matches when any term matches, and a term when each of its words matches a word of the dataset (name, tags, files, description) or of the Item\'s file, whole or as a prefix. Ranked like /api\'s search.',
);

const limitParam = (fallback: number, max: number) =>
  z.int().min(1).transform((value) => Math.min(value, max)).default(fallback)
    .describe(`Items per page, at least 1; ${fallback} when omitted, and a value above ${max} is read as ${max}.`);

const TokenParam = z.string().describe('Where the next page starts: the token of a next link, passed on as it is.');

/** Query parameters of `GET /stac/api/search`. */
export const SEARCH_QUERY = {
  bbox: BboxParam,
  intersects: IntersectsParam,
  datetime: DatetimeParam,
  ids: names('Item ids'),
  collections: names('Collection ids'),
  q: FreeTextParam,
  sortby: SortByParam,
  limit: limitParam(DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT),
  token: TokenParam,
};

/** Query parameters of `GET /stac/api/collections/{collectionId}/items`: the OGC API - Features ones. */
export const ITEMS_QUERY = { bbox: BboxParam, datetime: DatetimeParam, limit: limitParam(DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT), token: TokenParam };

/** Query parameters of `GET /stac/api/collections`. */
export const COLLECTIONS_QUERY = { limit: limitParam(DEFAULT_COLLECTION_LIMIT, MAX_COLLECTION_LIMIT).describe(`Collections per page; ${DEFAULT_COLLECTION_LIMIT} when omitted, a value above ${MAX_COLLECTION_LIMIT} is read as ${MAX_COLLECTION_LIMIT}.`), token: TokenParam };

/** Refuses `bbox` and `intersects` together, as STAC API item search requires. */
export function refineSearch<T extends { bbox?: unknown; intersects?: unknown }>(values: T): T | ParseFailure {
  if (values.bbox !== undefined && values.intersects !== undefined) return { ok: false, name: 'intersects', detail: 'give bbox or intersects, not both' };
  return values;
}

/** A POST search body (already parsed by StacSearchBodySchema) read as the same request GET parameters give. */
export function searchRequestFromBody(body: StacSearchBody): { ok: true; value: StacSearchRequest } | ParseFailure {
  const request: StacSearchRequest = {};
  if (body.bbox !== undefined) {
    const bbox = readBbox(body.bbox);
    if (!bbox.ok) return { ok: false, name: 'bbox', detail: `bbox ${bbox.detail}` };
    request.bbox = bbox.value;
  }
  if (body.intersects !== undefined) request.intersects = body.intersects;
  if (body.datetime !== undefined) {
    const datetime = readDatetime(body.datetime);
    if (!datetime.ok) return { ok: false, name: 'datetime', detail: `datetime ${datetime.detail}` };
    request.datetime = datetime.value;
  }
  for (const name of ['ids', 'collections'] as const) {
    const list = body[name];
    if (list === undefined) continue;
    if (list.length > MAX_SEARCH_NAMES) return { ok: false, name, detail: `${name} names at most ${MAX_SEARCH_NAMES} values` };
    request[name] = [...new Set(list)];
  }
  if (body.q !== undefined) request.q = freeTextTerms(typeof body.q === 'string' ? body.q.split(',') : body.q);
  if (body.sortby !== undefined) {
    const keys = parseSortKeys(body.sortby);
    if (!keys.ok) return { ok: false, name: 'sortby', detail: `sortby ${keys.detail}` };
    request.sortby = keys.value;
  }
  if (body.limit !== undefined) request.limit = Math.min(body.limit, MAX_ITEM_LIMIT);
  if (body.token !== undefined) request.token = body.token;
  const refined = refineSearch(request);
  return 'ok' in refined ? refined : { ok: true, value: refined };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.');
  return path ? `${path}: ${issue.message}` : issue.message;
}
