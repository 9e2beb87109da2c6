/**
 * One page of a result on screen, the same for both engines: a summary in words (rows, time, whether more
 * follow, truncation, warnings), the pager, and a table with each column's name and type.
 */
import { formatBytes } from '../../format.ts';
import { formatCell } from './format-value.ts';

/** A result column: its name and the type its engine reports. */
export interface ResultColumn {
  name: string;
  type: string;
}

/** A page of a result, whichever engine ran it. */
export interface ResultPage {
  engine: 'server' | 'browser';
  columns: ResultColumn[];
  /** Values in column order (names can repeat in SQL, so rows are not keyed by name). */
  rows: unknown[][];
  offset: number;
  pageSize: number;
  hasMore: boolean;
  nextOffset: number;
  /** Rows in the whole result, when the engine knows (in the browser). */
  totalRows: number | null;
  elapsedMs: number;
  responseTruncated: boolean;
  warnings: string[];
  resultStatus?: string;
  bytesRead?: number;
  filesRead?: number;
}

/** Wires the result section inside `root`; `onPage` hears Previous (-1) and Next (+1). */
export function createResultView(root: HTMLElement, onPage: (direction: -1 | 1) => void) {
  const find = <T extends Element>(selector: string) => root.querySelector<T>(selector)!;
  const section = find<HTMLElement>('[data-results]');
  const summary = find<HTMLElement>('[data-summary]');
  const warnings = find<HTMLUListElement>('[data-warnings]');
  const table = find<HTMLTableElement>('[data-table]');
  const previous = find<HTMLButtonElement>('[data-prev]');
  const next = find<HTMLButtonElement>('[data-next]');
  const pageLabel = find<HTMLElement>('[data-page-label]');
  previous.addEventListener('click', () => onPage(-1));
  next.addEventListener('click', () => onPage(1));

  return {
    /** Shows a page; `canGoBack` says whether an earlier page exists. */
    show(page: ResultPage, canGoBack: boolean): void {
      section.hidden = false;
      summary.textContent = describePage(page);
      warnings.replaceChildren(...page.warnings.map((warning) => Object.assign(document.createElement('li'), { textContent: warning })));
      warnings.hidden = page.warnings.length === 0;
      previous.disabled = !canGoBack;
      next.disabled = !page.hasMore;
      pageLabel.textContent = page.rows.length === 0 ? `No rows from row ${page.offset + 1}` : `Rows ${page.offset + 1}–${page.offset + page.rows.length}`;
      renderTable(table, page);
    },
    /** Disables the pager while a page loads. */
    busy(): void {
      previous.disabled = true;
      next.disabled = true;
    },
    hide(): void {
      section.hidden = true;
    },
  };
}

/** The page in words, for the summary and the live region. */
export function describePage(page: ResultPage): string {
  const count = page.rows.length;
  const where = page.engine === 'server' ? 'on the query service' : 'in this browser';
  const parts: string[] = [];
  if (page.resultStatus === 'empty_result' || (count === 0 && page.offset === 0)) parts.push(`The query returned no rows (${formatMs(page.elapsedMs)} ${where}).`);
  else if (count === 0) parts.push(`No rows on this page: the result ends before row ${page.offset + 1}.`);
  else {
    const total = page.totalRows === null ? '' : ` of ${page.totalRows.toLocaleString('en')}`;
    parts.push(`Rows ${page.offset + 1}–${page.offset + count}${total} (${count} ${count === 1 ? 'row' : 'rows'}) in ${formatMs(page.elapsedMs)} ${where}.`);
  }
  if (page.bytesRead !== undefined && page.filesRead !== undefined) parts.push(`Read ${formatBytes(page.bytesRead)} from ${page.filesRead} ${page.filesRead === 1 ? 'file' : 'files'}.`);
  if (page.responseTruncated) parts.push('This page was cut short to keep the response under its size cap; Next page goes on from the last row shown.');
  if (page.hasMore) parts.push('More rows follow.');
  else if (count > 0 && page.offset > 0) parts.push('This is the last page.');
  else if (count > 0) parts.push('That is the whole result.');
  return parts.join(' ');
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function renderTable(table: HTMLTableElement, page: ResultPage): void {
  const caption = table.createCaption();
  caption.textContent = page.rows.length === 0
    ? 'Result: no rows'
    : `Result rows ${page.offset + 1} to ${page.offset + page.rows.length}, ${page.columns.length} ${page.columns.length === 1 ? 'column' : 'columns'}`;
  const head = document.createElement('thead');
  const headRow = head.insertRow();
  headRow.append(headerCell('#', 'row number'));
  for (const column of page.columns) headRow.append(headerCell(column.name, column.type));
  const body = document.createElement('tbody');
  page.rows.forEach((values, index) => {
    const row = body.insertRow();
    const number = document.createElement('th');
    number.scope = 'row';
    number.textContent = String(page.offset + index + 1);
    row.append(number);
    for (const value of values) {
      const cell = row.insertCell();
      const { text, full, isNull } = formatCell(value);
      cell.textContent = text;
      if (full !== undefined) cell.title = full;
      if (isNull) cell.className = 'console-null';
      else if (typeof value === 'number' || typeof value === 'bigint') cell.className = 'console-number';
    }
  });
  table.tHead?.remove();
  for (const old of [...table.tBodies]) old.remove();
  table.append(head, body);
}

function headerCell(name: string, type: string): HTMLTableCellElement {
  const cell = document.createElement('th');
  cell.scope = 'col';
  const label = document.createElement('span');
  label.className = 'console-column-name';
  label.textContent = name;
  const kind = document.createElement('span');
  kind.className = 'console-column-type';
  kind.textContent = type;
  cell.append(label, ' ', kind);
  return cell;
}
