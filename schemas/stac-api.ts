import { z } from 'zod';
import { StacCatalogSchema, StacCollectionSchema, StacItemSchema, StacLinkSchema } from './stac.ts';

/**
 * Documents of the STAC API at /stac/api (STAC API 1.0.0) beyond the STAC documents themselves: the landing
 * page, conformance, the Collections list, ItemCollections, the search body and the error body. The official
 * fragments (`../shared/spec-schemas/stac-api`) are the judge; tests/stac-api.test.ts checks answers against them.
 */

// Limits of a search, each answered 400 with the limit named, so that no search holds the server's main thread for
// long (issue 22): free text is scored through an index, and `intersects` is checked and tested by GEOS on a worker
// thread. The OpenAPI document states each one.

/** Most positions an `intersects` geometry may have: a detailed country outline fits, a whole coastline does not. */
export const MAX_INTERSECTS_POSITIONS = 20_000;
/** Most parts an `intersects` geometry may have: points of a MultiPoint, lines, polygons and members of a collection. */
export const MAX_INTERSECTS_PARTS = 1_000;
/** Most polygon rings (outer and holes) an `intersects` geometry may have in all. */
export const MAX_INTERSECTS_RINGS = 1_000;
/** Most terms (comma-separated alternatives) a free-text `q` may have. */
export const MAX_FREE_TEXT_TERMS = 16;
/**
 * Most words a free-text `q` may have in all its terms (a word repeated within a term counts once). A one-letter
 * word is a prefix of a twentieth of all tokens: 16 of them took 17 to 41 ms at 21,000 Items on a busy 2-core box.
 */
export const MAX_FREE_TEXT_WORDS = 16;
/** Longest free-text `q`, in characters: the text, or all its terms together. */
export const MAX_FREE_TEXT_LENGTH = 1_000;
/** Items per page when `limit` is omitted (STAC API and OGC API - Features). */
export const DEFAULT_ITEM_LIMIT = 10;
/**
 * Largest page of Items; a larger `limit` is read as this, as the standards say, rather than refused. Rendering and
 * serialising an Item costs 0.05 to 0.2 ms of the main thread, so 250 keep a page within about 50 ms.
 */
export const MAX_ITEM_LIMIT = 250;
/** Most ids or collections one search may name. */
export const MAX_SEARCH_NAMES = 1_000;
/** Most sort keys in one search. */
export const MAX_SORT_KEYS = 4;
/** Longest page token: tokens this API writes are far shorter. */
export const MAX_PAGE_TOKEN_LENGTH = 200;
/** Most paths a `fields` may name (Fields extension), and the longest path. */
export const MAX_FIELDS = 64;
export const MAX_FIELD_PATH_LENGTH = 200;

/** Error body of the STAC API (its `exception` schema): a code and what to change. */
export const StacApiErrorSchema = z
  .object({
    code: z.string().describe('InvalidParameterValue, NotFound, MethodNotAllowed, PayloadTooLarge, ServerError or ServiceUnavailable.'),
    description: z.string().describe('What went wrong with this request and how to fix it.'),
  })
  .meta({ id: 'StacApiError' });

/** The conformance classes the API implements. */
export const StacConformanceSchema = z
  .object({ conformsTo: z.array(z.string()).describe('URIs of the conformance classes.') })
  .meta({ id: 'StacConformance' });

/** The landing page: the root Catalog with its conformance classes. */
export const StacLandingPageSchema = StacCatalogSchema.extend({ conformsTo: z.array(z.string()) }).meta({ id: 'StacLandingPage' });

/** A page of Collections, with a next link while there are more. */
export const StacCollectionsSchema = z
  .object({
    collections: z.array(StacCollectionSchema),
    links: z.array(StacLinkSchema),
    numberMatched: z.number().int().nonnegative().describe('Collections in all pages.'),
    numberReturned: z.number().int().nonnegative().describe('Collections in this page.'),
  })
  .meta({ id: 'StacCollections' });

