import { z } from 'zod';
import { IdSchema, timestampFields } from './common.ts';

/** Where stored files live (contract: StorageLocation). */
export const StorageLocationSchema = z
  .object({
    id: IdSchema,
    name: z.string(),
    backend_type: z.string().describe('Kind of storage: http, s3, gcs, local.'),
    slug: z.string().optional(),
    description: z.string().optional(),
    config: z
      .object({
        version: z.string(),
        base_url: z.string().describe('Public address that source paths are appended to.'),
        type: z.string().optional(),
        bucket: z.string().optional(),
        endpoint_url: z.string().optional(),
      })
      .nullable()
      .optional(),
    ...timestampFields,
  })
  .meta({ id: 'StorageLocation' });

/** Where stored files live. */
export type StorageLocation = z.infer<typeof StorageLocationSchema>;
