import { z } from 'zod';
import { aboutFields } from './about.ts';
import { ApiLinkMapSchema, IdSchema, timestampFields } from './common.ts';
import { DatasetFileSchema, FileSummarySchema } from './dataset-file.ts';

/** Tags of a dataset: an inventory name and a `categories` array, or further keys (contract: DatasetTags). */
export const DatasetTagsSchema = z
  .record(z.string(), z.union([z.string(), z.array(z.string())]))
  .meta({ id: 'DatasetTags' });

const datasetFields = {
  id: IdSchema,
  slug: z.string(),
  name: z.string(),
  description: z.string().optional(),
  collection_id: IdSchema.optional(),
  tags: DatasetTagsSchema.optional(),
  ...timestampFields,
  links: ApiLinkMapSchema.optional(),
};

/**
 * A dataset with its files, as in dataset detail (contract: Dataset). Detail documents add what the record says
 * about the data (licence, providers, citation, DOI, keywords, temporal coverage); listings leave it out.
 */
export const DatasetSchema = z
  .object({ ...datasetFields, ...aboutFields, files: z.array(DatasetFileSchema).optional() })
  .meta({ id: 'Dataset' });

/** A dataset as a listing item: compact file summaries instead of full files. */
export const DatasetListItemSchema = z
  .object({
    ...datasetFields,
    file_count: z.number().int().nonnegative().describe('Files (layers) in the dataset.'),
    files: z.array(FileSummarySchema).optional().describe('Present with include=files or include_urls=true.'),
  })
  .meta({ id: 'DatasetListItem' });

/** A dataset. */
export type Dataset = z.infer<typeof DatasetSchema>;
/** Tags of a dataset. */
export type DatasetTags = z.infer<typeof DatasetTagsSchema>;
/** A dataset as a listing item. */
export type DatasetListItem = z.infer<typeof DatasetListItemSchema>;
