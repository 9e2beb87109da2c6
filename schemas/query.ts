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
    map_configuration: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'QueryResult' });

/** Body of `GET /api/queries/{query_id}/bounds`. */
export const QueryBoundsSchema = z
  .strictObject({ bounds: z.tuple([z.number(), z.number(), z.number(), z.number()]) })
  .meta({ id: 'QueryBounds' });

/** Error body of query routes. */
export const QueryErrorSchema = z
  .strictObject({ code: z.string().min(1), message: z.string().min(1) })
  .meta({ id: 'QueryError' });

/** Body of `POST /api/queries`. */
export type QueryRequest = z.infer<typeof QueryRequestSchema>;
/** Error body of query routes. */
export type QueryError = z.infer<typeof QueryErrorSchema>;
