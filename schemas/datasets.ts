import { z } from 'zod';
import { ApiLinkMapSchema, IdSchema } from './common.ts';
import { DatasetSchema } from './dataset.ts';

/** An item of `GET /api/datasets`. */
export const DatasetAggregateItemSchema = z
  .object({
    id: IdSchema,
    slug: z.string(),
    name: z.string(),
    collection_id: IdSchema,
    collection_slug: z.string(),
    links: ApiLinkMapSchema.optional(),
  })
  .meta({ id: 'DatasetAggregateItem' });

/** Body of `GET /api/datasets`: at most 200 datasets across collections. */
export const DatasetAggregateListSchema = z.array(DatasetAggregateItemSchema).max(200).meta({ id: 'DatasetAggregateList' });

/** Body of `GET /api/datasets/{id}`. */
export const DatasetByIdResponseSchema = z
  .object({
    links: z.object({ self: z.string(), collection: z.string().optional() }).catchall(z.string()),
    dataset: DatasetSchema,
  })
  .meta({ id: 'DatasetByIdResponse' });

/** Body of `GET /api/datasets/stats`. */
export const DatasetStatsSchema = z
  .object({
    total: z.number().int().nonnegative().describe('Datasets in the catalog.'),
    ready: z.number().int().nonnegative().optional().describe('Datasets whose every file has a source with computed metadata.'),
    links: ApiLinkMapSchema.optional(),
  })
  .meta({ id: 'DatasetStats' });
