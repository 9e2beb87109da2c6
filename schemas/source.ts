import { z } from 'zod';
import { ApiLinkMapSchema, IdSchema, timestampFields } from './common.ts';
import { FileMetadataSchema } from './file-metadata.ts';
import { StorageLocationSchema } from './storage-location.ts';

/** Where a source is: a stored file, or an API that serves it (contract: SourceLocation). */
export const SourceLocationSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('file'),
      version: z.string(),
      path: z.string().describe('Path of the file under its storage location.'),
    }),
    z.object({
      type: z.literal('api'),
      version: z.string(),
      url: z.string().describe('Address of the API that serves this data.'),
      method: z.string().optional().describe('HTTP method to call it with; GET when absent.'),
    }),
  ])
  .meta({ id: 'SourceLocation' });

/** One stored file for a format and version (contract: DatasetSource). */
export const DatasetSourceSchema = z
  .object({
    id: IdSchema,
    file_format_id: IdSchema.optional(),
    storage_location_id: IdSchema.nullable().optional(),
    version: z.union([z.string(), z.number()]).optional(),
    source_type: z.enum(['file', 'api']),
    location: SourceLocationSchema,
    source_metadata: FileMetadataSchema.nullable().optional(),
    url: z.string().nullable().optional().describe('Download address under {storage_base_url}.'),
    storage_uri: z.string().nullable().optional(),
    glob_pattern: z.string().nullable().optional(),
    storage_location: StorageLocationSchema.optional(),
    links: ApiLinkMapSchema.optional(),
    references_source_id: IdSchema.nullable().optional().describe('The source this one was derived from.'),
    ...timestampFields,
  })
  .meta({ id: 'DatasetSource' });

/** One stored file for a format and version. */
export type DatasetSource = z.infer<typeof DatasetSourceSchema>;
/** Where a source is. */
export type SourceLocation = z.infer<typeof SourceLocationSchema>;
