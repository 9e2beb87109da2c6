import type { Table } from 'apache-arrow';
import type { Geometry } from '../../../core/geo/wkb.ts';
import { describeColumnType, formatCell, type CellText } from './format-cell.ts';
import { describeGeometryBounds, summarizeGeometry } from './geometry-summary.ts';
import type { PreviewColumnHeading, PreviewTableModel } from './render-table.ts';

/** What the table shows besides the Arrow rows: its caption and the decoded geometry column. */
export interface PreviewTableOptions {
  caption: string;
  /** The WKB column whose cells show a geometry summary instead of bytes. */
  geometryColumn: string | null;
  /** The decoded geometries of that column, one per row (null: a null value or unreadable bytes). */
  geometries: (Geometry | null)[] | null;
}

/**
 * Every row and column of `table` as text: one heading per column naming it and its Arrow type, numbers marked
 * for right alignment, nulls as a muted "null", long text cut with the whole value in a title, the geometry
 * column as a WKT-like summary and bounding-box structs compactly.
 */
export function tabulatePreview(table: Table, options: PreviewTableOptions): PreviewTableModel {
  const fields = table.schema.fields;
  const vectors = fields.map((_, index) => table.getChildAt(index));
  const columns = fields.map((field): PreviewColumnHeading => {
    const type = describeColumnType(field, field.name === options.geometryColumn);
    return { name: field.name, type: type.text, ...(type.title ? { typeTitle: type.title } : {}) };
  });
  const rows: CellText[][] = [];
  for (let row = 0; row < table.numRows; row++) {
    rows.push(fields.map((field, index) => {
      const value: unknown = vectors[index]?.get(row);
      return field.name === options.geometryColumn ? formatGeometryCell(value, options.geometries?.[row] ?? null) : formatCell(value, field);
    }));
  }
  return { caption: options.caption, columns, rows };
}

function formatGeometryCell(value: unknown, geometry: Geometry | null): CellText {
  if (value === null || value === undefined) return { text: 'null', kind: 'null' };
  if (!geometry) return { text: 'unreadable WKB', title: 'These bytes are not well-known binary geometry.', kind: 'geometry' };
  return { text: summarizeGeometry(geometry), title: describeGeometryBounds(geometry), kind: 'geometry' };
}

