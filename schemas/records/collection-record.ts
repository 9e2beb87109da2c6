import { z } from 'zod';
import { aboutFields } from '../about.ts';
import { ProseSchema, RecordSlugSchema, RecordTimestampSchema } from './common.ts';

/** A collection record, one file under `collections/`. */
export const CollectionRecordSchema = z.strictObject({
  slug: RecordSlugSchema.describe('Path segment of the collection, e.g. natural-earth.'),
  name: ProseSchema.describe('Human name of the collection.'),
  description: ProseSchema.optional().describe('What the collection gathers and where it comes from.'),
  updated_at: RecordTimestampSchema.optional().describe('When a steward last changed the record; defaults to when it got its id.'),
  // The licence, providers and citation are those of every dataset of the collection that gives none of its own.
  ...aboutFields,
});

/** A collection record. */
export type CollectionRecord = z.infer<typeof CollectionRecordSchema>;
