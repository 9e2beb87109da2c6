import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import type { CatalogIndex } from '../core/catalog-index.ts';
import type { StorageLocationModel } from '../core/model.ts';
import { isLonLat, resolveCrs } from '../core/geo/crs.ts';
import { isValidTile, MAX_TILE_ZOOM } from '../core/geo/mvt.ts';
import type { Config } from '../runtime/config.ts';
import { formatPath, safeParseWithFriendlyErrors } from '../schemas/parse.ts';
import {
  QueryPageRequestSchema, QueryRequestSchema, QueryResultSchema, type QueryBounds, type QueryResult,
} from '../schemas/query.ts';
import { shapeArrowPage, type ArrowPage } from './arrow.ts';
import type { DownloadFormat } from '../core/api/download-formats.ts';
import { QUERY_ERRORS, QueryFailure, queryFailure } from './errors.ts';
import { checkDownload, withResultFile, type ResultFile } from './export.ts';
import { shapePage } from './page.ts';
import { QueryPool } from './pool.ts';
import { createTileCache } from './tile-cache.ts';
import type {
  ArrowPageValue, BoundsValue, ExportValue, FeatureRead, FeaturesValue, PageValue,
  QueryTask, ResolvedSource, SandboxSettings, TaskOutcome, TileValue,
} from './protocol.ts';
import { checkSameData, fetchRemoteSources, resolveSources, type RemoteCopies } from './sources.ts';
import type { RemoteFileCache } from '../runtime/remote-file-cache.ts';
import { createQueryId, createToken, readToken, readTokenKeys, type TokenPayload } from './token.ts';
import { STEP, type StepClock } from './steps.ts';
import { SqlParser, type SqlCheck } from './validate-sql.ts';

/** How many SQL check verdicts the service remembers (least recently used first out). */
const SQL_CHECK_MEMO = 256;

/** The catalog a query runs against: the build in force, read anew for every request. */
export interface QueryCatalog {
  index: CatalogIndex;
  /** `{base_url}` of the build, for the URLs in `map_configuration`. */
  baseUrl: string;
  /** Changes with every build, so cached tiles of an older build are never served. */
  buildId: string;
}

/** The settings the query engine reads. */
export type QueryConfig = Pick<Config,
  'dataDir' | 'queryKeys' | 'queryWorkers' | 'querySpareWorkers' | 'queryQueue' | 'queryClientQueue' | 'queryTimeoutMs' | 'queryMemoryMb'
  | 'queryThreads' | 'queryTokenTtl' | 'queryMaxResponseBytes' | 'queryDownloadMaxRows' | 'tileMaxFeatures' | 'tileCacheMb'>
  & Partial<Pick<Config, 'remoteCacheDir' | 'remoteCacheMb' | 'remoteRevalidateS'>>;

/** Options of {@link createQueryService}. */
export interface QueryServiceOptions {
  config: QueryConfig;
  catalog: () => QueryCatalog;
  /** Told once when no token key is configured. */
  warn?: (message: string) => void;
}

/** A tile address. */
export interface TileAddress {
  z: number;
  x: number;
  y: number;
}

/** An encoded vector tile of a result; `features` 0 means the tile is empty. */
export interface QueryTile {
  bytes: Uint8Array;
  features: number;
  truncated: boolean;
  /** A strong validator of the bytes (their hash), for ETag and If-None-Match. */
  etag: string;
}

/** How a surface wants its JSON pages. */
export interface PageOptions {
  /**
   * A tighter cap than GEOSHELF_QUERY_MAX_RESPONSE_BYTES on the JSON of a page's rows: a page is cut there (with
   * `response_truncated` and a `next_offset`), as at the setting. MCP uses it, since its SDK validates and writes
   * every row again on the event loop.
   */
  maxResponseBytes?: number;
  /** A stopwatch the service laps through its steps (query/steps.ts), for a Server-Timing header. */
  steps?: StepClock;
}

/** Options of the calls that answer bounds and tiles: the stopwatch of {@link PageOptions}. */
export type RunOptions = Pick<PageOptions, 'steps'>;

