import { z } from 'zod';
import { tokenize } from '../../text.ts';
import { STAC_SORT_FIELDS, type StacSortKey } from './search.ts';
import { STAC_COLLECTION_SORT_FIELDS, type StacCollectionSortKey } from './collection-search.ts';
import {
  DEFAULT_ITEM_LIMIT, describeGeometrySize, MAX_ITEM_LIMIT, MAX_FREE_TEXT_LENGTH, MAX_FREE_TEXT_TERMS, MAX_FREE_TEXT_WORDS, MAX_INTERSECTS_PARTS, MAX_INTERSECTS_POSITIONS, MAX_INTERSECTS_RINGS,
  MAX_FIELDS, MAX_PAGE_TOKEN_LENGTH, MAX_SEARCH_NAMES, MAX_SORT_KEYS, measureGeometry, type StacSearchBodyIntake,
} from '../../../schemas/stac-api.ts';
import { findJsonDepthProblem, MAX_JSON_DEPTH } from '../../json-depth.ts';
import type { ParseFailure } from '../route-table.ts';
import { readBbox, readBboxText, readDatetime, type Bbox2d, type TimeInterval } from '../extent-params.ts';
import { CRS84, MAX_FILTER_LENGTH } from '../ogc/params.ts';
import { readFieldsText, writeFieldsText, type StacFields } from './fields.ts';

/**
 * Parameters of the STAC API, each declared once: the GET query codecs (text ↔ value, so next links are written
 * back canonically), the readers the POST body shares with them, and the limits.
 */

export { DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT };
/** Collections per page of /stac/api/collections when `limit` is omitted. */
export const DEFAULT_COLLECTION_LIMIT = 100;
/** Largest page of Collections; a larger `limit` is read as this. A Collection costs about as much as an Item. */
export const MAX_COLLECTION_LIMIT = 500;
/** Largest POST body, and longest `intersects` query parameter: 1 MiB. A larger body is a 413. */
export const MAX_STAC_BODY_BYTES = 1024 * 1024;

/**
 * An `intersects` geometry within the limits of its size, but not yet checked as GeoJSON: the worker thread that
 * tests it with GEOS checks it against GeoJsonGeometrySchema first.
 */
export interface UncheckedGeometry {
  readonly type: string;
}

/** A search, from GET parameters or a POST body alike. */
export interface StacSearchRequest {
  bbox?: Bbox2d;
  intersects?: UncheckedGeometry;
  datetime?: TimeInterval;
  ids?: string[];
  collections?: string[];
  /** Free-text terms, each its folded words. */
  q?: string[][];
  sortby?: StacSortKey[];
  limit?: number;
  token?: string;
  /** Which fields of each Item to return (the Fields extension). */
  fields?: StacFields;
  /** A CQL2 filter as it was sent (JSON text for a cql2-json object), read by core/api/stac/filter.ts. */
  filter?: string;
  'filter-lang'?: 'cql2-text' | 'cql2-json';
  'filter-crs'?: string;
}

/** What a reader of one parameter gives: the value, or what is wrong with it. */
type Read<T> = { ok: true; value: T } | { ok: false; detail: string };

/** Reads sort keys; more than MAX_SORT_KEYS or an unknown field is refused, naming the limit or the fields that sort. */
export function parseSortKeys(keys: readonly { field: string; direction: 'asc' | 'desc' }[]): Read<StacSortKey[]> {
  if (keys.length > MAX_SORT_KEYS) return { ok: false, detail: `has ${keys.length} keys; at most ${MAX_SORT_KEYS} keys are allowed (one per field that sorts)` };
  const value: StacSortKey[] = [];
  for (const { field, direction } of keys) {
    const canonical = Object.hasOwn(STAC_SORT_FIELDS, field) ? STAC_SORT_FIELDS[field as keyof typeof STAC_SORT_FIELDS] : undefined;
    if (!canonical) return { ok: false, detail: `cannot sort on "${field.slice(0, 60)}"; the fields that sort are ${Object.keys(STAC_SORT_FIELDS).join(', ')}` };
    value.push({ field: canonical, direction });
  }
  return { ok: true, value };
}

/**
 * Free-text terms as folded words, terms without a word dropped; refused beyond MAX_FREE_TEXT_LENGTH characters
 * (`length`: the text's, or the terms' together), MAX_FREE_TEXT_TERMS terms or MAX_FREE_TEXT_WORDS words, which
 * bound what one search may cost.
 */
