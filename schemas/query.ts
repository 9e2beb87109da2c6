import { z } from 'zod';

const positiveId = z.number().int().positive();
const encoder = new TextEncoder();
const utf8Length = (text: string) => encoder.encode(text).byteLength;

/** A source a query reads, named in the SQL by `alias`. */
export const SourceReferenceSchema = z
  .strictObject({
    alias: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/).describe('Table name to use in the SQL.'),
    collection_id: positiveId,
    dataset_id: positiveId,
    file_id: positiveId,
    file_source_id: positiveId,
  })
  .meta({ id: 'SourceReference' });

/** Body of `POST /api/queries`. */
export const QueryRequestSchema = z
  .strictObject({
    sources: z.array(SourceReferenceSchema).min(1).max(8),
    sql: z
      .string()
      .min(1)
      .max(8192)
      .refine((sql) => utf8Length(sql) <= 8192, 'must be at most 8192 bytes of UTF-8'),
    limit: z.number().int().min(1).max(1000).default(100).describe('Rows in the first page.'),
    geometry_column: z.string().min(1).optional(),
    result_crs: z.string().min(1).optional().describe('CRS of geometries in rows, e.g. EPSG:3857; default EPSG:4326.'),
  })
  .meta({ id: 'QueryRequest' });

/** Body of `POST /api/queries/{query_id}/pages`. */
export const QueryPageRequestSchema = z
  .strictObject({
    offset: z.number().int().min(0),
    page_size: z.number().int().min(1).max(1000).default(100),
  })
  .meta({ id: 'QueryPageRequest' });

/** A column of a query result. */
export const QueryColumnSchema = z.strictObject({ name: z.string().min(1), type: z.string().min(1), nullable: z.boolean() });

const rowValue = z.union([z.null(), z.boolean(), z.number(), z.string(), z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown()))]);

/**
 * A MapLibre vector source (style specification `VectorSourceSpecification`) for the tiles of a result: pass it
 * to `map.addSource` as it is. The template holds no token; see {@link MapConfigurationSchema}.
 */
export const MapVectorSourceSchema = z
  .strictObject({
    type: z.literal('vector'),
    tiles: z.array(z.string().min(1)).length(1).describe('Tile URL template with {z}, {x} and {y}.'),
    minzoom: z.number().int().min(0).max(24),
    maxzoom: z.number().int().min(0).max(24),
    scheme: z.literal('xyz'),
  })
  .meta({ id: 'MapVectorSource' });

/** How a map draws a query result: the vector source, its layer, and how to send the token with tile requests. */
export const MapConfigurationSchema = z
  .strictObject({
    source: MapVectorSourceSchema,
    source_layer: z.string().min(1).describe('The one layer of every tile ("result"): a style layer\'s source-layer.'),
    geometry_column: z.string().min(1).describe('The result column drawn on the map.'),
    bounds_url: z.url().describe('GET it (with the token) for the WGS84 extent of the whole result, to frame the map.'),
    token_header: z.literal('X-Service-Query-Token').describe('Header that carries the query_token (MapLibre: transformRequest).'),
    token_query_parameter: z.literal('token').describe('Or this query parameter, for clients that cannot set headers.'),
  })
  .meta({ id: 'MapConfiguration' });

/** One page of a query result. */
export const QueryResultSchema = z
  .strictObject({
    columns: z.array(QueryColumnSchema),
    rows: z.array(z.record(z.string(), rowValue)),
    offset: z.number().int().min(0),
    limit: z.number().int().min(1).max(1000),
    returned_count: z.number().int().min(0),
    result_status: z.enum(['rows_returned', 'empty_result', 'empty_page', 'indeterminate']).optional(),
    has_more: z.boolean(),
    next_offset: z.number().int().min(0).optional(),
    warnings: z.array(z.string()),
    elapsed_ms: z.number().min(0),
    bytes_read: z.number().int().min(0),
    files_read: z.number().int().min(0),
    response_truncated: z.boolean(),
    deterministic_order: z.boolean(),
    query_id: z.string().regex(/^[A-Za-z0-9_-]{20,64}$/),
    query_token: z.string().min(1).describe('Send back in X-Service-Query-Token for pages, bounds and tiles.'),
    map_configuration: MapConfigurationSchema.optional(),
  })
  .meta({ id: 'QueryResult' });

/** Body of `GET /api/queries/{query_id}/bounds`. */
export const QueryBoundsSchema = z
  .strictObject({
    bounds: z.tuple([z.number(), z.number(), z.number(), z.number()])
      .describe('WGS84 [west, south, east, north]; west > east when the result crosses the antimeridian (RFC 7946 §5.2): add 360 to east for fitBounds.'),
  })
  .meta({ id: 'QueryBounds' });

/** Error body of query routes. */
export const QueryErrorSchema = z
  .strictObject({ code: z.string().min(1), message: z.string().min(1) })
  .meta({ id: 'QueryError' });

/** A source a query reads. */
export type SourceReference = z.infer<typeof SourceReferenceSchema>;
/** Body of `POST /api/queries`. */
export type QueryRequest = z.infer<typeof QueryRequestSchema>;
/** Body of `POST /api/queries/{query_id}/pages`. */
export type QueryPageRequest = z.infer<typeof QueryPageRequestSchema>;
/** One page of a query result. */
export type QueryResult = z.infer<typeof QueryResultSchema>;
/** The WGS84 extent of a query result. */
export type QueryBounds = z.infer<typeof QueryBoundsSchema>;
/** How a map draws a query result. */
export type MapConfiguration = z.infer<typeof MapConfigurationSchema>;
/** Error body of query routes. */
export type QueryError = z.infer<typeof QueryErrorSchema>;
