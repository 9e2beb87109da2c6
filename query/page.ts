import type { MapConfiguration, QueryResult } from '../schemas/query.ts';
import type { PageValue } from './protocol.ts';
import type { TokenPayload } from './token.ts';

/** The name of the one layer of every result tile. */
export const RESULT_LAYER = 'result';

/** Deepest zoom a map should ask tiles for; past it, maps overzoom (the geometry is not simplified anyway). */
const MAX_MAP_ZOOM = 16;

/** What a page answer needs beside the worker's rows. */
export interface PageContext {
  query: TokenPayload;
  token: string;
  offset: number;
  limit: number;
  /** The outermost query has ORDER BY. */
  ordered: boolean;
  /** `performance.now()` when the request arrived. */
  started: number;
  filesRead: number;
  baseUrl: string;
}

const UNORDERED_WARNING = 'The query has no ORDER BY, so rows may come in another order on later pages; add ORDER BY for stable paging.';

/** The rows of pages shaped from a worker's text, as that text, for {@link serializeQueryResult}. */
const ROWS_TEXT = new WeakMap<QueryResult, Uint8Array>();
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Shapes a worker's page into the contract's QueryResult. Its `rows` are parsed from the worker's text only when
 * read (MCP, tests); the HTTP route writes the text as it came ({@link serializeQueryResult}).
 */
export function shapePage(value: PageValue, context: PageContext): QueryResult {
  const { query, offset, limit } = context;
  const returned = value.rowCount;
  const warnings = [...value.warnings];
  if (!context.ordered && (offset > 0 || value.hasMore)) warnings.push(UNORDERED_WARNING);
  const result: QueryResult = {
    columns: value.columns,
    rows: [],
    offset,
    limit,
    returned_count: returned,
    result_status: returned > 0 ? 'rows_returned' : offset === 0 ? 'empty_result' : 'empty_page',
    has_more: value.hasMore,
    ...(value.hasMore ? { next_offset: offset + returned } : {}),
    warnings,
    elapsed_ms: Math.round((performance.now() - context.started) * 100) / 100,
    bytes_read: value.bytesRead,
    files_read: context.filesRead,
    response_truncated: value.truncated,
    deterministic_order: context.ordered,
    query_id: query.qid,
    query_token: context.token,
    ...(value.geometryColumn ? { map_configuration: createMapConfiguration(context.baseUrl, query.qid, value.geometryColumn) } : {}),
  };
  let rows: QueryResult['rows'] | undefined;
  Object.defineProperty(result, 'rows', {
    enumerable: true,
    configurable: true,
    get: () => (rows ??= JSON.parse(decoder.decode(value.rowsJson)) as QueryResult['rows']),
    set: (replaced: QueryResult['rows']) => {
      rows = replaced;
      ROWS_TEXT.delete(result);
    },
  });
  ROWS_TEXT.set(result, value.rowsJson);
  return result;
}

/**
 * The JSON of a QueryResult in UTF-8, as JSON.stringify would write it. Rows that came from a worker as text are
 * spliced in as they are: on a page of 1,000 rows this keeps tens of milliseconds of parsing, stringifying and
 * encoding off the API process's event loop.
 */
export function serializeQueryResult(result: QueryResult): Uint8Array {
  const rowsText = ROWS_TEXT.get(result);
  if (rowsText === undefined) return encoder.encode(JSON.stringify(result));
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(result)) if (key !== 'columns' && key !== 'rows') rest[key] = result[key as keyof QueryResult];
  return Buffer.concat([encoder.encode(`{"columns":${JSON.stringify(result.columns)},"rows":`), rowsText, encoder.encode(`,${JSON.stringify(rest).slice(1)}`)]);
}

/** The MapLibre source of a result's tiles, and how to frame it and send the token. The template holds no token. */
export function createMapConfiguration(baseUrl: string, queryId: string, geometryColumn: string): MapConfiguration {
  const query = `${baseUrl}/api/queries/${queryId}`;
  return {
    source: { type: 'vector', tiles: [`${query}/tiles/{z}/{x}/{y}.mvt`], minzoom: 0, maxzoom: MAX_MAP_ZOOM, scheme: 'xyz' },
    source_layer: RESULT_LAYER,
    geometry_column: geometryColumn,
    bounds_url: `${query}/bounds`,
    token_header: 'X-Service-Query-Token',
    token_query_parameter: 'token',
  };
}