export function readFreeText(terms: readonly string[], length = terms.reduce((sum, term) => sum + term.length, 0)): Read<string[][]> {
  if (length > MAX_FREE_TEXT_LENGTH) return { ok: false, detail: `is ${length} characters long; at most ${MAX_FREE_TEXT_LENGTH} characters are allowed` };
  if (terms.length > MAX_FREE_TEXT_TERMS) return { ok: false, detail: `has ${terms.length} terms; at most ${MAX_FREE_TEXT_TERMS} terms are allowed` };
  const value = terms.map((term) => [...new Set(tokenize(term))].sort()).filter((words) => words.length > 0);
  const words = value.reduce((sum, term) => sum + term.length, 0);
  if (words > MAX_FREE_TEXT_WORDS) return { ok: false, detail: `has ${words} words; at most ${MAX_FREE_TEXT_WORDS} words are allowed in all its terms` };
  return { ok: true, value };
}

/**
 * Reads an `intersects` value as far as the main thread does: an object with a type, within the limits of
 * positions, parts and rings, counted in one pass. The GEOS worker checks the rest.
 */
export function readIntersects(value: unknown): Read<UncheckedGeometry> {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
    return { ok: false, detail: 'must be a GeoJSON geometry: an object with a type and coordinates (or geometries)' };
  }
  const problem = describeGeometrySize(measureGeometry(value));
  return problem ? { ok: false, detail: problem } : { ok: true, value: value as UncheckedGeometry };
}

/**
 * A parameter whose text is read by `decode` (which returns the value or the problem) and written back by `encode`.
 * `maxLength` documents a limit that `decode` enforces with its own message.
 */
function textCodec<T>(decode: (text: string) => Read<T>, encode: (value: T) => string, description: string, maxLength?: number) {
  return z
    .codec(maxLength === undefined ? z.string() : z.string().meta({ maxLength }), z.custom<T>(() => true).optional(), {
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
      return list.length <= MAX_SEARCH_NAMES ? { ok: true, value: list } : { ok: false, detail: `names ${list.length} ${what}; at most ${MAX_SEARCH_NAMES} are allowed` };
    },
    (list) => list.join(','),
    `Comma-separated ${what}, at most ${MAX_SEARCH_NAMES}.`,
  );

const BboxParam = textCodec<Bbox2d>(readBboxText, (box) => box.join(','),
  'west,south,east,north (or west,south,min,east,north,max, whose heights are dropped) in WGS84 longitude/latitude. west > east is a box crossing the antimeridian; south > north is refused.');

const DatetimeParam = textCodec<TimeInterval>(readDatetime, (value) => value.text,
  'An RFC 3339 date-time (2026-11-22T00:00:00Z) or a date (2026-11-22, its whole UTC day), a closed interval start/end, or one open at one end (../end, start/.., start/). Compared with each Item\'s datetime, bounds included.');

const IntersectsParam = textCodec<UncheckedGeometry>(
  (text) => {
    if (text.length > MAX_STAC_BODY_BYTES) return { ok: false, detail: `is longer than ${MAX_STAC_BODY_BYTES} characters; send a simpler geometry, with POST` };
    const deep = findJsonDepthProblem(text);
    if (deep) return { ok: false, detail: deep };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { ok: false, detail: 'must be a GeoJSON geometry written as JSON' };
    }
    return readIntersects(json);
  },
  (geometry) => JSON.stringify(geometry),
  `A GeoJSON geometry (JSON text): Items whose footprint meets it. Not together with bbox. At most ${MAX_INTERSECTS_POSITIONS} positions, ${MAX_INTERSECTS_PARTS} parts and ${MAX_INTERSECTS_RINGS} rings in all, nested at most ${MAX_JSON_DEPTH} deep.`,
  MAX_STAC_BODY_BYTES,
);

const SortByParam = textCodec<StacSortKey[]>(
  (text) => {
    // A literal `+` arrives as a space when the client did not percent-encode it.
    const keys = text.split(',').map((key) => key.trim() === key ? key : `+${key.trim()}`).filter((key) => key !== '' && key !== '+');
    return parseSortKeys(keys.map((key) => ({ field: key.replace(/^[+-]/, ''), direction: key.startsWith('-') ? 'desc' : 'asc' })));
  },
  (keys) => keys.map((key) => `${key.direction === 'desc' ? '-' : '+'}${key.field}`).join(','),
  `Sort keys separated by commas, at most ${MAX_SORT_KEYS}, each +field (ascending, the default) or -field: id, collection, datetime, title, created, updated, table:row_count, description, version, proj:code (or each but the first two under properties.). Text sorts without case or accents; versions and CRS codes by the numbers in them. An Item without the value sorts after those with it; ties keep catalog order.`,
);

