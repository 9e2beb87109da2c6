/**
 * QUERY_ERRORS: every error the query engine can answer, once, with its status, message and hint (like the
 * build's error catalog in generator/errors.ts). Surfaces map it to their own shape: `{code, message}` on
 * /api/queries, `isError` tool results on MCP, exception documents on OGC API - Features.
 *
 * Messages never hold SQL, paths, settings or tokens; a template quotes only values the user sent and that
 * are safe to echo (an alias, a CRS name cut short, a source's numeric ids).
 */

/** One entry of the catalog: a message (fixed, or a template of the details it names) and a hint. */
interface QueryErrorDefinition {
  status: 400 | 404 | 405 | 422 | 500 | 503 | 504;
  message: string | ((...args: any[]) => string);
  hint: string;
  /** Seconds a client should wait before sending the request again; a 503 that knows no better wait sends this. */
  retryAfter?: number;
}

const define = <const D extends QueryErrorDefinition>(definition: D): D => definition;
const cut = (text: string, length = 64) => (text.length > length ? `${text.slice(0, length)}…` : text);

const SQL_HINT = 'The "Rules of a query" in /llms.txt list what a query may use; the message says what to change.';
const RETRY_HINT = 'Retry after the number of seconds in the Retry-After header.';

/**
 * Why a task was shed (query/pool.ts): its wait for a worker would pass its deadline; its client has as many tasks
 * waiting as one client may; or the queue is full and its client holds more than an equal share of it.
 */
export type BusyCause = 'deadline' | 'client_queue' | 'queue_share';
const BUSY_CAUSES: Record<BusyCause, string> = {
  deadline: 'the wait for a worker would pass the deadline',
  client_queue: 'this client already has as many tasks waiting as one client may have; other clients are still served',
  queue_share: 'its queue is full, and this client holds more than its share of it',
};

