import { z } from 'zod';
import { IdSchema, timestampFields } from './common.ts';

/** Link between a file (layer) and a format (contract: FileFormat). */
export const FileFormatSchema = z
  .object({
    id: IdSchema,
    format_id: IdSchema,
    file_id: IdSchema.optional(),
    dataset_id: IdSchema.optional(),
    ...timestampFields,
  })
  .meta({ id: 'FileFormat' });

/** Link between a file and a format. */
export type FileFormat = z.infer<typeof FileFormatSchema>;