const FreeTextParam = textCodec<string[][]>(
  (text) => readFreeText(text.split(','), text.length),
  (terms) => terms.map((words) => words.join(' ')).join(','),
  `Free text: terms separated by commas; an Item matches when any term matches, and a term when each of its words matches a word of the dataset (name, tags, files, description) or of the Item's file, whole or as a prefix. Ranked like /api's search. At most ${MAX_FREE_TEXT_TERMS} terms, ${MAX_FREE_TEXT_WORDS} words in all and ${MAX_FREE_TEXT_LENGTH} characters.`,
  MAX_FREE_TEXT_LENGTH,
);

const limitParam = (fallback: number, max: number) =>
  z.int().min(1).transform((value) => Math.min(value, max)).default(fallback)
    .describe(`Items per page, at least 1; ${fallback} when omitted, and a value above ${max} is read as ${max}.`);

const FilterParams = {
  filter: z.string().max(MAX_FILTER_LENGTH).describe('A CQL2 filter on the queryables (/stac/api/queryables: id, collection, datetime, title, geometry, description, created, updated, version, table:row_count, proj:code): comparisons, LIKE, BETWEEN, IN, IS NULL, AND/OR/NOT, CASEI, ACCENTI, T_ functions on the times, and S_INTERSECTS or S_DISJOINT on the footprint. A bad filter is a 400 that says what and where.'),
  'filter-lang': z.enum(['cql2-text', 'cql2-json']).describe('The encoding of filter: cql2-text (when omitted) or cql2-json.'),
  'filter-crs': z.literal(CRS84).describe('The CRS of the filter\'s geometry literals: CRS84, the only one.'),
};

const FieldsParam = textCodec<StacFields>(readFieldsText, writeFieldsText,
  `Which fields of each Item to return, comma-separated dotted paths (properties.datetime): a path alone or with + is included, with - excluded. Included paths are all there is; with only excluded ones, they leave the default set (type, stac_version, id, geometry, bbox, links, assets, properties.datetime). At most ${MAX_FIELDS} paths.`);

const TokenParam = z.string().meta({ maxLength: MAX_PAGE_TOKEN_LENGTH }).describe('Where the next page starts: the token of a next link, passed on as it is.');

/** Query parameters of `GET /stac/api/search`. */
export const SEARCH_QUERY = {
  bbox: BboxParam,
  intersects: IntersectsParam,
  datetime: DatetimeParam,
  ids: names('Item ids'),
  collections: names('Collection ids'),
  q: FreeTextParam,
  sortby: SortByParam,
  ...FilterParams,
  fields: FieldsParam,
  limit: limitParam(DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT),
  token: TokenParam,
};

/** Query parameters of `GET /stac/api/collections/{collectionId}/items`: the OGC API - Features ones. */
export const ITEMS_QUERY = { bbox: BboxParam, datetime: DatetimeParam, ...FilterParams, sortby: SortByParam, fields: FieldsParam, limit: limitParam(DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT), token: TokenParam };

const CollectionSortByParam = textCodec<StacCollectionSortKey[]>(
  (text) => {
    const keys = text.split(',').map((key) => (key.trim() === key ? key : `+${key.trim()}`)).filter((key) => key !== '' && key !== '+');
    if (keys.length > MAX_SORT_KEYS) return { ok: false, detail: `has ${keys.length} keys; at most ${MAX_SORT_KEYS} are allowed` };
    const value: StacCollectionSortKey[] = [];
    for (const key of keys) {
      const field = key.replace(/^[+-]/, '');
      if (!(STAC_COLLECTION_SORT_FIELDS as readonly string[]).includes(field)) return { ok: false, detail: `cannot sort Collections on "${field.slice(0, 60)}"; they sort on ${STAC_COLLECTION_SORT_FIELDS.join(', ')}` };
      value.push({ field: field as StacCollectionSortKey['field'], direction: key.startsWith('-') ? 'desc' : 'asc' });
    }
    return { ok: true, value };
  },
  (keys) => keys.map((key) => `${key.direction === 'desc' ? '-' : '+'}${key.field}`).join(','),
  `Sort keys separated by commas, each +field (ascending) or -field: ${STAC_COLLECTION_SORT_FIELDS.join(', ')}. Without it, Collections come in catalog order, or best free-text match first with q.`,
);

