/**
 * A result being browsed, whichever engine made it: its current page, the way back (the offsets of earlier
 * pages, since a cut-short page can hold fewer rows than asked), and how to fetch another page.
 */
import type { QueryResult } from '../../../schemas/query.ts';
import type { QueryClient } from './query-client.ts';
import type { ResultPage } from './result-view.ts';

/** A result and the pages seen so far. */
export interface ResultCursor {
  page: ResultPage;
  /** Offsets of the pages before this one, latest last. */
  earlier: number[];
  fetch(offset: number): Promise<ResultPage>;
}

/** A page of a query service result in the console's shape. */
export function toResultPage(result: QueryResult, pageSize: number): ResultPage {
  return {
    engine: 'server',
    columns: result.columns.map(({ name, type }) => ({ name, type })),
    rows: result.rows.map((row) => result.columns.map((column) => row[column.name] ?? null)),
    offset: result.offset,
    pageSize,
    hasMore: result.has_more,
    nextOffset: result.next_offset ?? result.offset + result.returned_count,
    totalRows: null,
    elapsedMs: result.elapsed_ms,
    responseTruncated: result.response_truncated,
    warnings: result.warnings,
    ...(result.result_status === undefined ? {} : { resultStatus: result.result_status }),
    bytesRead: result.bytes_read,
    filesRead: result.files_read,
  };
}

/** A cursor over a query service result; pages are fetched with its token. */
export function createServerCursor(client: QueryClient, first: QueryResult, pageSize: number): ResultCursor {
  return {
    page: toResultPage(first, pageSize),
    earlier: [],
    fetch: async (offset) => toResultPage(await client.page(first, offset, pageSize), pageSize),
  };
}

/** Moves `cursor` one page back or forth; resolves to false when there is no such page. */
export async function turnPage(cursor: ResultCursor, direction: -1 | 1): Promise<boolean> {
  if (direction === 1 && !cursor.page.hasMore) return false;
  if (direction === -1 && cursor.earlier.length === 0) return false;
  const offset = direction === 1 ? cursor.page.nextOffset : cursor.earlier[cursor.earlier.length - 1]!;
  const page = await cursor.fetch(offset);
  if (direction === 1) cursor.earlier.push(cursor.page.offset);
  else cursor.earlier.pop();
  cursor.page = page;
  return true;
}
