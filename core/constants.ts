/** Shared constants. Anything a deployer may want to change is a setting in `config.ts` instead. */

/** API version published in the OpenAPI document (contract section 9). */
export const API_VERSION = '1.0.0';

/** Largest request body of the query routes (contract section 8). */
export const MAX_QUERY_BODY_BYTES = 64 * 1024;

/** Default page size of the collection dataset list (contract section 8). */
export const DEFAULT_LIST_LIMIT = 50;

/** Maximum rows of the aggregated `GET /api/datasets` list (contract section 8). */
export const MAX_AGGREGATE_ROWS = 200;

/** Column page size when schema paging is requested without `column_limit`. */
export const DEFAULT_COLUMN_LIMIT = 25;

/** Largest allowed `column_limit` on the schema route. */
export const MAX_COLUMN_LIMIT = 50;

/** Keys of the catalog-wide files a harvester or a bulk user starts from: DCAT, the sitemap index, the downloads. */
export const CATALOG_FILES = {
  dcat: 'dcat.jsonld',
  sitemap: 'sitemap.xml',
  stacItems: 'downloads/stac-items.parquet',
  datasets: 'downloads/datasets.parquet',
} as const;

/** The media type of Parquet (and GeoParquet) files. */
export const PARQUET_TYPE = 'application/vnd.apache.parquet';

/** Files of at least this many bytes get precompressed `.br` and `.gz` siblings (Parquet files never do). */
export const COMPRESS_MIN_BYTES = 1024;

/** Longest canonical query string that still maps to a file; longer ones are computed. */
export const MAX_QUERY_KEY_LENGTH = 180;

/** Folder of `dist/` that holds build internals, never served. */
export const INTERNAL_DIR = '_geoshelf';

/** Folder of a route that holds its query-parameter variants. */
export const QUERY_DIR = '_query';

/** Folder of `dist/api` that holds static Problem documents. */
export const PROBLEM_DIR = '_problems';

/** Dataset slugs that would collide with fixed routes. */
export const RESERVED_DATASET_SLUGS = ['tags'] as const;
/** Collection slugs that would collide with a fixed path: the static STAC catalog is /stac/{collection}, beside the STAC API at /stac/api. */
export const RESERVED_COLLECTION_SLUGS = ['api'] as const;

/** Content type of Problem documents (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Storage backends whose files the build reads remotely, in byte ranges (`runtime/remote-object.ts`). */
export const REMOTE_BACKENDS: ReadonlySet<string> = new Set(['s3', 'http']);
