import type { DuckDBBlobValue, DuckDBBlobVector, DuckDBConnection } from '@duckdb/node-api';
import { encodeWkb, type Geometry } from '../core/geo/wkb.ts';
import { createExtent, finishExtent, finishLonLatExtent, inspectWkb, isProvenValid, WKB_TYPE_NAMES, type Extent } from '../core/geo/wkb-inspect.ts';
import { quoteIdentifier } from '../core/sql.ts';
import type { InvalidGeometryReason } from '../schemas/file-metadata.ts';
import { loadGeometryValidator, type GeometryValidator } from './geometry-validity.ts';

/** What the geometries of a file are: types, invalid ones by reason, empty ones, and their extent. */
export interface GeometryScan {
  types: Record<string, number>;
  /** Invalid geometries: malformed WKB, and, when `validity` was asked for, every geometry GEOS calls invalid. */
  invalid: number;
  reasons: Partial<Record<InvalidGeometryReason, number>>;
  /** Geometries with no position; valid by the OGC rules. */
  empty: number;
  /** The planar extent [xmin, ymin, xmax, ymax] in the file's own CRS; null when no finite coordinate was seen. */
  extent: [number, number, number, number] | null;
  /**
   * The extent read as longitude/latitude [west, south, east, north], west > east when the geometries straddle
   * ±180° (`finishLonLatExtent`); only meaningful when the CRS is longitude/latitude.
   */
  lonLatExtent: [number, number, number, number] | null;
}

/** Options of a geometry scan. */
export interface ScanOptions {
  /** Check every geometry's validity with GEOS (the data dictionary); bounds alone do not need it. */
  validity?: boolean;
  /** An extent to grow instead of a new one, e.g. already holding the rows a bbox covering answered for. */
  extent?: Extent;
}

/**
 * Accumulates inspections into a scan: `add` inspects a geometry and says whether it still needs GEOS's
 * verdict, which `check` then gets. The common case (a point) stays synchronous.
 */
function createScan(options: ScanOptions) {
  const extent = options.extent ?? createExtent();
  const scan: GeometryScan = { types: {}, invalid: 0, reasons: {}, empty: 0, extent: null, lonLatExtent: null };
  let validator: GeometryValidator | undefined;
  const count = (reason: InvalidGeometryReason) => {
    scan.invalid++;
    scan.reasons[reason] = (scan.reasons[reason] ?? 0) + 1;
  };
  return {
    scan,
    add(bytes: Uint8Array): boolean {
      const inspection = inspectWkb(bytes, extent);
      const name = WKB_TYPE_NAMES[inspection.type] || 'Unknown';
      scan.types[name] = (scan.types[name] ?? 0) + 1;
      if (inspection.empty) scan.empty++;
      if (inspection.invalid) {
        count(inspection.invalid);
        return false;
      }
      return options.validity === true && !isProvenValid(inspection);
    },
    async check(bytes: Uint8Array): Promise<void> {
      // GEOS is loaded on the first geometry that needs it: a file of points never loads it.
      validator ??= await loadGeometryValidator();
      const reason = validator.check(bytes);
      if (reason) count(reason);
    },
    finish() {
      scan.extent = finishExtent(extent);
      scan.lonLatExtent = finishLonLatExtent(extent);
      return scan;
    },
  };
}

/**
 * Streams a WKB geometry column out of DuckDB (there is no spatial extension) and inspects every geometry in
 * TypeScript. `expression` yields WKB: the column itself, or `st_asbinary(column)` for a GEOMETRY column. A
 * BLOB's bytes are read without the copy `getItem` makes (a scan of 10M points: 8 s against 9.5 s).
 */
export async function scanWkbColumn(connection: DuckDBConnection, relation: string, expression: string, options: ScanOptions = {}): Promise<GeometryScan> {
  const accumulator = createScan(options);
  const result = await connection.stream(`SELECT ${expression} FROM ${relation} WHERE ${expression} IS NOT NULL`);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const vector = chunk.getColumnVector(0);
    const bytesAt = 'getItemBytes' in vector
      ? (row: number) => (vector as DuckDBBlobVector).getItemBytes(row)!
      : (row: number) => (vector.getItem(row) as DuckDBBlobValue).bytes;
    for (let row = 0; row < chunk.rowCount; row++) {
      const bytes = bytesAt(row);
      if (accumulator.add(bytes)) await accumulator.check(bytes);
    }
  }
  return accumulator.finish();
}

/** Inspects GeoJSON geometries given as JSON text, the way `scanWkbColumn` inspects WKB. */
export async function scanGeoJsonColumn(connection: DuckDBConnection, relation: string, column: string, options: ScanOptions = {}): Promise<GeometryScan> {
  const accumulator = createScan(options);
  const text = `${quoteIdentifier(column)}::VARCHAR`;
  const rows = (await connection.runAndReadAll(`SELECT ${text} FROM ${relation} WHERE ${text} IS NOT NULL AND ${text} <> 'null'`)).getRows();
  for (const [text] of rows) {
    let bytes: Uint8Array;
    try {
      bytes = encodeWkb(JSON.parse(String(text)) as Geometry);
    } catch {
      bytes = new Uint8Array(0);
    }
    if (accumulator.add(bytes)) await accumulator.check(bytes);
  }
  return accumulator.finish();
}
