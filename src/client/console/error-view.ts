/**
 * The error alert next to the editor: what went wrong in words, where (line and column, or the source it is
 * about), when to retry after a 503, and what to do when no query service answers.
 */
import { locateError, type ErrorLocation } from './error-location.ts';
import type { SqlRange } from './sql-editor.ts';

/** An error of either engine, as the console shows it. */
export interface ConsoleError {
  code: string;
  message: string;
  /** HTTP status from the query service; absent for in-browser errors. */
  status?: number;
  retryAfter?: number | null;
  /** Offset in the SQL, when DuckDB-wasm gave one. */
  position?: number | undefined;
}

/** What the alert can do besides showing the error. */
export interface ErrorViewActions {
  reveal: (range: SqlRange) => void;
  /** Offered when the query service cannot be reached; absent when in-browser SQL cannot run these sources. */
  useBrowser?: () => void;
}

/** Wires the alert region (`[data-error]`, role="alert"); its content is set only when there is an error. */
export function createErrorView(region: HTMLElement) {
  return {
    /** Shows `error` and returns where it points, so the caller can mark the editor and the sources. */
    show(error: ConsoleError, sql: string, aliases: readonly string[], actions: ErrorViewActions): ErrorLocation {
      const location = locateError(error, sql, aliases);
      const title = paragraph(titleOf(error), 'console-error-title');
      const code = document.createElement('code');
      code.textContent = error.code;
      title.append(' ', code);
      const parts: Node[] = [title, paragraph(error.message)];
      if (location.line !== undefined && location.range) {
        const where = paragraph(`At line ${location.line}, column ${location.column}. `);
        where.append(button('Show in the editor', () => actions.reveal(location.range!)));
        parts.push(where);
      }
      if (location.alias !== undefined) parts.push(paragraph(`It concerns the source ${location.alias}, marked in the list of sources.`));
      if (error.code === 'sql_unknown_table' || /Table with name/.test(error.message)) {
        parts.push(paragraph(aliases.length ? `The tables of this query are its sources' aliases: ${aliases.join(', ')}.` : 'Add a source first: its alias is the table name.'));
      }
      if (error.retryAfter !== undefined && error.retryAfter !== null) {
        const at = new Date(Date.now() + error.retryAfter * 1000).toLocaleTimeString();
        parts.push(paragraph(`Try again in ${error.retryAfter} ${error.retryAfter === 1 ? 'second' : 'seconds'} (after ${at}).`));
      }
      if ((error.code === 'network_error' || error.code === 'no_query_service') && actions.useBrowser) {
        const offer = paragraph('The query can run in this browser instead. ');
        offer.append(button('Run in this browser', actions.useBrowser));
        parts.push(offer);
      }
      region.replaceChildren(...parts);
      return location;
    },
    clear(): void {
      region.replaceChildren();
    },
  };
}

function titleOf(error: ConsoleError): string {
  if (error.status === undefined) return 'DuckDB in this browser could not run the query.';
  if (error.status === 0 || error.code === 'no_query_service') return 'The query service could not be reached.';
  if (error.status === 503) return 'The query service is busy.';
  if (error.status === 504) return 'The query ran out of time.';
  if (error.status === 422) return 'The query could not run.';
  if (error.status >= 500) return 'The query service failed.';
  return 'The query was refused.';
}

function paragraph(text: string, className?: string): HTMLParagraphElement {
  const element = document.createElement('p');
  element.textContent = text;
  if (className) element.className = className;
  return element;
}

function button(label: string, onClick: () => void): HTMLButtonElement {
  const element = document.createElement('button');
  element.type = 'button';
  element.textContent = label;
  element.addEventListener('click', onClick);
  return element;
}
