import { z } from 'zod';
import { readBboxText, readDatetime, type Bbox2d, type ExtentRead, type TimeInterval } from '../extent-params.ts';

/** Items per page when `limit` is not given. */
export const DEFAULT_FEATURE_LIMIT = 10;
/** Largest page; a larger `limit` is served as this many, as OGC API - Features Part 1 permits (§7.15.3). */
export const MAX_FEATURE_LIMIT = 10_000;
/**
 * The page size of next links grows to this: each next link asks for twice the features of the page it follows,
 * up to this many, and a larger limit is kept. A client that pages at a small limit through next links, as GDAL
 * 3.6 does at 10 whatever the API declares, then reads 135,000 features in about 140 pages instead of 13,500.
 * Every page still holds at most the limit of its own URL (Part 1, /req/core/fc-limit-response-1).
 */
export const NEXT_PAGE_LIMIT = 1000;

/** The one CRS of coordinates, extents and `bbox` (WGS 84 longitude/latitude). */
export const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';
/** CRS84 with ellipsoidal height, the CRS of a six-number `bbox`. */
export const CRS84H = 'http://www.opengis.net/def/crs/OGC/0/CRS84h';

/** A `bbox` or `datetime` value as the shared reader gives it, or a zod issue carrying its reason. */
function readOrFail<T>(ctx: z.core.ParsePayload<string>, text: string, read: ExtentRead<T>): T {
  if (read.ok) return read.value;
  ctx.issues.push({ code: 'custom', input: text, message: read.detail });
  return z.NEVER;
}

/** `bbox`: four numbers (or six, with heights, which are ignored), comma-separated, in CRS84. */
export const BboxParam = z
  .codec(z.string(), z.custom<Bbox2d>(), {
    decode: (text, ctx) => readOrFail(ctx, text, readBboxText(text)),
    encode: (box) => box.join(','),
  })
  .describe('Only features whose geometry may meet this box: west,south,east,north in WGS 84 longitude/latitude (six numbers add heights, which are ignored). west > east crosses the antimeridian. Tested against each row\'s bounding box (the GeoParquet bbox covering).');

/** `bbox-crs`: CRS84 only (Part 2 names the parameter; this server knows one CRS). */
export const BboxCrsParam = z.enum([CRS84, CRS84H]).describe('CRS of bbox: CRS84 (or CRS84h for six numbers); no other CRS is served.');

/** `datetime`: an RFC 3339 instant or a date, or an interval `start/end` with `..` for one open end. */
export const DatetimeParam = z
  .codec(z.string(), z.custom<TimeInterval>(), {
    decode: (text, ctx) => readOrFail(ctx, text, readDatetime(text)),
    encode: (interval) => interval.text,
  })
  .describe('Only features whose time column (the first DATE or TIMESTAMP column of the file) lies in this instant or interval: an RFC 3339 date-time, a date (its whole UTC day), or start/end with ".." (or nothing) for one open end, never both. On a collection without a time column no feature matches.');

/** A `limit` parameter: a page of `what`, `fallback` when omitted, a larger value served as `max`. */
const pageLimit = (what: string, fallback: number, max: number) => z
  .int()
  .min(1)
  .transform((limit) => Math.min(limit, max))
  .default(fallback)
  .meta({ maximum: max })
  .describe(`${what} per page, ${fallback} when omitted; a value above ${max} is served as ${max}.`);

/** `limit`: page size, clamped to the maximum. */
export const LimitParam = pageLimit('Features', DEFAULT_FEATURE_LIMIT, MAX_FEATURE_LIMIT);

/**
 * Collections per page of `/features/collections` when `limit` is not given: the whole list of any catalog up to
 * that many files, so a client that reads one page sees every collection; larger catalogs page by next links.
 */
export const DEFAULT_COLLECTIONS_LIMIT = 1_000;
/** Largest page of `/features/collections`; a larger `limit` is served as this many. */
export const MAX_COLLECTIONS_LIMIT = 10_000;