/** A page of Items: a GeoJSON FeatureCollection with links, counts and a next link while there are more. */
export const StacItemCollectionSchema = z
  .object({
    type: z.literal('FeatureCollection'),
    features: z.array(StacItemSchema),
    links: z.array(StacLinkSchema),
    numberMatched: z.number().int().nonnegative().describe('Items that match the search, in all pages.'),
    numberReturned: z.number().int().nonnegative().describe('Items in this page.'),
  })
  .meta({ id: 'StacItemCollection' });

const longitude = z.number().min(-180).max(180);
const latitude = z.number().min(-90).max(90);
/** A position: longitude, latitude and an optional height, in WGS84 (RFC 7946 §3.1.1). */
const PositionSchema = z.union([z.tuple([longitude, latitude]), z.tuple([longitude, latitude, z.number()])]);
const positions = (min: number, message: string) => z.array(PositionSchema).min(min, message).max(MAX_INTERSECTS_POSITIONS, `has more than ${MAX_INTERSECTS_POSITIONS} positions`);
const parts = <T extends z.ZodType>(part: T) => z.array(part).max(MAX_INTERSECTS_PARTS, `has more than ${MAX_INTERSECTS_PARTS} parts`);
const LineSchema = positions(2, 'a line needs at least 2 positions');
const RingSchema = positions(4, 'a polygon ring needs at least 4 positions')
  .refine((ring) => ring[0]!.every((value, axis) => value === ring.at(-1)![axis]), 'a polygon ring must end where it starts');
const PolygonCoordinates = z.array(RingSchema).min(1, 'a polygon needs at least one ring').max(MAX_INTERSECTS_RINGS, `has more than ${MAX_INTERSECTS_RINGS} rings`);

const simpleGeometries = [
  z.strictObject({ type: z.literal('Point'), coordinates: PositionSchema }),
  z.strictObject({ type: z.literal('MultiPoint'), coordinates: parts(PositionSchema) }),
  z.strictObject({ type: z.literal('LineString'), coordinates: LineSchema }),
  z.strictObject({ type: z.literal('MultiLineString'), coordinates: parts(LineSchema) }),
  z.strictObject({ type: z.literal('Polygon'), coordinates: PolygonCoordinates }),
  z.strictObject({ type: z.literal('MultiPolygon'), coordinates: parts(PolygonCoordinates) }),
] as const;

/** What an `intersects` geometry may hold in all, and what each limit is called in a refusal. */
const GEOMETRY_LIMITS = { positions: MAX_INTERSECTS_POSITIONS, parts: MAX_INTERSECTS_PARTS, rings: MAX_INTERSECTS_RINGS } as const;

/**
 * A GeoJSON geometry (RFC 7946) in WGS84 longitude/latitude: every type, collections not nested, and within the
 * limits of an `intersects` filter.
 */
export const GeoJsonGeometrySchema = z
  .discriminatedUnion('type', [
    ...simpleGeometries,
    z.strictObject({ type: z.literal('GeometryCollection'), geometries: parts(z.discriminatedUnion('type', [...simpleGeometries])) }),
  ])
  .superRefine((geometry, context) => {
    const problem = describeGeometrySize(measureGeometry(geometry));
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    id: 'GeoJsonGeometry',
    description: `A GeoJSON geometry in WGS84 longitude/latitude, of at most ${MAX_INTERSECTS_POSITIONS} positions, ${MAX_INTERSECTS_PARTS} parts (points of a MultiPoint, lines, polygons, members of a GeometryCollection) and ${MAX_INTERSECTS_RINGS} polygon rings in all.`,
  });

/** A GeoJSON geometry. */
export type GeoJsonGeometry = z.output<typeof GeoJsonGeometrySchema>;

/** The size of a geometry: what the limits of `intersects` count. */
export interface GeometrySize {
  positions: number;
  parts: number;
  rings: number;
}

