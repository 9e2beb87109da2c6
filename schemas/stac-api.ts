import { z } from 'zod';
import { StacCatalogSchema, StacCollectionSchema, StacItemSchema, StacLinkSchema } from './stac.ts';

/**
 * Documents of the STAC API at /stac/api (STAC API 1.0.0) beyond the STAC documents themselves: the landing
 * page, conformance, the Collections list, ItemCollections, the search body and the error body. The official
 * fragments (`../shared/spec-schemas/stac-api`) are the judge; tests/stac-api.test.ts checks answers against them.
 */

/** Most positions an `intersects` geometry may have: a detailed country outline fits, a whole coastline does not. */
export const MAX_INTERSECTS_POSITIONS = 20_000;

/** Error body of the STAC API (its `exception` schema): a code and what to change. */
export const StacApiErrorSchema = z
  .object({
    code: z.string().describe('InvalidParameterValue, NotFound, MethodNotAllowed, PayloadTooLarge or ServerError.'),
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
const LineSchema = z.array(PositionSchema).min(2, 'a line needs at least 2 positions');
const RingSchema = z
  .array(PositionSchema)
  .min(4, 'a polygon ring needs at least 4 positions')
  .refine((ring) => ring[0]!.every((value, axis) => value === ring.at(-1)![axis]), 'a polygon ring must end where it starts');
const PolygonCoordinates = z.array(RingSchema).min(1, 'a polygon needs at least one ring');

const simpleGeometries = [
  z.strictObject({ type: z.literal('Point'), coordinates: PositionSchema }),
  z.strictObject({ type: z.literal('MultiPoint'), coordinates: z.array(PositionSchema) }),
  z.strictObject({ type: z.literal('LineString'), coordinates: LineSchema }),
  z.strictObject({ type: z.literal('MultiLineString'), coordinates: z.array(LineSchema) }),
  z.strictObject({ type: z.literal('Polygon'), coordinates: PolygonCoordinates }),
  z.strictObject({ type: z.literal('MultiPolygon'), coordinates: z.array(PolygonCoordinates) }),
] as const;

/** A GeoJSON geometry (RFC 7946) in WGS84 longitude/latitude: every type, collections not nested. */
export const GeoJsonGeometrySchema = z
  .discriminatedUnion('type', [
    ...simpleGeometries,
    z.strictObject({ type: z.literal('GeometryCollection'), geometries: z.array(z.discriminatedUnion('type', [...simpleGeometries])) }),
  ])
  .refine((geometry) => countPositions(geometry) <= MAX_INTERSECTS_POSITIONS, `must have at most ${MAX_INTERSECTS_POSITIONS} positions; simplify it`)
  .meta({ id: 'GeoJsonGeometry', description: `A GeoJSON geometry in WGS84 longitude/latitude, of at most ${MAX_INTERSECTS_POSITIONS} positions.` });

/** A GeoJSON geometry. */
export type GeoJsonGeometry = z.output<typeof GeoJsonGeometrySchema>;

/** How many positions a geometry has. */
export function countPositions(geometry: { type: string; coordinates?: unknown; geometries?: unknown[] }): number {
  if (geometry.geometries) return geometry.geometries.reduce<number>((sum, part) => sum + countPositions(part as typeof geometry), 0);
  const count = (value: unknown): number => (Array.isArray(value) && Array.isArray(value[0]) ? value.reduce<number>((sum, inner) => sum + count(inner), 0) : 1);
  return geometry.type === 'Point' ? 1 : count(geometry.coordinates);
}

/** One key of a POST sort (the sort extension). */
export const StacSortBySchema = z.strictObject({
  field: z.string().describe('id, collection, datetime (or properties.datetime), title (or properties.title).'),
  direction: z.enum(['asc', 'desc']).default('asc'),
});

/** Body of `POST /stac/api/search`: the GET parameters as JSON, arrays as arrays. */
export const StacSearchBodySchema = z
  .strictObject({
    bbox: z.array(z.number()).describe('[west, south, east, north] or with heights [west, south, min, east, north, max]; west > east crosses ±180°.').optional(),
    intersects: GeoJsonGeometrySchema.optional(),
    datetime: z.string().describe('An RFC 3339 date-time or a date (its whole UTC day), or an interval start/end where .. or an empty end is open (one end only).').optional(),
    ids: z.array(z.string()).describe('Item ids.').optional(),
    collections: z.array(z.string()).describe('Collection ids.').optional(),
    limit: z.int().min(1).describe('Items per page; 10 when omitted, larger than 10000 read as 10000.').optional(),
    q: z.union([z.string(), z.array(z.string())]).describe('Free text: terms (an array, or one string with commas between terms); an Item matches any term, and every word of a term.').optional(),
    sortby: z.array(StacSortBySchema).optional(),
    token: z.string().describe('The token of a next link.').optional(),
  })
  .meta({ id: 'StacSearchBody' });

/** Body of `POST /stac/api/search`. */
export type StacSearchBody = z.output<typeof StacSearchBodySchema>;
/** An ItemCollection. */
export type StacItemCollection = z.infer<typeof StacItemCollectionSchema>;
/** A page of Collections. */
export type StacCollections = z.infer<typeof StacCollectionsSchema>;
/** The landing page. */
export type StacLandingPage = z.infer<typeof StacLandingPageSchema>;
