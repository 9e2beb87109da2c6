import { z } from 'zod';

/** One column a SQL console offers as a completion: its name and DuckDB type, from the data dictionary. */
export const SiteColumnSchema = z.strictObject({
  /** Column name as it appears in SQL. */
  name: z.string().min(1),
  /** Logical type from the data dictionary (`VARCHAR`, `GEOMETRY`, …). */
  type: z.string().min(1),
});

/** One stored version of a file that the query service and the in-browser engine can read. */
export const SiteQueryVersionSchema = z.strictObject({
  /** `file_source_id` of a query source reference. */
  file_source_id: z.number().int().positive(),
  /** Source version label, such as `3.1.0`. */
  version: z.string(),
  /** Format name, such as `GeoParquet 1.1`. */
  format: z.string(),
  /** Where the browser reads the file over HTTP range requests (in-browser preview and SQL). */
  url: z.string().min(1),
  /** File size in bytes; the console offers in-browser SQL below its limit. */
  bytes: z.number().int().min(0).nullable(),
  /** Rows in the file, when known. */
  row_count: z.number().int().min(0).nullable(),
  /** Primary geometry column, when the file has one. */
  geometry_column: z.string().nullable(),
  /** Columns from the data dictionary, for completions. */
  columns: z.array(SiteColumnSchema),
});

/** One file (layer) of a dataset with the versions a query can read. */
export const SiteQueryFileSchema = z.strictObject({
  /** `file_id` of a query source reference. */
  id: z.number().int().positive(),
  slug: z.string(),
  name: z.string(),
  /** Queryable versions, newest first; empty when no stored source is GeoParquet. */
  versions: z.array(SiteQueryVersionSchema),
});

/**
 * `/collections/{c}/datasets/{d}/query-sources.json`: what the SQL console needs to turn "dataset → file →
 * version" into a query source reference, and the columns it completes. Written next to the dataset page.
 */
export const SiteQuerySourcesSchema = z.strictObject({
  collection: z.strictObject({ id: z.number().int().positive(), slug: z.string(), name: z.string() }),
  dataset: z.strictObject({ id: z.number().int().positive(), slug: z.string(), name: z.string() }),
  files: z.array(SiteQueryFileSchema),
});

export type SiteColumn = z.infer<typeof SiteColumnSchema>;
export type SiteQueryVersion = z.infer<typeof SiteQueryVersionSchema>;
export type SiteQueryFile = z.infer<typeof SiteQueryFileSchema>;
export type SiteQuerySources = z.infer<typeof SiteQuerySourcesSchema>;
