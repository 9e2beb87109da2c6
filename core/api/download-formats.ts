/**
 * The formats of whole-result downloads (`GET /api/queries/{query_id}/download.{format}`), declared once. A
 * format's key is its file extension and the route's `format`; the route table (./catalog/routes.ts)
 * makes the parameter, its descriptions and its responses from these entries, the download answer sends the
 * content type, and query/export.ts keys its writers by them (the compiler asks for a writer of each).
 * Browser-safe, and a leaf: it imports nothing.
 */

/** How a download format is named and sent. */
export interface DownloadFormatSpec {
  /** The Content-Type of the file. */
  contentType: string;
  /** The file as the route's description names it: its standard and how it writes geometries. */
  title: string;
  /** What the extension stands for, when it does not say it (written after it in the `format` parameter's description). */
  standard?: string;
}

const FORMATS = {
  parquet: { contentType: 'application/vnd.apache.parquet', title: 'GeoParquet 1.1', standard: 'GeoParquet 1.1' },
  geojson: { contentType: 'application/geo+json', title: 'GeoJSON (RFC 7946, always longitude/latitude)' },
  csv: { contentType: 'text/csv; charset=utf-8; header=present', title: 'CSV (RFC 4180, geometries as WKT)' },
} as const satisfies Record<string, DownloadFormatSpec>;

/** A download format. */
export type DownloadFormat = keyof typeof FORMATS;

/** Every download format, in the order the route lists them; the first is the route's main content type. */
export const DOWNLOAD_FORMATS: Readonly<Record<DownloadFormat, DownloadFormatSpec>> = FORMATS;

/** The download formats' names, in order (for an enum schema). */
export const DOWNLOAD_FORMAT_NAMES = Object.keys(DOWNLOAD_FORMATS) as [DownloadFormat, ...DownloadFormat[]];