/** Every query error code with its status, message and hint. */
export const QUERY_ERRORS = {
  invalid_json: define({ status: 400, message: 'The request body is not valid JSON.', hint: 'Send a JSON object with content-type application/json.' }),
  invalid_request: define({
    status: 400,
    message: (problems: string) => `The request is not valid: ${problems}.`,
    hint: 'Compare the request with the QueryRequest and QueryPageRequest schemas in /api/openapi.',
  }),
  body_too_large: define({ status: 400, message: (limit: number) => `The request body is larger than ${limit} bytes.`, hint: 'Shorten the SQL or send fewer sources.' }),
  body_too_deep: define({ status: 400, message: (detail: string) => `The request body ${detail}.`, hint: 'A QueryRequest nests two levels deep: send the object its schema in /api/openapi describes.' }),
  source_not_found: define({
    status: 400,
    message: (where: string, missing: string) => `${where}: ${missing}.`,
    hint: 'Take collection_id, dataset_id, file_id and file_source_id from the dataset detail route.',
  }),
  duplicate_alias: define({
    status: 400,
    message: (where: string, alias: string) => `${where}: alias "${cut(alias)}" is used twice; give each source its own alias.`,
    hint: 'Aliases are table names in the SQL and compare without case.',
  }),
  invalid_filter: define({
    status: 400,
    message: (detail: string) => `The filter ${detail}.`,
    hint: 'Give geometry literals as valid simple features in CRS84: closed rings that do not cross themselves.',
  }),
  unknown_crs: define({
    status: 400,
    message: (crs: string) => `result_crs "${cut(crs, 40)}" is not a CRS this service knows; use EPSG:4326, EPSG:3857 or another EPSG code of a UTM zone or a common national grid.`,
    hint: 'EPSG:4326 and EPSG:3857 always work; the README section "The data dictionary" lists every known code.',
  }),
  invalid_query_id: define({ status: 400, message: 'query_id must be 20 to 64 characters of A-Z, a-z, 0-9, _ and -.', hint: 'Use the query_id of a QueryResult.' }),
  token_missing: define({
    status: 400,
    message: 'Send the query_token of the query in the X-Service-Query-Token header; bounds, tiles and downloads also take it in the token query parameter, pages the header only.',
    hint: 'map_configuration names both the header and the query parameter.',
  }),
  token_expired: define({ status: 400, message: 'The query token has expired; run the query again with POST /api/queries.', hint: 'Tokens live GEOSHELF_QUERY_TOKEN_TTL seconds.' }),
  token_invalid: define({
    status: 400,
    message: 'The query token is not valid: it was changed, or made with a key this service does not have.',
    hint: 'Every replica needs the same GEOSHELF_QUERY_KEYS.',
  }),
  token_query_mismatch: define({ status: 400, message: 'The query token belongs to another query_id than the one in the path.', hint: 'Send the token with the query_id it came with.' }),
  invalid_tile: define({
    status: 400,
    message: (maxZoom: number) => `The tile address must be /tiles/{z}/{x}/{y}.mvt with decimal integers 0 ≤ z ≤ ${maxZoom} and 0 ≤ x, y < 2^z.`,
    hint: 'Use the tile template of map_configuration.',
  }),
  sql_empty: define({ status: 400, message: 'The query is empty; send one SELECT statement.', hint: SQL_HINT }),
  sql_syntax_error: define({
    status: 400,
    message: (at?: { position?: number; nul?: boolean }) => at?.nul
      ? 'The query contains a NUL character.'
      : at?.position === undefined ? 'The query could not be parsed; check its SQL syntax.' : `The query could not be parsed: syntax error at character offset ${at.position}.`,
    hint: SQL_HINT,
  }),
  sql_not_select: define({
    status: 400,
    message: (statement?: 'describe') => statement === 'describe'
      ? 'DESCRIBE, SHOW and SUMMARIZE are not available; the data dictionary lists every column, and SELECT can compute summaries.'
      : 'Only one SELECT statement can run (FROM-first and VALUES queries count); statements such as PRAGMA, SET, COPY, ATTACH, INSTALL, CALL, EXPLAIN or CREATE are not allowed.',
    hint: SQL_HINT,
  }),
  sql_multiple_statements: define({ status: 400, message: 'Send exactly one SELECT statement; this query has several, separated by ";".', hint: SQL_HINT }),
  sql_unknown_table: define({
    status: 400,
    message: (table: string) => `Table ${table} is not one of this query's sources. Use the aliases declared in "sources", or a name defined with WITH.`,
    hint: SQL_HINT,
  }),
  sql_qualified_name: define({
    status: 400,
    message: (functionName?: string) => functionName === undefined
      ? 'Table names cannot be qualified with a schema or catalog; use the aliases declared in "sources".'
      : `Functions cannot be called with a schema or catalog prefix; call ${functionName} by its name alone.`,
    hint: SQL_HINT,
  }),
  sql_file_not_allowed: define({
    status: 400,
    message: 'Queries cannot read files directly; declare the dataset in "sources" and use its alias as the table name.',
    hint: SQL_HINT,
  }),
  sql_table_function_not_allowed: define({
    status: 400,
    message: (what: string) => `${what} not allowed in FROM; only unnest(…) is. Read data through the aliases declared in "sources".`,
    hint: SQL_HINT,
  }),
  sql_function_not_allowed: define({
    status: 400,
    message: (name: string, use: 'call' | 'aggregate-name' | 'bare-name' = 'call') => {
      if (use === 'aggregate-name') return `Function "${name}" needs the name of an allowed aggregate as a constant string, like ${name}(values, 'sum').`;
      if (use === 'bare-name') return `"${name}" names a function that is not allowed in queries. If it is a column, qualify it with its table, like t.${name}.`;
      return `Function ${name} is not allowed in queries: they may use DuckDB's scalar, aggregate and window functions on an allowlist, which leaves out file readers, settings and catalog functions.`;
    },
    hint: SQL_HINT,
  }),
  sql_recursive_cte: define({
    status: 400,
    message: (form: 'with-recursive' | 'using-key' = 'with-recursive') => `Recursive CTEs (WITH RECURSIVE${form === 'using-key' ? ' … USING KEY' : ''}) are not allowed.`,
    hint: SQL_HINT,
  }),
  sql_parameter_not_allowed: define({ status: 400, message: 'Query parameters ($1, ?, $name) are not supported; write the values into the query.', hint: SQL_HINT }),
  sql_unsupported_syntax: define({
    status: 400,
    message: (what?: string) => `This query uses ${what ?? 'a construct'}, which is not supported here.`,
    hint: SQL_HINT,
  }),
  sql_too_complex: define({
    status: 400,
    message: (limit: { bytes: number } | { nodes: number; depth: number }) => 'bytes' in limit
      ? `The query is too complex to run (longer than ${limit.bytes} bytes, or nested deeper than DuckDB allows); simplify it.`
      : `The query is too complex to run (more than ${limit.nodes} syntax nodes, or nested more than ${limit.depth} levels deep); simplify it.`,
    hint: SQL_HINT,
  }),
  not_found: define({ status: 404, message: 'There is no such query route; see /api/openapi.', hint: 'The query routes are listed in /api/openapi.' }),
  method_not_allowed: define({ status: 405, message: (allowed: string) => `This query route accepts ${allowed} only.`, hint: 'The Allow header lists the methods.' }),
  source_not_queryable: define({
    status: 422,
    message: (where: string, why: string) => `${where}: ${why}`,
    hint: 'Queries read GeoParquet sources stored in the data folder; the file metadata route lists each source\'s format.',
  }),
  geometry_column_not_found: define({
    status: 422,
    message: (column: string) => `The result has no column "${cut(column)}" to use as geometry_column.`,
    hint: 'geometry_column must name a column of the result.',
  }),
  geometry_column_not_geometry: define({
    status: 422,
    message: (column: string, type: string) => `Column "${cut(column)}" holds ${cut(type, 40)}, not geometries.`,
    hint: 'geometry_column must name a GEOMETRY or WKB column.',
  }),
  no_geometry: define({
    status: 422,
    message: 'The result has no geometry column, so it cannot be framed or tiled; select one, or name it in geometry_column.',
    hint: 'Bounds and tiles need a geometry column in the result.',
  }),
  empty_result: define({ status: 422, message: 'The result holds no geometry to frame.', hint: 'Bounds need at least one non-empty geometry.' }),
  query_binder_error: define({
    status: 422,
    message: (column?: string) => column === undefined
      ? 'A column or function is unknown, or used with the wrong types.'
      : `Column "${cut(column)}" is not in the tables the query reads; check its name in the schema route.`,
    hint: 'The schema route lists every column and its type.',
  }),
  query_unknown_name: define({ status: 422, message: 'The query names a table, view or function that does not exist for it.', hint: 'Use the aliases declared in sources.' }),
  query_conversion_error: define({ status: 422, message: 'A value could not be converted to the type the query asks for.', hint: 'Use TRY_CAST to turn failed conversions into null.' }),
  query_out_of_range: define({ status: 422, message: 'A value is out of range for its type (an overflow, or a date out of bounds).', hint: 'Cast to a wider type.' }),
  query_not_permitted: define({ status: 422, message: 'The query tried to reach something outside its sources.', hint: 'Read data through the aliases declared in sources.' }),
  query_not_supported: define({ status: 422, message: 'The query uses a feature the engine does not support.', hint: 'Rewrite the query without it.' }),
  query_out_of_memory: define({
    status: 422,
    message: 'The query needs more memory than a query may use; filter, aggregate or select fewer columns.',
    hint: 'GEOSHELF_QUERY_MEMORY_MB bounds the memory of a query.',
  }),
  row_too_large: define({
    status: 422,
    message: (limit: number) => `A row of the result is larger than the response cap of ${limit} bytes, so no page can hold it; select fewer or smaller columns.`,
    hint: 'GEOSHELF_QUERY_MAX_RESPONSE_BYTES caps the JSON of one response; leave large text or geometries out of the page (tiles map the geometries).',
  }),
  download_too_many_rows: define({
    status: 422,
    message: (limit: number) => `The result has more than ${limit} rows, more than a download may hold; filter or aggregate it, or add LIMIT ${limit}.`,
    hint: 'GEOSHELF_QUERY_DOWNLOAD_MAX_ROWS bounds a download; POST …/pages reads a result of any size page by page.',
  }),
  download_crs_not_supported: define({
    status: 422,
    message: (crs: string) => `A GeoParquet download cannot be written in result_crs "${cut(crs, 40)}": GeoParquet declares its CRS as PROJJSON, which this service cannot write for it.`,
    hint: 'Download CSV (any result_crs) or GeoJSON (always longitude/latitude), or run the query without result_crs for GeoParquet.',
  }),
  unknown_download_format: define({
    status: 404,
    message: 'There is no such download; a result downloads as download.parquet (GeoParquet), download.geojson or download.csv.',
    hint: 'The getQueryDownload route of /api/openapi lists the formats.',
  }),
  query_failed: define({ status: 422, message: 'The query could not be executed.', hint: 'Simplify the query; the engine gave no safe reason.' }),
  query_outdated: define({
    status: 422,
    message: 'The data behind this query changed since it was run; run the query again with POST /api/queries.',
    hint: 'A token stands for the data it was made on: pages, bounds and tiles of a query run before the catalog was rebuilt with new data are refused rather than mixed with rows of the new data.',
  }),
  query_service_busy: define({
    status: 503,
    message: (seconds: number, cause: BusyCause = 'deadline') => `The query service is busy: ${BUSY_CAUSES[cause]}. Try again in ${seconds} s.`,
    hint: RETRY_HINT,
  }),
  query_service_unavailable: define({ status: 503, message: 'The query service is shutting down.', hint: 'Send the request to another replica or retry later.' }),
  source_unavailable: define({
    status: 503,
    message: 'The data file of this source cannot be read right now; the service\'s operator must restore it. Other sources are unaffected.',
    hint: 'Retry later; the file is missing or damaged on the server, which is not a fault of the query.',
    retryAfter: 30,
  }),
  query_worker_lost: define({
    status: 503,
    message: 'The process running this query was stopped from outside (by the operator or the system); the query was not at fault and may be sent again.',
    hint: RETRY_HINT,
    retryAfter: 1,
  }),
  internal_error: define({ status: 500, message: 'An unexpected error occurred; it has been logged.', hint: 'Retry; if it persists, report it with the time of the request.' }),
  query_timeout: define({ status: 504, message: 'The query ran past its deadline and was stopped.', hint: 'Filter earlier, aggregate, or ask for smaller pages; GEOSHELF_QUERY_TIMEOUT_MS is the deadline.' }),
} as const;