/** A stored GeoParquet file that features are read from. */
export interface FeatureFile {
  /** Names the file in run-time estimates (an OGC collection id). */
  key: string;
  /** Path inside the data folder, or inside `remote`. */
  path: string;
  /** The storage location in object storage the file is in: read through its local copy, as queries read it. */
  remote?: StorageLocationModel;
  /** CRS of its geometries (`EPSG:3857`, `OGC:CRS84`); null when unknown, read as CRS84. */
  crs: string | null;
  geometryColumn: string | null;
}

/**
 * The query engine, apart from any surface: every method resolves to a response document or throws a QueryFailure.
 * Each method that runs work takes the `client` it runs for (a remote address, see server/client-address.ts `requestClientOf`):
 * clients take turns at the workers and each may have only so many tasks waiting (query/pool.ts). Calls without one
 * share one turn.
 */
export interface QueryService {
  /** Runs a query (the body of `POST /api/queries`) and answers its first page with a token. */
  run: (request: unknown, client?: string, options?: PageOptions) => Promise<QueryResult>;
  /** Answers a page (the body of the page call) of the query a token stands for. */
  page: (queryId: string, token: string | null | undefined, request: unknown, client?: string, options?: PageOptions) => Promise<QueryResult>;
  /** As `run`, answering the page as an Arrow IPC stream with its facts beside (query/arrow.ts). */
  runArrow: (request: unknown, client?: string, options?: PageOptions) => Promise<ArrowPage>;
  /** As `page`, answering the page as an Arrow IPC stream with its facts beside. */
  pageArrow: (queryId: string, token: string | null | undefined, request: unknown, client?: string, options?: PageOptions) => Promise<ArrowPage>;
  /** Writes the whole result, at most GEOSHELF_QUERY_DOWNLOAD_MAX_ROWS rows, as a file (query/export.ts). */
  download: (queryId: string, token: string | null | undefined, format: DownloadFormat, client?: string) => Promise<ResultFile>;
  /** Answers the WGS84 extent of the whole result. */
  bounds: (queryId: string, token: string | null | undefined, client?: string, options?: RunOptions) => Promise<QueryBounds>;
  /** Answers one vector tile of the result. */
  tile: (queryId: string, token: string | null | undefined, address: TileAddress, client?: string, options?: RunOptions) => Promise<QueryTile>;
  /**
   * Reads OGC features of a stored GeoParquet file (a path inside the data folder) through the same pool,
   * sandbox, deadline and admission as queries. The SQL is the engine's own (query/features.ts).
   */
  features: (file: FeatureFile, read: FeatureRead, client?: string) => Promise<FeaturesValue>;
  /** The local copy of a file in object storage, the one queries read (for downloads of a remote source). */
  remoteCopy: RemoteCopies['get'];
  /**
   * Starts the workers and the SQL parser ahead of the first query (the server awaits it before it listens);
   * resolves once the workers can take tasks. A query sent before then waits without its deadline running.
   */
  start: () => Promise<void>;
  /** Stops the workers and the SQL parser; later calls answer `query_service_unavailable`. */
  close: () => Promise<void>;
  /** The worker pool, for tests and benchmarks. */
  pool: QueryPool;
}

/**
 * Creates the query engine: SQL checks (layer 1), the worker pool (layers 2 and 3), tokens, pages, bounds and
 * tiles. Surfaces (the HTTP routes, MCP, OGC features) are thin adapters over it.
 * @example
 * const service = createQueryService({ config, catalog: () => ({ index, baseUrl, buildId }) });
 * const first = await service.run({ sources: [ref], sql: 'SELECT name FROM countries ORDER BY name' });
 * const next = await service.page(first.query_id, first.query_token, { offset: first.next_offset });
 */
