/**
 * The in-memory shape every converter produces and every writer consumes:
 * typed attribute columns plus one geometry per row, in source order.
 */
import { bboxOfGeometry, WKB_TYPE_CODES } from '../../core/geo/wkb.ts';
import type { BBox, Geometry, GeometryType } from '../../core/geo/wkb.ts';

/** The DuckDB type of an attribute column. */
export type ColumnType = 'VARCHAR' | 'INTEGER' | 'BIGINT' | 'DOUBLE';

/** One attribute column; the description goes into the data README. */
export type ColumnSpec = { name: string; type: ColumnType; description: string };

/** One attribute value; null is written as SQL NULL. */
export type CellValue = string | number | null;

/** One feature: attribute values in column order, and its geometry. */
export type FeatureRow = { values: CellValue[]; geometry: Geometry };

/** A table of features; `notes` record repairs made to the source data. */
export type FeatureTable = { columns: ColumnSpec[]; rows: FeatureRow[]; notes: string[] };

/** Builds a table, checking that every row has one value per column. */
export function createTable(columns: ColumnSpec[], rows: FeatureRow[], notes: string[] = []): FeatureTable {
  for (const [index, row] of rows.entries()) {
    if (row.values.length !== columns.length) {
      throw new Error(`row ${index} has ${row.values.length} values for ${columns.length} columns`);
    }
  }
  return { columns, rows, notes };
}

/** The bounding box of a row's geometry; an empty geometry is an error here. */
export function bboxOfRow(row: FeatureRow): BBox {
  const box = bboxOfGeometry(row.geometry);
  if (box === null) throw new Error(`empty ${row.geometry.type} in row ${JSON.stringify(row.values)}`);
  return box;
}

/** The union of all row bounding boxes, or null for an empty table. */
export function bboxOfTable(table: FeatureTable): BBox | null {
  if (table.rows.length === 0) return null;
  const union: BBox = [Infinity, Infinity, -Infinity, -Infinity];
  for (const row of table.rows) {
    const box = bboxOfRow(row);
    union[0] = Math.min(union[0], box[0]);
    union[1] = Math.min(union[1], box[1]);
    union[2] = Math.max(union[2], box[2]);
    union[3] = Math.max(union[3], box[3]);
  }
  return union;
}

/** The distinct geometry types of a table, in WKB type-code order. */
export function listGeometryTypes(table: FeatureTable): GeometryType[] {
  const seen = new Set(table.rows.map((row) => row.geometry.type));
  return [...seen].sort((a, b) => WKB_TYPE_CODES[a] - WKB_TYPE_CODES[b]);
}

/** Counts the nulls of each column, for the build log and the README. */
export function countNulls(table: FeatureTable): Record<string, number> {
  const counts: Record<string, number> = {};
  table.columns.forEach((column, index) => {
    counts[column.name] = table.rows.filter((row) => row.values[index] === null).length;
  });
  return counts;
}
