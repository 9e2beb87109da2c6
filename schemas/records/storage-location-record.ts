import { z } from 'zod';
import { ProseSchema, RecordSlugSchema, RecordTimestampSchema } from './common.ts';

/** A storage location record, an item of `storage-locations.yaml`. */
export const StorageLocationRecordSchema = z.strictObject({
  slug: RecordSlugSchema.describe('Name that sources use to refer to this location.'),
  name: ProseSchema,
  backend_type: z.enum(['http', 's3', 'gcs', 'azure', 'local']).describe('Kind of storage.'),
  description: ProseSchema.optional(),
  base_url: z
    .string()
    .min(1)
    .default('{storage_base_url}')
    .describe('Public address that source paths are appended to; `{storage_base_url}` is replaced by that setting.'),
  bucket: z.string().min(1).optional(),
  endpoint_url: z.string().min(1).optional(),
  updated_at: RecordTimestampSchema.optional(),
});


/** A storage location record. */
export type StorageLocationRecord = z.infer<typeof StorageLocationRecordSchema>;