export function createQueryService(options: QueryServiceOptions): QueryService {
  const { config, catalog } = options;
  const keys = readTokenKeys(config.queryKeys);
  if (keys.generated) options.warn?.('geoshelf: GEOSHELF_QUERY_KEYS is not set; query tokens use a key made for this process and will not work on another one.');
  const settings: SandboxSettings = { threads: config.queryThreads, memoryLimitMb: config.queryMemoryMb, maxResponseBytes: config.queryMaxResponseBytes, tileMaxFeatures: config.tileMaxFeatures };
  const pool = new QueryPool({
    workers: config.queryWorkers, spareWorkers: config.querySpareWorkers, queue: config.queryQueue, clientQueue: config.queryClientQueue,
    timeoutMs: config.queryTimeoutMs, memoryCapMb: config.queryMemoryMb + 512,
    sandboxLimits: settings,
  });
  const tiles = createTileCache<QueryTile>({ maxBytes: config.tileCacheMb * 1024 * 1024 });
  // Made at the first remote source: the S3 SDK it loads is large, and most catalogs have none.
  let remoteCache: Promise<RemoteFileCache> | undefined;
  const remote: RemoteCopies = {
    get: async (location, path) => (await (remoteCache ??= import('../runtime/remote-file-cache.ts').then(({ RemoteFileCache: Cache }) => new Cache({
      dir: config.remoteCacheDir ?? join(tmpdir(), 'geoshelf-remote'),
      budgetBytes: (config.remoteCacheMb ?? 4096) * 1024 * 1024,
      revalidateMs: (config.remoteRevalidateS ?? 30) * 1000,
    })))).get(location, path),
  };
  const warn = options.warn ?? (() => undefined);
  /** The sources of a query, each remote one with its local copy (fetched within the query's deadline). */
  const resolve = async (references: TokenPayload['sources'], ranBefore: boolean) => {
    const sources = resolveSources(catalog().index, config.dataDir, references, { ranBefore });
    await fetchRemoteSources(sources, remote, performance.now() + config.queryTimeoutMs, warn);
    return sources;
  };
  let parser: Promise<SqlParser> | undefined;
  const startParser = () => (parser ??= SqlParser.create());
  // A map asks for dozens of tiles of one query at once, and the parser checks one SQL at a time: remember
  // recent verdicts (the check depends only on the SQL and the aliases).
  const checks = new Map<string, Promise<SqlCheck>>();
  const checkSql = (sql: string, aliases: string[]) => {
    const key = JSON.stringify([sql, aliases]);
    let check = checks.get(key);
    if (check) checks.delete(key);
    else {
      check = startParser().then((instance) => instance.check(sql, aliases));
      check.catch(() => checks.delete(key));
    }
    checks.set(key, check);
    if (checks.size > SQL_CHECK_MEMO) checks.delete(checks.keys().next().value!);
    return check;
  };

  /**
   * Resolves the sources, checks they hold the data the query first ran on, and checks the SQL; all happen again
   * on every page, bounds and tile.
   */
  const prepare = async (query: Pick<TokenPayload, 'sql' | 'sources' | 'data'>, steps: StepClock | undefined, resolved?: ResolvedSource[]) => {
    const sources = resolved ?? (await resolve(query.sources, true));
    checkSameData(sources, query.data);
    const check = await checkSql(query.sql, sources.map((source) => source.alias));
    steps?.lap(STEP.check);
    // The checker already worded the refusal from the catalog's template, with the user's own identifiers.
    if (!check.ok) throw new QueryFailure({ code: check.code, status: QUERY_ERRORS[check.code].status, message: check.message, hint: QUERY_ERRORS[check.code].hint });
    const used = new Set(check.tablesUsed.map((name) => name.toLowerCase()));
    return { sources: sources.filter((source) => used.has(source.alias.toLowerCase())), ordered: check.orderedAtTop };
  };

  /** Runs a task of a query; `resolved` are its sources when the caller resolved them already (a tile's cache key). */
  const execute = async <T>(query: TokenPayload, client: string | undefined, task: (base: Pick<QueryTask, 'sql' | 'sources' | 'geometryColumn' | 'settings'>) => QueryTask, options: PageOptions = {}, resolved?: ResolvedSource[]) => {
    const { sources, ordered } = await prepare(query, options.steps, resolved);
    const limits = options.maxResponseBytes === undefined ? settings : { ...settings, maxResponseBytes: Math.min(settings.maxResponseBytes, options.maxResponseBytes) };
    const outcome = await pool.run(task({ sql: query.sql, sources, geometryColumn: query.geometry_column, settings: limits }), client);
    if (outcome.ok) options.steps?.add(outcome.steps);
    return { value: unwrap<T>(outcome), sources, ordered };
  };

  /** Runs a page task (JSON rows, or an Arrow stream) and shapes its answer; shapePage makes the facts of both. */
  const answerPage = async (query: TokenPayload, token: string, offset: number, limit: number, started: number, client: string | undefined, options: PageOptions = {}): Promise<QueryResult> => {
    const { value, context } = await runPageTask<PageValue>(query, token, offset, limit, started, client, undefined, options);
    return shapePage(value, context);
  };
  const answerArrowPage = async (query: TokenPayload, token: string, offset: number, limit: number, started: number, client: string | undefined, options: PageOptions = {}): Promise<ArrowPage> => {
    const { value, context } = await runPageTask<ArrowPageValue>(query, token, offset, limit, started, client, 'arrow', options);
    return shapeArrowPage(value, context);
  };
  const runPageTask = async <T>(query: TokenPayload, token: string, offset: number, limit: number, started: number, client: string | undefined, format?: 'arrow', options: PageOptions = {}) => {
    const { value, sources, ordered } = await execute<T>(query, client, (base) => ({ ...base, kind: 'page', offset, limit, resultCrs: query.result_crs, ...(format ? { format } : {}) }), options);
    return { value, context: { query, token, offset, limit, ordered, started, filesRead: new Set(sources.map((source) => source.path)).size, baseUrl: catalog().baseUrl } };
  };

  /** The first page of a new query (the body of `POST /api/queries`), answered by `answer`. */
  const startQuery = async <T>(input: unknown, client: string | undefined, answer: (...args: Parameters<typeof answerPage>) => Promise<T>, options: PageOptions = {}) => {
    const started = performance.now();
    const request = parseRequest(QueryRequestSchema, input);
    const crs = request.result_crs === undefined ? undefined : resolveCrs(request.result_crs);
    if (request.result_crs !== undefined && !crs) throw queryFailure('unknown_crs', request.result_crs);
    options.steps?.lap(STEP.parse);
    const payload: TokenPayload = {
      qid: createQueryId(), sql: request.sql, sources: request.sources, limit: request.limit,
      data: (await resolve(request.sources, false)).map((source) => source.version ?? ''),
      ...(request.geometry_column ? { geometry_column: request.geometry_column } : {}),
      // Results are longitude/latitude already: a lon/lat CRS (EPSG:4326, OGC:CRS84 and their aliases) asks for no reprojection.
      ...(crs && !isLonLat(crs) ? { result_crs: crs } : {}),
    };
    const token = await createToken(payload, keys, config.queryTokenTtl);
    options.steps?.lap(STEP.token);
    return answer(payload, token, 0, request.limit, started, client, options);
  };

  /** A later page of a query (the body of the page call), answered by `answer`. */
  const nextPage = async <T>(queryId: string, token: string | null | undefined, input: unknown, client: string | undefined, answer: (...args: Parameters<typeof answerPage>) => Promise<T>, options: PageOptions = {}) => {
    const started = performance.now();
    const query = await authorize(queryId, token);
    options.steps?.lap(STEP.token);
    const request = parseRequest(QueryPageRequestSchema, input);
    options.steps?.lap(STEP.parse);
    return answer(query, token!, request.offset, request.page_size, started, client, options);
  };

  const authorize = (queryId: string, token: string | null | undefined) => {
    if (!QueryResultSchema.shape.query_id.safeParse(queryId).success) throw queryFailure('invalid_query_id');
    return readToken(token, queryId, keys);
  };

  return {
    pool,
    run: (input, client, options) => startQuery(input, client, answerPage, options),
    runArrow: (input, client, options) => startQuery(input, client, answerArrowPage, options),
    page: (queryId, token, input, client, options) => nextPage(queryId, token, input, client, answerPage, options),
    pageArrow: (queryId, token, input, client, options) => nextPage(queryId, token, input, client, answerArrowPage, options),
    async download(queryId, token, format, client) {
      const query = await authorize(queryId, token);
      checkDownload(format, query.result_crs);
      return withResultFile(format, async (path) => (await execute<ExportValue>(query, client, (base) => ({
        ...base, kind: 'export', format, path, maxRows: config.queryDownloadMaxRows, resultCrs: query.result_crs,
      }))).value);
    },
    async bounds(queryId, token, client, options = {}) {
      const query = await authorize(queryId, token);
      options.steps?.lap(STEP.token);
      const { value } = await execute<BoundsValue>(query, client, (base) => ({ ...base, kind: 'bounds' }), options);
      return { bounds: value.bounds };
    },
    async tile(queryId, token, { z, x, y }, client, options = {}) {
      const query = await authorize(queryId, token);
      options.steps?.lap(STEP.token);
      if (!isValidTile(z, x, y)) throw queryFailure('invalid_tile', MAX_TILE_ZOOM);
      // A tile depends only on the query and the build (the token fixes the query), so identical queries of
      // different users share it, and a map's repeated requests are answered from memory.
      // A remote file can change without a new build: its copy's version joins the key, so a stale tile is never served.
      const sources = await resolve(query.sources, true);
      const remoteVersions = sources.filter((source) => source.remote).map((source) => source.version).join(',');
      return tiles.get(`${catalog().buildId}/${remoteVersions}/${hashQuery(query)}/${z}/${x}/${y}`, async () => {
        const { value } = await execute<TileValue>(query, client, (base) => ({ ...base, kind: 'tile', z, x, y }), options, sources);
        return { ...value, etag: createHash('sha256').update(value.bytes).digest('base64url').slice(0, 27) };
      });
    },
    async features(file, read, client) {
      let path = join(config.dataDir, file.path);
      if (file.remote) {
        const copy: ResolvedSource = { alias: 'features', path: '', version: '', remote: { location: file.remote, path: file.path } };
        await fetchRemoteSources([copy], remote, performance.now() + config.queryTimeoutMs, warn);
        path = copy.path;
      }
      const outcome = await pool.run({
        kind: 'features', sql: '', sources: [{ alias: 'features', path }], settings,
        geometryColumn: file.geometryColumn ?? undefined, crs: file.crs, read, costKey: `${file.key}/${read.mode}`,
      }, client);
      return unwrap<FeaturesValue>(outcome);
    },
    remoteCopy: (location, path) => remote.get(location, path),
    async start() {
      pool.start();
      await Promise.all([pool.ready(), startParser()]);
    },
    async close() {
      await pool.close();
      await (await remoteCache)?.close();
      (await parser?.catch(() => undefined))?.close();
    },
  };
}

/** Parses a request body; a mismatch is `invalid_request`, naming up to five fields. */
function parseRequest<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = safeParseWithFriendlyErrors(schema, value, { source: 'request body', describePath: formatPath });
  if (result.ok) return result.data;
  throw queryFailure('invalid_request', result.issues.slice(0, 5).map((issue) => `${issue.path}: ${issue.message}`).join('; '));
}

/** The value of a worker's outcome, or its error thrown as a QueryFailure. */
function unwrap<T>(outcome: TaskOutcome): T {
  if (!outcome.ok) throw new QueryFailure(outcome.error, outcome.retryAfter);
  return outcome.value as T;
}

/** What decides a query's tiles, hashed: its SQL, its sources and its geometry column. */
function hashQuery(query: TokenPayload): string {
  return createHash('sha256').update(JSON.stringify([query.sql, query.sources, query.geometry_column ?? null])).digest('base64url').slice(0, 22);
}