/**
 * Query parameters of `GET /stac/api/collections` (STAC API Collection Search): a Collection meets `bbox`,
 * `datetime` and a spatial `filter` when one of its Items does, and free text by its best Item.
 */
export const COLLECTIONS_QUERY = {
  bbox: BboxParam,
  datetime: DatetimeParam,
  q: FreeTextParam,
  ...FilterParams,
  filter: FilterParams.filter.describe('A CQL2 filter on the queryables of Collections (/stac/api/collections/queryables: id, title, description, license, geometry, the last met when any Item\'s footprint meets it).'),
  sortby: CollectionSortByParam,
  limit: limitParam(DEFAULT_COLLECTION_LIMIT, MAX_COLLECTION_LIMIT).describe(`Collections per page; ${DEFAULT_COLLECTION_LIMIT} when omitted, a value above ${MAX_COLLECTION_LIMIT} is read as ${MAX_COLLECTION_LIMIT}.`),
  token: TokenParam,
};

/** A Collection search, as the GET parameters give it. */
export interface StacCollectionsRequest extends Pick<StacSearchRequest, 'bbox' | 'datetime' | 'q' | 'filter' | 'filter-lang' | 'filter-crs' | 'limit' | 'token'> {
  sortby?: StacCollectionSortKey[];
}

/** Refuses `bbox` and `intersects` together, as STAC API item search requires. */
export function refineSearch<T extends { bbox?: unknown; intersects?: unknown }>(values: T): T | ParseFailure {
  if (values.bbox !== undefined && values.intersects !== undefined) return { ok: false, name: 'intersects', detail: 'give bbox or intersects, not both' };
  return values;
}

/** A POST search body (already parsed by StacSearchBodyIntakeSchema) read as the same request GET parameters give. */
export function searchRequestFromBody(body: StacSearchBodyIntake): { ok: true; value: StacSearchRequest } | ParseFailure {
  const request: StacSearchRequest = {};
  if (body.bbox !== undefined) {
    const bbox = readBbox(body.bbox);
    if (!bbox.ok) return { ok: false, name: 'bbox', detail: `bbox ${bbox.detail}` };
    request.bbox = bbox.value;
  }
  if (body.intersects !== undefined) {
    const intersects = readIntersects(body.intersects);
    if (!intersects.ok) return { ok: false, name: 'intersects', detail: `intersects ${intersects.detail}` };
    request.intersects = intersects.value;
  }
  if (body.datetime !== undefined) {
    const datetime = readDatetime(body.datetime);
    if (!datetime.ok) return { ok: false, name: 'datetime', detail: `datetime ${datetime.detail}` };
    request.datetime = datetime.value;
  }
  for (const name of ['ids', 'collections'] as const) {
    const list = body[name];
    if (list === undefined) continue;
    request[name] = [...new Set(list)];
  }
  if (body.q !== undefined) {
    const q = typeof body.q === 'string' ? readFreeText(body.q.split(','), body.q.length) : readFreeText(body.q);
    if (!q.ok) return { ok: false, name: 'q', detail: `q ${q.detail}` };
    request.q = q.value;
  }
  if (body.sortby !== undefined) {
    const keys = parseSortKeys(body.sortby);
    if (!keys.ok) return { ok: false, name: 'sortby', detail: `sortby ${keys.detail}` };
    request.sortby = keys.value;
  }
  if (body.filter !== undefined) {
    request.filter = typeof body.filter === 'string' ? body.filter : JSON.stringify(body.filter);
    request['filter-lang'] = body['filter-lang'] ?? (typeof body.filter === 'string' ? 'cql2-text' : 'cql2-json');
  }
  if (body['filter-crs'] !== undefined) request['filter-crs'] = body['filter-crs'];
  if (body.fields !== undefined) request.fields = body.fields;
  if (body.limit !== undefined) request.limit = Math.min(body.limit, MAX_ITEM_LIMIT);
  if (body.token !== undefined) request.token = body.token;
  const refined = refineSearch(request);
  return 'ok' in refined ? refined : { ok: true, value: refined };
}
