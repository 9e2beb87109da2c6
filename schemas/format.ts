import { z } from 'zod';
import { IdSchema, timestampFields } from './common.ts';

/** The format types of the contract. */
export const FORMAT_TYPES = ['geoparquet', 'pmtiles', 'geopackage', 'shapefile', 'geojson', 'file_geodatabase'] as const;

/** One of the contract's format types. */
export const FormatTypeSchema = z.enum(FORMAT_TYPES).meta({ id: 'FormatType' });

/** A data format (contract: Format). */
export const FormatSchema = z
  .object({
    id: IdSchema,
    format_type: FormatTypeSchema,
    name: z.string().describe('Human name, e.g. GeoParquet.'),
    description: z.string().optional(),
    mime_type: z.string().nullable().optional().describe('Media type of files in this format.'),
    ...timestampFields,
  })
  .meta({ id: 'Format' });

/** A data format. */
export type Format = z.infer<typeof FormatSchema>;
/** One of the contract's format types. */
export type FormatType = z.infer<typeof FormatTypeSchema>;