/** A stable query error code. */
export type QueryErrorCode = keyof typeof QUERY_ERRORS;

/** The details the message template of `C` takes. */
export type MessageArgs<C extends QueryErrorCode> = (typeof QUERY_ERRORS)[C]['message'] extends (...args: infer A) => string ? A : [];

/** What a surface needs to answer an error: the code, its status, the message and the hint. */
export interface QueryErrorBody {
  code: QueryErrorCode;
  status: number;
  message: string;
  hint: string;
}

/** A query error as thrown inside the engine; surfaces catch it and render {@link QueryFailure.body}. */
export class QueryFailure extends Error {
  readonly body: QueryErrorBody;
  /** Seconds a client should wait before retrying (503s); surfaces send it as Retry-After. */
  readonly retryAfter: number | undefined;

  constructor(body: QueryErrorBody, retryAfter?: number) {
    super(body.message);
    this.name = 'QueryFailure';
    this.body = body;
    this.retryAfter = retryAfter ?? (QUERY_ERRORS[body.code] as QueryErrorDefinition).retryAfter;
  }
}

/**
 * The body of a query error, with the message filled in from the catalog.
 * @example describeQueryError('unknown_crs', 'EPSG:9999').message // 'result_crs "EPSG:9999" is not a CRS …'
 */
export function describeQueryError<C extends QueryErrorCode>(code: C, ...args: MessageArgs<C>): QueryErrorBody {
  const { status, message, hint } = QUERY_ERRORS[code] as QueryErrorDefinition;
  return { code, status, message: typeof message === 'string' ? message : message(...args), hint };
}

/**
 * A throwable query error from the catalog.
 * @example throw queryFailure('source_not_found', 'sources[0]', 'collection 1 has no dataset 9')
 */
export function queryFailure<C extends QueryErrorCode>(code: C, ...args: MessageArgs<C>): QueryFailure {
  return new QueryFailure(describeQueryError(code, ...args));
}

/** Whether `code` is in the catalog; for codes that arrive from a worker process. */
export function isQueryErrorCode(code: string): code is QueryErrorCode {
  return Object.hasOwn(QUERY_ERRORS, code);
}
