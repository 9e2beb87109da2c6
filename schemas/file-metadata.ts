import { z } from 'zod';
import { ColumnSchemaSchema } from './column.ts';

/**
 * Why a geometry is invalid: `malformed` for bytes that are not one whole WKB geometry, and otherwise the
 * error type GEOS reports by the OGC Simple Features rules (its TopologyValidationError, shared with JTS),
 * in kebab-case. README "The data dictionary" maps each to GEOS's message.
 */
export const InvalidGeometryReasonSchema = z
  .enum([
    'malformed',
    'invalid-coordinate',
    'too-few-points',
    'unclosed-ring',
    'self-intersection',
    'ring-self-intersection',
    'nested-shells',
    'nested-holes',
    'hole-outside-shell',
    'disconnected-interior',
    'duplicate-rings',
    'repeated-point',
    'topology-error',
  ])
  .meta({ id: 'InvalidGeometryReason' });

/** Why a geometry is invalid. */
export type InvalidGeometryReason = z.infer<typeof InvalidGeometryReasonSchema>;

/** Metadata of a stored file (contract: SpatialDatasetFileMetadata). */
export const FileMetadataSchema = z
  .object({
    version: z.string().describe('Version of the stored data this metadata describes.'),
    description: z.string().nullable().optional().describe('What this version holds or changed.'),
    size_bytes: z.number().nullable().optional().describe('Size of the stored file in bytes.'),
    mime_type: z.string().nullable().optional().describe('Media type of the stored file.'),
    feature_count: z.number().nullable().optional().describe('Number of features (rows).'),
    bounds: z
      .tuple([z.number(), z.number(), z.number(), z.number()])
      .nullable()
      .optional()
      .describe('WGS84 extent: [west, south, east, north]. West is greater than east when the data crosses the antimeridian and fits in less than half the globe (RFC 7946 §5.2, as STAC).'),
    geometry_type: z.string().nullable().optional().describe('Geometry type of the primary geometry column.'),
    invalid_geometry_count: z.number().nullable().optional().describe('Features whose geometry is invalid by the OGC Simple Features rules, as GEOS checks them, or is malformed WKB.'),
    invalid_geometry_reasons: z
      .partialRecord(InvalidGeometryReasonSchema, z.number().int().positive())
      .nullable()
      .optional()
      .describe('Invalid geometries by reason (the first problem GEOS finds in each), keys sorted; the counts add up to invalid_geometry_count. Empty when every geometry is valid.'),
    empty_geometry_count: z.number().int().nonnegative().nullable().optional().describe('Features whose geometry is empty (no position). Valid by the OGC rules, but they fail the quality rule, as null geometries do.'),
    quality_check_passed: z.boolean().nullable().optional().describe('Whether the file passed the quality rule.'),
    columns_hash: z.string().nullable().optional().describe('Stable hash of the column names and types.'),
    columns: z.array(ColumnSchemaSchema).optional().describe('Data dictionary; present on the schema route.'),
  })
  .meta({ id: 'SpatialDatasetFileMetadata' });

/** Metadata of a stored file. */
export type FileMetadata = z.infer<typeof FileMetadataSchema>;
