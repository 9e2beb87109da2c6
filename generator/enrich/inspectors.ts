import type { DuckDBInstance } from '@duckdb/node-api';
import { inspectGeoJson, inspectGeoParquet, type DataFacts } from './inspect-data-file.ts';
import { inspectWithGdal } from './inspect-gdal.ts';

/** What an inspector gets besides the file: a folder for scratch files, and the layer its file record names. */
export interface InspectContext {
  scratchDir: string;
  layer: string | null;
}

/**
 * Formats whose files are inspected, and how. GeoJSON is schema-capable when DuckDB's JSON reader reads it;
 * GDAL (gdal3.js) reads a shapefile and a File Geodatabase's layer into GeoJSON for the same inspector.
 */
export const INSPECTORS: Record<string, (instance: DuckDBInstance, path: string, context: InspectContext) => Promise<DataFacts>> = {
  geoparquet: (instance, path) => inspectGeoParquet(instance, path),
  geojson: (instance, path) => inspectGeoJson(instance, path),
  shapefile: (instance, path, context) => inspectWithGdal(instance, path, context.scratchDir, context.layer),
  file_geodatabase: (instance, path, context) => inspectWithGdal(instance, path, context.scratchDir, context.layer),
};

/** Formats whose data is several files: a shapefile's sidecars, a File Geodatabase's folder. */
export const MULTI_FILE = new Set(['shapefile', 'file_geodatabase']);

/** The key of a file's facts in the cache: a geodatabase holds many layers, and its facts are those of one. */
export function factsKey(formatType: string, sha256: string, layer: string | null): string {
  return `${formatType}:${sha256}${formatType === 'file_geodatabase' ? `:${layer}` : ''}`;
}
