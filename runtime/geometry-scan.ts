import type { DuckDBBlobValue, DuckDBConnection } from '@duckdb/node-api';
import { encodeWkb, type Geometry } from '../core/geo/wkb.ts';
import { createExtent, finishExtent, inspectWkb, WKB_TYPE_NAMES, type InvalidReason } from '../core/geo/wkb-inspect.ts';
import { quoteIdentifier } from '../core/sql.ts';

/** What the geometries of a file are: types, invalid ones by reason, and their extent in the file's own CRS. */
export interface GeometryScan {
  types: Record<string, number>;
  invalid: number;
  reasons: Partial<Record<InvalidReason, number>>;
  extent: [number, number, number, number] | null;
}

/** Accumulates inspections into a scan. */
function createScan() {
  const extent = createExtent();
  const scan: GeometryScan = { types: {}, invalid: 0, reasons: {}, extent: null };
  return {
    scan,
    add(bytes: Uint8Array) {
      const { type, invalid } = inspectWkb(bytes, extent);
      const name = WKB_TYPE_NAMES[type] || 'Unknown';
      scan.types[name] = (scan.types[name] ?? 0) + 1;
      if (invalid) {
        scan.invalid++;
        scan.reasons[invalid] = (scan.reasons[invalid] ?? 0) + 1;
      }
    },
    finish() {
      scan.extent = finishExtent(extent);
      return scan;
    },
  };
}

/**
 * Streams a WKB geometry column out of DuckDB (there is no spatial extension) and inspects every geometry in
 * TypeScript. `expression` yields WKB: the column itself, or `st_asbinary(column)` for a GEOMETRY column.
 */
export async function scanWkbColumn(connection: DuckDBConnection, relation: string, expression: string): Promise<GeometryScan> {
  const accumulator = createScan();
  const result = await connection.stream(`SELECT ${expression} FROM ${relation} WHERE ${expression} IS NOT NULL`);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) break;
    const vector = chunk.getColumnVector(0);
    for (let row = 0; row < chunk.rowCount; row++) accumulator.add((vector.getItem(row) as DuckDBBlobValue).bytes);
  }
  return accumulator.finish();
}

/** Inspects GeoJSON geometries given as JSON text, the way `scanWkbColumn` inspects WKB. */
export async function scanGeoJsonColumn(connection: DuckDBConnection, relation: string, column: string): Promise<GeometryScan> {
  const accumulator = createScan();
  const text = `${quoteIdentifier(column)}::VARCHAR`;
  const rows = (await connection.runAndReadAll(`SELECT ${text} FROM ${relation} WHERE ${text} IS NOT NULL AND ${text} <> 'null'`)).getRows();
  for (const [text] of rows) {
    let bytes: Uint8Array;
    try {
      bytes = encodeWkb(JSON.parse(String(text)) as Geometry);
    } catch {
      bytes = new Uint8Array(0);
    }
    accumulator.add(bytes);
  }
  return accumulator.finish();
}
