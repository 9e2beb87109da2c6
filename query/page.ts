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

/** Shapes a worker's page into the contract's QueryResult. */
export function shapePage(value: PageValue, context: PageContext): QueryResult {
  const { query, offset, limit } = context;
  const returned = value.rows.length;
  const warnings = [...value.warnings];
  if (!context.ordered && (offset > 0 || value.hasMore)) warnings.push(UNORDERED_WARNING);
  return {
    columns: value.columns,
    rows: value.rows as QueryResult['rows'],
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
