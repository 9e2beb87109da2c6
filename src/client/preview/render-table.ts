import type { Table } from 'apache-arrow';
import type { Geometry } from '../../../core/geo/wkb.ts';
import { describeColumnType, formatCell, type CellText } from './format-cell.ts';
import { describeGeometryBounds, summarizeGeometry } from './geometry-summary.ts';

/** What the table shows besides the Arrow rows: its caption and the decoded geometry column. */
export interface PreviewTableOptions {
  caption: string;
  /** The WKB column whose cells show a geometry summary instead of bytes. */
  geometryColumn: string | null;
  /** The decoded geometries of that column, one per row (null: a null value or unreadable bytes). */
  geometries: (Geometry | null)[] | null;
}

/**
 * Replaces `container`'s content with a real `<table>` of every row and column of `table`: a caption,
 * one `<th scope="col">` per column naming it and its Arrow type, and a row-number `<th scope="row">`.
 * Numbers are marked for right alignment, nulls as a muted "null", long text is cut with the whole value
 * in a title, the geometry column reads as a WKT-like summary and bounding-box structs compactly.
 */
export function renderPreviewTable(container: HTMLElement, table: Table, options: PreviewTableOptions): void {
  const fields = table.schema.fields;
  const columns = fields.map((_, index) => table.getChildAt(index));
  const element = document.createElement('table');
  element.className = 'preview-rows';
  element.createCaption().textContent = options.caption;
  const header = element.createTHead().insertRow();
  header.append(createHeaderCell('#', 'Row number', 'preview-index'));
  for (const field of fields) {
    const cell = createHeaderCell(field.name, null, null);
    const type = describeColumnType(field, field.name === options.geometryColumn);
    const typeLine = document.createElement('span');
    typeLine.className = 'preview-type';
    typeLine.textContent = type.text;
    if (type.title) typeLine.title = type.title;
    cell.append(typeLine);
    header.append(cell);
  }
  const body = element.createTBody();
  for (let row = 0; row < table.numRows; row++) {
    const line = body.insertRow();
    const number = document.createElement('th');
    number.scope = 'row';
    number.textContent = String(row + 1);
    line.append(number);
    fields.forEach((field, index) => {
      const value: unknown = columns[index]?.get(row);
      const text = field.name === options.geometryColumn ? formatGeometryCell(value, options.geometries?.[row] ?? null) : formatCell(value, field);
      appendCell(line, text);
    });
  }
  container.replaceChildren(element);
  // The table scrolls inside its container, so keyboard users must be able to focus it to scroll.
  container.tabIndex = 0;
}

function createHeaderCell(name: string, title: string | null, className: string | null): HTMLTableCellElement {
  const cell = document.createElement('th');
  cell.scope = 'col';
  if (className) cell.className = className;
  if (title) cell.title = title;
  const label = document.createElement('span');
  label.className = 'preview-name';
  label.textContent = name;
  cell.append(label);
  return cell;
}

function formatGeometryCell(value: unknown, geometry: Geometry | null): CellText {
  if (value === null || value === undefined) return { text: 'null', kind: 'null' };
  if (!geometry) return { text: 'unreadable WKB', title: 'These bytes are not well-known binary geometry.', kind: 'geometry' };
  return { text: summarizeGeometry(geometry), title: describeGeometryBounds(geometry), kind: 'geometry' };
}

function appendCell(line: HTMLTableRowElement, text: CellText): void {
  const cell = line.insertCell();
  cell.textContent = text.text;
  if (text.kind !== 'text' && text.kind !== 'other') cell.className = `preview-${text.kind}`;
  if (text.title) cell.title = text.title;
}