/** `limit` of `/features/collections`: collections per page, clamped to the maximum. */
export const CollectionsLimitParam = pageLimit('Collections', DEFAULT_COLLECTIONS_LIMIT, MAX_COLLECTIONS_LIMIT);
/** `offset` of `/features/collections`: where the page starts, as next and prev links write it. */
export const CollectionsOffsetParam = z.int().min(0).default(0).describe('Collections to skip, as next and prev links write it; 0 when omitted.');

/** `after`: the cursor of `next` links. */
export const AfterParam = z.int().min(0).describe('Cursor written by next links: features with an id greater than this. Paging by id never rescans the rows before it.');
/** `before`: the cursor of `prev` links when filters apply. */
export const BeforeParam = z.int().min(1).describe('Cursor written by prev links: the page of features just before this id.');
/** `f`: the format; GeoJSON is the only one. */
export const FormatParam = z.enum(['json', 'geojson']).describe('Format of the answer; GeoJSON always (json and geojson are accepted for clients that send them).');

/** Longest `filter` accepted, in characters; the text and JSON parsers bound their work to it. */
export const MAX_FILTER_LENGTH = 65_536;

/** `filter`: a CQL2 expression (OGC API - Features Part 3), in the encoding `filter-lang` names. */
export const FilterParam = z
  .string()
  .min(1)
  .max(MAX_FILTER_LENGTH)
  .describe('A CQL2 filter (OGC 21-065r2) on the queryables of the collection: comparisons, LIKE, BETWEEN, IN, IS NULL, AND/OR/NOT, CASEI/ACCENTI, arithmetic, spatial functions (S_INTERSECTS, S_WITHIN, S_CONTAINS…) on CRS84 geometry literals, and temporal functions (T_AFTER, T_DURING…) on dates and timestamps. Literals are bound as parameters; spatial functions first test the bbox covering. A bad filter answers 400 and says where.');

/**
 * `filter-lang`: the encoding of `filter`. `cql-text` is the name the drafts of Part 3 gave the text encoding, and
 * the one GDAL 3.6's OAPIF driver looks for in this parameter's enum before it sends a layer's attribute filter to
 * the server; it is read as cql2-text.
 */
export const FilterLangParam = z
  .enum(['cql2-text', 'cql2-json', 'cql-text'])
  .default('cql2-text')
  .describe('The encoding of filter: cql2-text (when omitted) or cql2-json; cql-text, the drafts\' name that GDAL 3.6 sends, is read as cql2-text.');

/** `filter-crs`: the CRS of the filter's geometry literals; CRS84 only. */
export const FilterCrsParam = z.enum([CRS84]).describe('CRS of the geometry literals of filter: CRS84, the only one served.');

/** `{tileMatrixSetId}`: the one tiling scheme served. */
export const TileMatrixSetIdParam = z.enum(['WebMercatorQuad']).describe('The tile matrix set: WebMercatorQuad, the only one served.');
/** `{tileMatrix}`, `{tileRow}`, `{tileCol}`: a zoom level and a tile's row and column in it, decimal. */
export const TileIndexParam = z.int().min(0).max(2 ** 24).describe('A zoom level (tileMatrix), or a row or column of a tile at that level, from 0.');
/** `f` of a tileset: its OGC document, or TileJSON 3.0 for MapLibre. */
export const TilesetFormatParam = z.enum(['json', 'tilejson']).describe('json (the OGC tileset document, when omitted) or tilejson (TileJSON 3.0.0, which MapLibre reads as a vector source).');

/** `{collectionId}`: `{collection}.{dataset}.{file}` slugs. */
export const CollectionIdParam = z
  .string()
  .regex(/^[a-z0-9-]+\.[a-z0-9-]+\.[a-z0-9-]+$/)
  .describe('Collection id: `{collection}.{dataset}.{file}` slugs, as /features/collections lists them.');

/** `{featureId}`: a row position in the file, decimal without leading zeros. */
export const FeatureIdParam = z.int().min(0).describe('Feature id: the position of the row in the file, from 0.');
