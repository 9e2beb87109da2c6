/**
 * The GeoParquet 1.1 files geoshelf writes (the sample data, `geoshelf convert`): a WKB `geometry` column, a
 * `bbox` covering column STRUCT(xmin, ymin, xmax, ymax DOUBLE), zstd, and `geo` metadata built here.
 *
 * DuckDB 1.5.6's GEOPARQUET_VERSION 'BOTH' writes "version": "1.0.0" metadata without a covering, and adding
 * KV_METADATA {geo: …} to it writes a second `geo` key. So the metadata is written with GEOPARQUET_VERSION 'NONE'
 * (same column encoding as 'BOTH', no metadata of its own) + KV_METADATA.
 */
import { quoteLiteral } from '../sql.ts';
import type { BBox, GeometryType } from './wkb.ts';

/**
 * Parquet writer settings: zstd, and row groups of 16,384 rows, small enough that the bbox statistics of a
 * Hilbert-sorted file let a reader skip most of them, large enough that a range read fetches a useful block.
 */
export const PARQUET_SETTINGS = { compression: 'zstd', compressionLevel: 9, rowGroupSize: 16_384 } as const;

/** The covering of the `geometry` column: the fields of the `bbox` struct column. */
export const BBOX_COVERING = {
  bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] },
} as const satisfies Record<'bbox', Record<'xmin' | 'ymin' | 'xmax' | 'ymax', [string, string]>>;

/** The GeoParquet 1.1 `geo` file metadata of a file geoshelf writes. */
export type GeoMetadata = {
  version: '1.1.0';
  primary_column: 'geometry';
  columns: {
    geometry: {
      encoding: 'WKB';
      geometry_types: GeometryType[];
      bbox: BBox;
      /** PROJJSON; absent means OGC:CRS84 (longitude/latitude on WGS84). */
      crs?: object;
      covering: typeof BBOX_COVERING;
    };
  };
};

/**
 * The `geo` metadata of a file whose geometries have `types` and lie in `bbox`. `crs` (PROJJSON) is omitted for
 * longitude/latitude, which GeoParquet reads as OGC:CRS84.
 */
export function createGeoMetadata(types: GeometryType[], bbox: BBox, crs?: object): GeoMetadata {
  const geometry: GeoMetadata['columns']['geometry'] = { encoding: 'WKB', geometry_types: types, bbox, covering: BBOX_COVERING };
  if (crs !== undefined) geometry.crs = crs;
  return { version: '1.1.0', primary_column: 'geometry', columns: { geometry } };
}

/** How `createGeoParquetCopyOptions` may differ from the defaults. */
export interface GeoParquetCopyOptions {
  /** Rows per row group; PARQUET_SETTINGS.rowGroupSize by default. */
  rowGroupSize?: number;
  /** zstd's level; PARQUET_SETTINGS.compressionLevel by default. */
  compressionLevel?: number;
  /** More file metadata beside `geo`, by key (stac-geoparquet's, for one). */
  metadata?: Record<string, string>;
}

/**
 * The options of DuckDB's `COPY … TO 'file.parquet' (…)` that write GeoParquet 1.1 with `geo` as its metadata.
 * The query's `geometry` column must be GEOMETRY (`st_geomfromwkb`), so that Parquet marks it as such.
 * @example `COPY (SELECT …) TO 'out.parquet' (${createGeoParquetCopyOptions(geo)})`
 */
export function createGeoParquetCopyOptions(geo: GeoMetadata, options: GeoParquetCopyOptions = {}): string {
  const { compression } = PARQUET_SETTINGS;
  const compressionLevel = options.compressionLevel ?? PARQUET_SETTINGS.compressionLevel;
  const rowGroupSize = options.rowGroupSize ?? PARQUET_SETTINGS.rowGroupSize;
  return `FORMAT parquet, COMPRESSION ${compression}, COMPRESSION_LEVEL ${compressionLevel}, ROW_GROUP_SIZE ${rowGroupSize}, ` +
    `GEOPARQUET_VERSION 'NONE', KV_METADATA {${Object.entries({ geo: JSON.stringify(geo), ...options.metadata }).map(([key, value]) => `${quoteLiteral(key)}: ${quoteLiteral(value)}`).join(', ')}}`;
}
