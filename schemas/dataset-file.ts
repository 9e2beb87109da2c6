import { z } from 'zod';
import { ApiLinkMapSchema, IdSchema, timestampFields } from './common.ts';
import { FileFormatSchema } from './file-format.ts';
import { FileMetadataSchema } from './file-metadata.ts';
import { FormatSchema } from './format.ts';
import { DatasetSourceSchema } from './source.ts';

/** A format of a file with its sources (contract: DatasetFormat). */
export const DatasetFormatSchema = z
  .object({
    format: FormatSchema,
    file_format: FileFormatSchema.optional(),
    dataset_format: FileFormatSchema.optional(),
    sources: z.array(DatasetSourceSchema),
  })
  .meta({ id: 'DatasetFormat' });

/** A file or layer of a dataset (contract: DatasetFile). */
export const DatasetFileSchema = z
  .object({
    id: IdSchema,
    dataset_id: IdSchema,
    name: z.string(),
    slug: z.string(),
    description: z.string().nullable().optional(),
    layer_name: z.string().nullable().optional().describe('Layer name inside a multi-layer file.'),
    source_file_path: z.string().nullable().optional().describe('Where the data came from, e.g. a file in an upstream package.'),
    file_metadata: FileMetadataSchema.nullable().optional().describe('Metadata of the latest schema-capable source.'),
    formats: z.array(DatasetFormatSchema).optional(),
    links: ApiLinkMapSchema.optional(),
    ...timestampFields,
  })
  .meta({ id: 'DatasetFile' });

/** Compact file summary used in listings with `include=files`. */
export const FileSummarySchema = z
  .object({
    id: IdSchema,
    slug: z.string(),
    name: z.string(),
    layer_name: z.string().nullable().optional(),
    format_types: z.array(z.string()).describe('Format types this file is available in.'),
    sources: z
      .array(z.object({ id: IdSchema, format_type: z.string(), version: z.string(), url: z.string().nullable() }))
      .optional()
      .describe('Download addresses; present with include_urls=true.'),
    links: ApiLinkMapSchema.optional(),
  })
  .meta({ id: 'FileSummary' });

/** A file or layer of a dataset. */
export type DatasetFile = z.infer<typeof DatasetFileSchema>;
/** A format of a file with its sources. */
export type DatasetFormat = z.infer<typeof DatasetFormatSchema>;
/** Compact file summary. */
export type FileSummary = z.infer<typeof FileSummarySchema>;
