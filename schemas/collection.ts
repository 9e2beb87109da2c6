import { z } from 'zod';
import { aboutFields } from './about.ts';
import { ApiLinkMapSchema, IdSchema, timestampFields } from './common.ts';

/** A collection of datasets (contract: Collection). */
export const CollectionSchema = z
  .object({
    id: IdSchema,
    slug: z.string(),
    name: z.string(),
    description: z.string().optional(),
    dataset_count: z.number().int().nonnegative().optional().describe('Datasets in the collection.'),
    links: ApiLinkMapSchema.optional(),
    ...timestampFields,
    ...aboutFields,
  })
  .meta({ id: 'Collection' });

/** A collection of datasets. */
export type Collection = z.infer<typeof CollectionSchema>;
