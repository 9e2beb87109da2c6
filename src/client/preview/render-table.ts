import type { CellText } from './format-cell.ts';

/** One column heading: the column's name and its Arrow type, short, with the full spelling when cut. */
export interface PreviewColumnHeading {
  name: string;
  type: string;
  typeTitle?: string;
}

/**
 * The previewed rows as plain text, ready for the page: made in the preview's worker (which holds apache-arrow and
 * parquet-wasm) and posted to the page, which only builds the `<table>`.
 */
export interface PreviewTableModel {
  caption: string;
  columns: PreviewColumnHeading[];
  /** One list of cells per row, in column order. */
  rows: CellText[][];
}

/**
 * Replaces `container`'s content with a real `<table>` of the model: a caption, one `<th scope="col">` per column
 * naming it and its type, and a row-number `<th scope="row">`.
 */
export function renderPreviewTable(container: HTMLElement, model: PreviewTableModel): void {
  const element = document.createElement('table');
  element.className = 'preview-rows';
  element.createCaption().textContent = model.caption;
  const header = element.createTHead().insertRow();
  header.append(createHeaderCell('#', 'Row number', 'preview-index'));
  for (const column of model.columns) {
    const cell = createHeaderCell(column.name, null, null);
    const typeLine = document.createElement('span');
    typeLine.className = 'preview-type';
    typeLine.textContent = column.type;
    if (column.typeTitle) typeLine.title = column.typeTitle;
    cell.append(typeLine);
    header.append(cell);
  }
  const body = element.createTBody();
  model.rows.forEach((cells, row) => {
    const line = body.insertRow();
    const number = document.createElement('th');
    number.scope = 'row';
    number.textContent = String(row + 1);
    line.append(number);
    for (const text of cells) appendCell(line, text);
  });
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

function appendCell(line: HTMLTableRowElement, text: CellText): void {
  const cell = line.insertCell();
  cell.textContent = text.text;
  if (text.kind !== 'text' && text.kind !== 'other') cell.className = `preview-${text.kind}`;
  if (text.title) cell.title = text.title;
}
