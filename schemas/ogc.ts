import { z } from 'zod';

/**
 * Documents of OGC API - Features Part 1 (Core, GeoJSON) at `/features`, as the standard's OpenAPI building
 * blocks define them (`ogcapi-features-1-oas30.yaml`): the server, the OpenAPI document and the tests use these.
 */

/** A link of an OGC document. */
export const OgcLinkSchema = z
  .object({
    href: z.string().describe('Absolute URL of the target.'),
    rel: z.string().describe('Relation: self, alternate, service-desc, conformance, data, items, next, prev, …'),
    type: z.string().optional().describe('Media type of the target.'),
    title: z.string().optional().describe('What the target is, for people.'),
  })
  .meta({ id: 'OgcLink' });

/** A link of an OGC document. */
export type OgcLink = z.infer<typeof OgcLinkSchema>;

/** `GET /features`: what the API is and where its parts are. */
export const OgcLandingPageSchema = z
  .object({
    title: z.string().describe('Name of the API.'),
    description: z.string().describe('What the API serves.'),
    links: z.array(OgcLinkSchema).describe('self, service-desc, service-doc, conformance and data.'),
  })
  .meta({ id: 'OgcLandingPage' });

/** `GET /features/conformance`: the conformance classes this API implements. */
export const OgcConformanceSchema = z
  .object({ conformsTo: z.array(z.string()).describe('URIs of the conformance classes.') })
  .meta({ id: 'OgcConformance' });

/** A bounding box: [west, south, east, north], west > east when it crosses the antimeridian. */
const BboxSchema = z.array(z.number()).min(4).max(6);

/** Spatial and temporal extent of a collection. */
export const OgcExtentSchema = z
  .object({
    spatial: z.object({
      bbox: z.array(BboxSchema).min(1).describe('The extent of the whole collection first, never across the antimeridian; when the data crosses it, a second box follows with west > east, the precise extent.'),
      crs: z.literal('http://www.opengis.net/def/crs/OGC/1.3/CRS84').describe('Coordinates are WGS 84 longitude/latitude.'),
    }),
    temporal: z
      .object({
        interval: z.array(z.tuple([z.string().nullable(), z.string().nullable()])).min(1).describe('First and last value of the time column (RFC 3339).'),
        trs: z.literal('http://www.opengis.net/def/uom/ISO-8601/0/Gregorian'),
      })
      .optional()
      .describe('Present when the file has a time column (a DATE or TIMESTAMP column of its data dictionary).'),
  })
  .meta({ id: 'OgcExtent' });

/** One feature collection: a file (layer) with a GeoParquet source. */
export const OgcCollectionSchema = z
  .object({
    id: z.string().describe('`{collection}.{dataset}.{file}` slugs.'),
    title: z.string().describe('`<dataset name>: <file name>`.'),
    description: z.string().optional().describe('The file description, else the dataset description.'),
    links: z.array(OgcLinkSchema).describe('items, self, alternate (the web page), describedby (the file document), queryables.'),
    extent: OgcExtentSchema.optional(),
    itemType: z.literal('feature'),
    crs: z.array(z.string()).describe('CRS84 only: geometries are reprojected whatever the stored CRS.'),
  })
  .meta({ id: 'OgcCollection' });

/** An OGC collection document. */
export type OgcCollection = z.infer<typeof OgcCollectionSchema>;

/** `GET /features/collections`. */
export const OgcCollectionsSchema = z
  .object({
    links: z.array(OgcLinkSchema),
    collections: z.array(OgcCollectionSchema),
    numberMatched: z.int().min(0).describe('Collections in all, on every page.'),
    numberReturned: z.int().min(0).describe('Collections on this page.'),
  })
  .meta({ id: 'OgcCollections' });

/** A GeoJSON geometry in CRS84 (RFC 7946). */
const GeometrySchema = z.looseObject({ type: z.string() }).describe('A GeoJSON geometry, WGS 84 longitude/latitude.');

/** One feature: a row of the file. */
export const OgcFeatureSchema = z
  .object({
    type: z.literal('Feature'),
    id: z.int().min(0).describe('Position of the row in the file, from 0: stable for a version of the file.'),
    geometry: GeometrySchema.nullable(),
    properties: z.record(z.string(), z.unknown()).describe('The other columns, as /api/queries returns values.'),
    links: z.array(OgcLinkSchema).optional(),
  })
  .meta({ id: 'OgcFeature' });

/** A feature. */
export type OgcFeature = z.infer<typeof OgcFeatureSchema>;

/** `GET /features/collections/{collectionId}/items`: one page of features. */
export const OgcFeatureCollectionSchema = z
  .object({
    type: z.literal('FeatureCollection'),
    features: z.array(OgcFeatureSchema),
    links: z.array(OgcLinkSchema).describe('self, collection, and next/prev when there are more pages.'),
    timeStamp: z.string().describe('When the answer was made (RFC 3339).'),
    numberMatched: z.int().min(0).optional().describe('Features that match the filters; absent when counting them would not be cheap.'),
    numberReturned: z.int().min(0).describe('Features in this page.'),
  })
  .meta({ id: 'OgcFeatureCollection' });

/** A page of features. */
export type OgcFeatureCollection = z.infer<typeof OgcFeatureCollectionSchema>;

/** `GET /features/collections/{collectionId}/queryables`: a JSON Schema of the properties usable as filters. */
export const OgcQueryablesSchema = z
  .object({
    $schema: z.literal('https://json-schema.org/draft/2020-12/schema'),
    $id: z.string().describe('URL of this document.'),
    type: z.literal('object'),
    title: z.string(),
    properties: z.record(z.string(), z.looseObject({ type: z.string().optional(), format: z.string().optional() })).describe('Each column a filter may name: scalars with their JSON type (`?name=value` filters on them too), dates and timestamps as strings of format date or date-time, and the geometry as format geometry-any.'),
    additionalProperties: z.literal(false),
  })
  .meta({ id: 'OgcQueryables' });

/** The queryables of a collection. */
export type OgcQueryables = z.infer<typeof OgcQueryablesSchema>;

/** An OGC exception: the error body of every /features route. */
export const OgcExceptionSchema = z
  .object({
    code: z.string().describe('Stable error code: invalid_parameter, not_found, query_timeout, query_service_busy, …'),
    description: z.string().describe('What went wrong and what to change.'),
  })
  .meta({ id: 'OgcException' });

/** An OGC exception. */
export type OgcException = z.infer<typeof OgcExceptionSchema>;
