import { z } from 'zod';
import { ColumnSchemaSchema } from './column.ts';

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
      .describe('WGS84 extent: [west, south, east, north].'),
    geometry_type: z.string().nullable().optional().describe('Geometry type of the primary geometry column.'),
    invalid_geometry_count: z.number().nullable().optional().describe('Features whose geometry is invalid.'),
    quality_check_passed: z.boolean().nullable().optional().describe('Whether the file passed the quality rule.'),
    columns_hash: z.string().nullable().optional().describe('Stable hash of the column names and types.'),
    columns: z.array(ColumnSchemaSchema).optional().describe('Data dictionary; present on the schema route.'),
  })
  .meta({ id: 'SpatialDatasetFileMetadata' });

/** Metadata of a stored file. */
export type FileMetadata = z.infer<typeof FileMetadataSchema>;