/**
 * Counts the positions, parts and rings of a geometry, without trusting its shape: any JSON value is counted (what
 * is not a geometry counts as nothing), in one pass that allocates nothing per position, so a refusal costs less
 * than checking the geometry would.
 */
export function measureGeometry(value: unknown): GeometrySize {
  const size: GeometrySize = { positions: 0, parts: 0, rings: 0 };
  const count = (coordinates: unknown, depth: number): void => {
    if (!Array.isArray(coordinates)) return;
    if (depth === 0) {
      size.positions++;
      return;
    }
    for (const inner of coordinates) count(inner, depth - 1);
  };
  const visit = (geometry: unknown, member: boolean): void => {
    if (geometry === null || typeof geometry !== 'object') return;
    const { type, coordinates, geometries } = geometry as { type?: unknown; coordinates?: unknown; geometries?: unknown };
    if (type === 'GeometryCollection' && !member && Array.isArray(geometries)) {
      for (const part of geometries) visit(part, true);
      return;
    }
    const multi = type === 'MultiPoint' || type === 'MultiLineString' || type === 'MultiPolygon';
    const parts = multi && Array.isArray(coordinates) ? coordinates.length : 1;
    // A member of a collection is one part at least, even an empty one.
    size.parts += member ? Math.max(1, parts) : parts;
    const depth = typeof type === 'string' && Object.hasOwn(COORDINATE_DEPTHS, type) ? COORDINATE_DEPTHS[type as keyof typeof COORDINATE_DEPTHS] : undefined;
    if (depth === undefined || !Array.isArray(coordinates)) return;
    if (type === 'Polygon') size.rings += coordinates.length;
    if (type === 'MultiPolygon') for (const polygon of coordinates) size.rings += Array.isArray(polygon) ? polygon.length : 0;
    count(coordinates, depth);
  };
  visit(value, false);
  return size;
}

/** Arrays between a geometry's `coordinates` and its positions, by type. */
const COORDINATE_DEPTHS = { Point: 0, MultiPoint: 1, LineString: 1, MultiLineString: 2, Polygon: 2, MultiPolygon: 3 } as const;

/** Why a geometry of this size is refused, naming the limit it passes; undefined when it is within every limit. */
export function describeGeometrySize(size: GeometrySize): string | undefined {
  for (const [name, limit] of Object.entries(GEOMETRY_LIMITS)) {
    const count = size[name as keyof GeometrySize];
    if (count > limit) return `has ${count} ${name}; at most ${limit} ${name} are allowed, so simplify it`;
  }
  return undefined;
}

/** One key of a POST sort (the sort extension). */
export const StacSortBySchema = z.strictObject({
  field: z.string().describe('id, collection, datetime (or properties.datetime), title (or properties.title).'),
  direction: z.enum(['asc', 'desc']).default('asc'),
});

const names = (what: string) => z.array(z.string()).max(MAX_SEARCH_NAMES, `names more than ${MAX_SEARCH_NAMES} ${what}`).describe(`${what[0]!.toUpperCase()}${what.slice(1)}, at most ${MAX_SEARCH_NAMES}.`);
const FreeTextText = z.string().max(MAX_FREE_TEXT_LENGTH, `is longer than ${MAX_FREE_TEXT_LENGTH} characters`);

/** The message of a union that did not parse: that of the branch of the input's kind (text or list), which names the limit. */
function explainUnion(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'invalid_union') return undefined;
  const branches = (issue as { errors?: { message: string }[][] }).errors;
  return branches?.[Array.isArray(issue.input) ? 1 : 0]?.[0]?.message;
}

