import { z } from 'zod';
import { VersionChangesSchema } from './version-changes.ts';
import { ApiLinkMapSchema, IdSchema } from './common.ts';
import { CollectionSchema } from './collection.ts';
import { DatasetSchema } from './dataset.ts';
import { DatasetFileSchema } from './dataset-file.ts';
import { ColumnSchemaSchema } from './column.ts';
import { FileMetadataSchema } from './file-metadata.ts';
import { FormatTypeSchema } from './format.ts';
import { DatasetSourceSchema } from './source.ts';
import { StorageLocationSchema } from './storage-location.ts';

/** Body of the dataset detail route. */
export const DatasetDetailResponseSchema = z
  .object({ links: ApiLinkMapSchema, collection: CollectionSchema, dataset: DatasetSchema })
  .meta({ id: 'DatasetDetailResponse' });

/** Body of the file metadata route. */
export const DatasetFileResponseSchema = z
  .object({
    links: ApiLinkMapSchema,
    collection: CollectionSchema,
    dataset: DatasetSchema.omit({ files: true }),
    file: DatasetFileSchema,
    version_changes: z.array(VersionChangesSchema).optional().describe('What changed from each version of the file to the next, newest first; empty with one version.'),
  })
  .meta({ id: 'DatasetFileResponse' });

const columnPagingFields = {
  total_columns: z.number().int().nonnegative().optional(),
  column_offset: z.number().int().nonnegative().optional(),
  column_limit: z.number().int().min(1).max(50).optional(),
  has_more: z.boolean().optional(),
};

/** Summary of a schema, in camelCase as the contract names it. */
export const SchemaSummarySchema = z
  .object({
    columnCount: z.number(),
    featureCount: z.number().nullable(),
    geometryType: z.string().nullable(),
    invalidGeometryCount: z.number().nullable(),
    qualityCheckPassed: z.boolean().nullable(),
    invalidGeometryReasons: FileMetadataSchema.shape.invalid_geometry_reasons,
    columnsHash: z.string().nullable(),
  })
  .meta({ id: 'SchemaSummary' });

/** The `schema` object of the schema route: the selected source and its data dictionary. */
export const FileSchemaSchema = z
  .object({
    version: z.union([z.string(), z.number()]),
    format_type: FormatTypeSchema,
    format_name: z.string(),
    source_id: IdSchema,
    source: DatasetSourceSchema,
    source_metadata: FileMetadataSchema.nullable(),
    storage_location: StorageLocationSchema.nullable().optional(),
    summary: SchemaSummarySchema,
    columns: z.array(ColumnSchemaSchema),
    ...columnPagingFields,
  })
  .meta({ id: 'FileSchema' });

/** Body of the file schema route. */
export const DatasetFileSchemaResponseSchema = z
  .object({
    links: ApiLinkMapSchema,
    collection: CollectionSchema,
    dataset: DatasetSchema.omit({ files: true }),
    file: z.object({
      id: IdSchema,
      dataset_id: IdSchema,
      slug: z.string(),
      name: z.string(),
      description: z.string().nullable().optional(),
      layer_name: z.string().nullable().optional(),
    }),
    versions: z.array(z.union([z.string(), z.number()])).describe('Versions of this file, newest first.'),
    selected_version: z.union([z.string(), z.number()]).nullable(),
    schema: FileSchemaSchema.nullable(),
    ...columnPagingFields,
  })
  .meta({ id: 'DatasetFileSchemaResponse' });
