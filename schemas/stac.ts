import { z } from 'zod';

/**
 * STAC 1.1 documents as geoshelf writes them: the static catalog at /stac and the STAC API at /stac/api share
 * these shapes. They describe what geoshelf emits, not every document STAC allows; the official JSON Schemas
 * (tests/stac-static.test.ts) are the judge of validity.
 */

/** [west, south, east, north] in WGS84; west > east when the box crosses the antimeridian (RFC 7946 §5.2). */
export const StacBboxSchema = z.tuple([z.number(), z.number(), z.number(), z.number()]).meta({ id: 'StacBbox' });

/** A link of a STAC document: always absolute. */
export const StacLinkSchema = z
  .object({
    rel: z.string().describe('Relation: self, root, parent, child, item, collection, items, latest-version, predecessor-version, successor-version, alternate, describedby, …'),
    href: z.string().describe('Absolute URL.'),
    type: z.string().optional().describe('Media type of the target.'),
    title: z.string().optional(),
    method: z.string().optional().describe('HTTP method, on search links of the STAC API.'),
    body: z.unknown().optional().describe('Request body, on POST search links of the STAC API.'),
    merge: z.boolean().optional().describe('On a POST next link: true means merge body into the previous request body (STAC API item search).'),
  })
  .meta({ id: 'StacLink' });

/** A column of the table extension: name, type and the steward's description. */
export const StacTableColumnSchema = z
  .object({ name: z.string(), type: z.string().optional(), description: z.string().optional() })
  .meta({ id: 'StacTableColumn' });

/** A stored file of a source, with the file extension's size and multihash checksum. */
export const StacAssetSchema = z
  .object({
    href: z.string().describe('Absolute download URL (the download-zip route for shapefiles and file geodatabases).'),
    type: z.string().optional().describe('Media type of the file.'),
    title: z.string().optional(),
    description: z.string().optional(),
    roles: z.array(z.string()).optional(),
    'file:size': z.number().int().nonnegative().optional().describe('Size of the file in bytes.'),
    'file:checksum': z.string().regex(/^[a-f0-9]+$/).optional().describe('Multihash of the file: 1220 then its SHA-256 in hex.'),
    'proj:code': z.string().nullable().optional().describe('CRS of the file as AUTHORITY:CODE; null when unknown.'),
  })
  .meta({ id: 'StacAsset' });

/** A GeoJSON geometry of an item footprint: a polygon, the two halves of a box crossing ±180°, or a point. */
export const StacGeometrySchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('Point'), coordinates: z.array(z.number()) }),
    z.object({ type: z.literal('Polygon'), coordinates: z.array(z.array(z.array(z.number()))) }),
    z.object({ type: z.literal('MultiPolygon'), coordinates: z.array(z.array(z.array(z.array(z.number())))) }),
  ])
  .meta({ id: 'StacGeometry' });

/** Properties of an item: common metadata plus the table, projection and version extensions. */
export const StacItemPropertiesSchema = z
  .object({
    title: z.string().optional(),
    description: z.string().min(1).optional(),
    datetime: z.string().describe('When this version of the file was published (RFC 3339, UTC).'),
    created: z.string().optional(),
    updated: z.string().optional(),
    version: z.string().describe('Version of the file this item describes.'),
    'table:columns': z.array(StacTableColumnSchema).optional().describe('The data dictionary.'),
    'table:row_count': z.number().int().nonnegative().optional(),
    'table:primary_geometry': z.string().optional(),
    'proj:code': z.string().nullable().optional(),
  })
  .meta({ id: 'StacItemProperties' });

/** A STAC Item: one version of one file (layer). */
export const StacItemSchema = z
  .object({
    type: z.literal('Feature'),
    stac_version: z.literal('1.1.0'),
    stac_extensions: z.array(z.string()),
    id: z.string(),
    geometry: StacGeometrySchema.nullable(),
    bbox: StacBboxSchema.optional().describe('Absent when the file has no known bounds (geometry is then null).'),
    properties: StacItemPropertiesSchema,
    links: z.array(StacLinkSchema),
    assets: z.record(z.string(), StacAssetSchema),
    collection: z.string(),
  })
  .meta({ id: 'StacItem' });

/** A provider of a collection (STAC common metadata). */
export const StacProviderSchema = z
  .object({ name: z.string(), description: z.string().optional(), roles: z.array(z.string()).optional(), url: z.string().optional() })
  .meta({ id: 'StacProvider' });

/** A STAC Collection: one dataset. */
export const StacCollectionSchema = z
  .object({
    type: z.literal('Collection'),
    stac_version: z.literal('1.1.0'),
    stac_extensions: z.array(z.string()).optional(),
    id: z.string(),
    title: z.string().optional(),
    description: z.string().min(1),
    keywords: z.array(z.string()).optional(),
    license: z.string().describe('SPDX identifier or expression, or `other`.'),
    providers: z.array(StacProviderSchema).optional(),
    extent: z.object({
      spatial: z.object({ bbox: z.array(StacBboxSchema).min(1).describe('The overall box, then one per file when there are two or more. An overall box across the antimeridian is written from -180 to 180, followed by its two halves.') }),
      temporal: z.object({ interval: z.array(z.tuple([z.string().nullable(), z.string().nullable()])).min(1) }),
    }),
    created: z.string().optional(),
    updated: z.string().optional(),
    links: z.array(StacLinkSchema),
  })
  .meta({ id: 'StacCollection' });

/** A STAC Catalog: the root of the static tree, a geoshelf collection, or the STAC API landing page. */
export const StacCatalogSchema = z
  .object({
    type: z.literal('Catalog'),
    stac_version: z.literal('1.1.0'),
    stac_extensions: z.array(z.string()).optional(),
    id: z.string(),
    title: z.string().optional(),
    description: z.string().min(1),
    conformsTo: z.array(z.string()).optional().describe('Conformance classes, on the STAC API landing page.'),
    links: z.array(StacLinkSchema),
  })
  .meta({ id: 'StacCatalog' });

/** A link of a STAC document. */
export type StacLink = z.infer<typeof StacLinkSchema>;
/** An asset of a STAC Item. */
export type StacAsset = z.infer<typeof StacAssetSchema>;
/** A STAC Item footprint. */
export type StacGeometry = z.infer<typeof StacGeometrySchema>;
/** A STAC Item. */
export type StacItem = z.infer<typeof StacItemSchema>;
/** A STAC Collection. */
export type StacCollection = z.infer<typeof StacCollectionSchema>;
/** A STAC Catalog. */
export type StacCatalog = z.infer<typeof StacCatalogSchema>;
/** A bounding box [west, south, east, north]. */
export type StacBbox = z.infer<typeof StacBboxSchema>;
