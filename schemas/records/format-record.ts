import { z } from 'zod';
import { FormatTypeSchema } from '../format.ts';
import { ProseSchema, RecordSlugSchema, RecordTimestampSchema } from './common.ts';

/** A format record, an item of `formats.yaml`. */
export const FormatRecordSchema = z.strictObject({
  slug: RecordSlugSchema.describe('Name that sources use to refer to this format, e.g. geoparquet.'),
  format_type: FormatTypeSchema.describe('One of the contract format types.'),
  name: ProseSchema.describe('Human name, e.g. GeoParquet 1.1.'),
  description: ProseSchema.optional().describe('What the format is good for.'),
  mime_type: z.string().min(1).nullable().default(null).describe('Media type of files in this format.'),
  updated_at: RecordTimestampSchema.optional(),
});


/** A format record. */
export type FormatRecord = z.infer<typeof FormatRecordSchema>;
