import { z } from 'zod';
import { aboutFields } from '../about.ts';
import { ProseSchema, RecordSlugSchema, RecordTimestampSchema, RecordVersionSchema } from './common.ts';

const tagValue = z
  .string()
  .trim()
  .min(1)
  .regex(/^[^,]+$/, 'must not contain a comma (commas separate tag_filters)');

/** A source record: one stored file (or API) of a format and version. */
export const SourceRecordSchema = z
  .strictObject({
    version: RecordVersionSchema,
    path: z.string().min(1).optional().describe('Path of the file under its storage location; required unless `api` is given.'),
    api: z.strictObject({ url: z.url(), method: z.string().min(1).optional() }).optional().describe('An API that serves this data.'),
    storage_location: RecordSlugSchema.optional().describe('Slug of the storage location; may be left out while storage-locations.yaml defines exactly one.'),
    description: ProseSchema.optional().describe('What this version holds or changed.'),
    references: z
      .string()
      .regex(/^[a-z0-9-]+@.+$/, 'must look like <format>@<version>, e.g. geoparquet@2.0.2')
      .optional()
      .describe('The source of the same file this one was derived from, as <format>@<version>.'),
    glob_pattern: z.string().min(1).optional(),
    updated_at: RecordTimestampSchema.optional(),
  })
  .refine((source) => (source.path === undefined) !== (source.api === undefined), {
    message: 'give exactly one of `path` (a stored file) or `api` (a service URL)',
  });

/** The sources of a file in one format. */
export const FormatSourcesRecordSchema = z.strictObject({
  format: RecordSlugSchema.describe('Slug of a format in formats.yaml.'),
  sources: z.array(SourceRecordSchema).min(1, 'list at least one source'),
});

/** A file or layer of a dataset. */
export const FileRecordSchema = z.strictObject({
  slug: RecordSlugSchema,
  name: ProseSchema,
  description: ProseSchema.optional(),
  layer_name: z.string().min(1).optional().describe('Layer name inside a multi-layer file such as a GeoPackage.'),
  source_file_path: z.string().min(1).optional().describe('Where the data came from upstream.'),
  columns: z
    .record(z.string().min(1), ProseSchema)
    .default({})
    .describe('Column name → what the column holds. Every name must exist in the data.'),
  formats: z.array(FormatSourcesRecordSchema).min(1, 'list at least one format'),
  updated_at: RecordTimestampSchema.optional(),
});

/** A dataset record, one file under `datasets/`. */
export const DatasetRecordSchema = z.strictObject({
  slug: RecordSlugSchema.describe('Path segment of the dataset, unique within its collection.'),
  collection: RecordSlugSchema.describe('Slug of the collection the dataset belongs to.'),
  name: ProseSchema,
  description: ProseSchema.optional(),
  tags: z
    .record(z.string().regex(/^[a-z][a-z0-9_]*$/, 'tag keys are lower_snake_case'), z.union([tagValue, z.array(tagValue).min(1)]))
    .default({})
    .describe('An inventory name plus a `categories` array, or further keys.'),
  files: z.array(FileRecordSchema).min(1, 'list at least one file'),
  updated_at: RecordTimestampSchema.optional(),
  ...aboutFields,
});

/** A dataset record. */
export type DatasetRecord = z.infer<typeof DatasetRecordSchema>;
/** A file record. */
export type FileRecord = z.infer<typeof FileRecordSchema>;
/** A source record. */
export type SourceRecord = z.infer<typeof SourceRecordSchema>;
