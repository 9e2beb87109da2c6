import type { DuckDBDataChunk, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import proj4 from 'proj4';
import type { ResultShape } from './result-shape.ts';
import { createValueConverter, type JsonValue } from './values.ts';

/**
 * What a download format's writer is (query/download-csv.ts, download-geojson.ts, download-parquet.ts):
 * query/export.ts streams a result's chunks through it into the file, in the worker.
 */

/** Turns chunks of rows into the bytes or text of one file format. */
export interface ResultWriter {
  start: () => string;
  write: (chunk: DuckDBDataChunk) => string;
  end: () => Promise<string | Uint8Array>;
  warnings: () => Iterable<string>;
}

/** The result a writer writes. */
export interface WriterInput {
  names: string[];
  types: DuckDBType[];
  shape: ResultShape;
  /** Indexes of the geometry columns: the result's geometry column and every GEOMETRY. */
  geometries: Set<number>;
  /** The CRS the query asked for (`result_crs`); the data is in WGS84 longitude/latitude. */
  resultCrs: string | undefined;
}

/** How one download format is written. */
export interface DownloadWriter {
  /** Refuses a result_crs the format cannot write, in the API process before anything runs. */
  checkCrs?: (resultCrs: string) => void;
  /** Starts the writer of one result. */
  create: (input: WriterInput) => ResultWriter;
}

/** Converts the values of a row, by column, to JSON values. */
export interface RowConverter {
  convert: (values: DuckDBValue[], index: number) => JsonValue;
  /** What the reader should know about the values converted so far, each once. */
  warnings: Set<string>;
}

/**
 * Converts rows for a text format: geometry columns as GeoJSON geometries, reprojected from WGS84 when
 * `resultCrs` is given, lists as plain arrays.
 */
export function createRowConverter(geometries: Set<number>, resultCrs?: string): RowConverter {
  const project = resultCrs !== undefined ? proj4('EPSG:4326', resultCrs).forward : undefined;
  const converter = createValueConverter({ plainLists: true, ...(project ? { project: (position) => project(position) as [number, number] } : {}) });
  return { convert: (values, index) => converter.convert(values[index] ?? null, geometries.has(index)), warnings: converter.warnings };
}