/** The fields of a search body but `intersects`, which the two readings of the body below check differently. */
const searchBodyFields = {
  bbox: z.array(z.number()).max(6, 'has more than 6 numbers: give west, south, east, north, or with heights west, south, min, east, north, max')
    .describe('[west, south, east, north] or with heights [west, south, min, east, north, max]; west > east crosses ±180°.').optional(),
  datetime: z.string().describe('An RFC 3339 date-time or a date (its whole UTC day), or an interval start/end where .. or an empty end is open (one end only).').optional(),
  ids: names('item ids').optional(),
  collections: names('collection ids').optional(),
  limit: z.int().min(1).describe(`Items per page; ${DEFAULT_ITEM_LIMIT} when omitted, larger than ${MAX_ITEM_LIMIT} read as ${MAX_ITEM_LIMIT}.`).optional(),
  q: z.union([FreeTextText, z.array(FreeTextText).max(MAX_FREE_TEXT_TERMS, `has more than ${MAX_FREE_TEXT_TERMS} terms`)], { error: explainUnion })
    .describe(`Free text: terms (an array, or one string with commas between terms); an Item matches any term, and every word of a term. At most ${MAX_FREE_TEXT_TERMS} terms, ${MAX_FREE_TEXT_WORDS} words in all and ${MAX_FREE_TEXT_LENGTH} characters in all.`).optional(),
  sortby: z.array(StacSortBySchema).max(MAX_SORT_KEYS, `has more than ${MAX_SORT_KEYS} keys`).describe(`Sort keys, at most ${MAX_SORT_KEYS}.`).optional(),
  token: z.string().max(MAX_PAGE_TOKEN_LENGTH, `is longer than ${MAX_PAGE_TOKEN_LENGTH} characters, so it is not a token of this API`).describe('The token of a next link.').optional(),
  filter: z.union([z.string(), z.looseObject({})]).describe('A CQL2 filter on the queryables (/stac/api/queryables: id, collection, datetime, title, geometry, description, created, updated, version, table:row_count, proj:code): a cql2-json object, or cql2-text in a string.').optional(),
  'filter-lang': z.enum(['cql2-text', 'cql2-json']).describe('The encoding of filter: cql2-json for an object (the default then), cql2-text for a string (the default then).').optional(),
  fields: z.strictObject({
    include: z.array(z.string().max(MAX_FIELD_PATH_LENGTH)).max(MAX_FIELDS).nullable().optional(),
    exclude: z.array(z.string().max(MAX_FIELD_PATH_LENGTH)).max(MAX_FIELDS).nullable().optional(),
  }).describe('Which fields of each Item to return (the Fields extension): dotted paths to include and to exclude; with neither, the default set of a valid Item.').optional(),
  'filter-crs': z.literal('http://www.opengis.net/def/crs/OGC/1.3/CRS84').describe('The CRS of the filter\'s geometry literals: CRS84, the only one.').optional(),
};

/** Body of `POST /stac/api/search`: the GET parameters as JSON, arrays as arrays. */
export const StacSearchBodySchema = z
  .strictObject({ ...searchBodyFields, intersects: GeoJsonGeometrySchema.optional() })
  .meta({ id: 'StacSearchBody' });

/**
 * The search body as the server's main thread reads it: `intersects` is only measured against its limits there
 * ({@link measureGeometry}); GeoJsonGeometrySchema and GEOS check it on a worker thread, since checking 20,000
 * positions with zod alone takes longer than the main thread may be held.
 */
export const StacSearchBodyIntakeSchema = z.strictObject({ ...searchBodyFields, intersects: z.unknown().optional() });

/** Body of `POST /stac/api/search`. */
export type StacSearchBody = z.output<typeof StacSearchBodySchema>;
/** Body of `POST /stac/api/search` as the main thread reads it: `intersects` not yet checked. */
export type StacSearchBodyIntake = z.output<typeof StacSearchBodyIntakeSchema>;
/** An ItemCollection. */
export type StacItemCollection = z.infer<typeof StacItemCollectionSchema>;
/** A page of Collections. */
export type StacCollections = z.infer<typeof StacCollectionsSchema>;
/** The landing page. */
export type StacLandingPage = z.infer<typeof StacLandingPageSchema>;
