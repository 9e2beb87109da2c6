import { z } from 'zod';
import { ApiLinkMapSchema, IdSchema } from './common.ts';
import { CollectionSchema } from './collection.ts';
import { DatasetListItemSchema } from './dataset.ts';
import { FileSummarySchema } from './dataset-file.ts';

/** A dataset under a collection in `GET /api/collections?include=datasets`. */
export const CompactDatasetSchema = z
  .object({
    id: IdSchema,
    slug: z.string(),
    name: z.string(),
    links: ApiLinkMapSchema.optional(),
    files: z.array(FileSummarySchema).optional().describe('Present with include=datasets,files.'),
  })
  .meta({ id: 'CompactDataset' });

/** An item of `GET /api/collections`. */
export const CollectionListItemSchema = CollectionSchema.extend({
  datasets: z.array(CompactDatasetSchema).optional().describe('Present with include=datasets.'),
}).meta({ id: 'CollectionListItem' });

/** Body of `GET /api/collections`. */
export const CollectionListSchema = z.array(CollectionListItemSchema).meta({ id: 'CollectionList' });

/** Body of `GET /api/collections/{slug}`: one page of the collection's datasets. */
export const CollectionDatasetsPageSchema = z
  .object({
    collection: CollectionSchema,
    datasets: z.array(DatasetListItemSchema),
    total: z.number().int().nonnegative().describe('Datasets matching the search and tag filters, over all pages.'),
    limit: z.number().int().positive().nullable(),
    offset: z.number().int().nonnegative(),
    links: ApiLinkMapSchema.optional().describe('self, collection, first, and next/prev when they exist.'),
  })
  .meta({ id: 'CollectionDatasetsPage' });

/** Body of `GET /api/collections/{slug}/datasets/tags`. */
export const TagsResponseSchema = z
  .object({
    links: ApiLinkMapSchema,
    tags: z.record(z.string(), z.array(z.string())).describe('Tag keys mapped to their values, sorted.'),
  })
  .meta({ id: 'TagsResponse' });

/** Body of `GET /api/collections/{slug}`. */
export type CollectionDatasetsPage = z.infer<typeof CollectionDatasetsPageSchema>;
/** An item of `GET /api/collections`. */
export type CollectionListItem = z.infer<typeof CollectionListItemSchema>;
