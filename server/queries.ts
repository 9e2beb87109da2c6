import { HTTPError, type H3, type H3Event } from 'h3';
import { FastResponse } from 'srvx';
import type { z } from 'zod';
import type { Config } from '../runtime/config.ts';
import { resolveCrs } from '../core/geo/crs.ts';
import { isValidTile } from '../core/geo/mvt.ts';
import { QueryPageRequestSchema, QueryRequestSchema, type QueryRequest } from '../schemas/query.ts';
import { formatPath, safeParseWithFriendlyErrors } from '../schemas/parse.ts';
import type { CatalogSnapshot } from './catalog.ts';
import { CORS_HEADERS } from './headers.ts';
import { queryError } from './errors.ts';
import { QueryPool } from '../query/pool.ts';
import type { BoundsValue, PageValue, TaskOutcome, TileValue } from '../query/protocol.ts';
import type { SandboxSettings } from '../query/sandbox.ts';
import { resolveSources } from '../query/sources.ts';
import { createQueryId, createToken, readToken, readTokenKeys, type TokenPayload } from '../query/token.ts';
import { SqlParser } from '../query/validate-sql.ts';

/** Largest request body of the query routes (contract section 8). */
export const MAX_BODY_BYTES = 64 * 1024;
const QUERY_ID = /^[A-Za-z0-9_-]{20,64}$/;
const TOKEN_HEADER = 'x-service-query-token';

/** The query service's long-lived parts: the worker pool, the SQL parser and the token keys. */
export interface QueryService {
  pool: QueryPool;
  close: () => Promise<void>;
}

/**
 * Registers the four query routes (contract 4.3): create, pages, bounds and tiles. Every request is parsed
 * strictly, its sources resolved against the catalog, its SQL checked by the allowlist, and it runs in the
 * worker pool; pages, bounds and tiles re-run the query from its encrypted token.
 */
export function registerQueryRoutes(app: H3, config: Config, snapshot: () => CatalogSnapshot): QueryService {
  const keys = readTokenKeys(config.queryKeys);
  if (keys.generated) console.warn('geoshelf: GEOSHELF_QUERY_KEYS is not set; query tokens use a key made for this process and will not work on another one.');
  const pool = new QueryPool({ workers: config.queryWorkers, queue: config.queryQueue, timeoutMs: config.queryTimeoutMs, memoryCapMb: config.queryMemoryMb + 512 });
  let parser: Promise<SqlParser> | undefined;
  const settings: SandboxSettings = { threads: config.queryThreads, memoryLimitMb: config.queryMemoryMb, maxResponseBytes: config.queryMaxResponseBytes, tileMaxFeatures: config.tileMaxFeatures };

  /** Checks the SQL and resolves the sources of a query; both happen again on every page, bounds and tile. */
  const prepare = async (query: Pick<TokenPayload, 'sql' | 'sources'>) => {
    const sources = resolveSources(snapshot().context.index, config.dataDir, query.sources);
    const check = await (await (parser ??= SqlParser.create())).check(query.sql, sources.map((source) => source.alias));
    if (!check.ok) throw queryError(400, check.code, check.message);
    const used = new Set(check.tablesUsed.map((name) => name.toLowerCase()));
    return { sources: sources.filter((source) => used.has(source.alias.toLowerCase())), ordered: check.orderedAtTop };
  };

  const page = async (query: TokenPayload, token: string, offset: number, limit: number, started: number) => {
    const { sources, ordered } = await prepare(query);
    const value = unwrap<PageValue>(await pool.run({ kind: 'page', sql: query.sql, sources, offset, limit, geometryColumn: query.geometry_column, resultCrs: query.result_crs, settings }));
    const base = snapshot().store.manifest.settings.base_url;
    const returned = value.rows.length;
    const warnings = [...value.warnings];
    if (!ordered && (offset > 0 || value.hasMore)) warnings.push('The query has no ORDER BY, so rows may come in another order on later pages; add ORDER BY for stable paging.');
    return {
      columns: value.columns,
      rows: value.rows,
      offset,
      limit,
      returned_count: returned,
      result_status: returned > 0 ? 'rows_returned' : value.truncated ? 'indeterminate' : offset === 0 ? 'empty_result' : 'empty_page',
      has_more: value.hasMore,
      ...(value.hasMore ? { next_offset: offset + returned } : {}),
      warnings,
      elapsed_ms: Math.round((performance.now() - started) * 100) / 100,
      bytes_read: value.bytesRead,
      files_read: new Set(sources.map((source) => source.path)).size,
      response_truncated: value.truncated,
      deterministic_order: ordered,
      query_id: query.qid,
      query_token: token,
      ...(value.geometryColumn
        ? {
            map_configuration: {
              tiles: [`${base}/api/queries/${query.qid}/tiles/{z}/{x}/{y}.mvt`],
              bounds: `${base}/api/queries/${query.qid}/bounds`,
              source_layer: 'result',
              geometry_column: value.geometryColumn,
              minzoom: 0,
              maxzoom: 16,
              token_header: 'X-Service-Query-Token',
              token_query_parameter: 'token',
            },
          }
        : {}),
    };
  };

  app.post('/api/queries', async (event) => {
    const started = performance.now();
    const request: QueryRequest = parseBody(QueryRequestSchema, await readJsonBody(event));
    if (request.result_crs !== undefined && !resolveCrs(request.result_crs)) {
      throw queryError(400, 'unknown_crs', `result_crs "${request.result_crs.slice(0, 40)}" is not a CRS this service knows; use EPSG:4326, EPSG:3857 or another code listed in the README.`);
    }
    const qid = createQueryId();
    const payload: TokenPayload = {
      qid, sql: request.sql, sources: request.sources, limit: request.limit,
      ...(request.geometry_column ? { geometry_column: request.geometry_column } : {}),
      ...(request.result_crs ? { result_crs: resolveCrs(request.result_crs)! } : {}),
    };
    const token = await createToken(payload, keys, config.queryTokenTtl);
    return json(await page(payload, token, 0, request.limit, started));
  });

  app.post('/api/queries/:query_id/pages', async (event) => {
    const started = performance.now();
    const { query, token } = await authorize(event, keys);
    const request = parseBody(QueryPageRequestSchema, await readJsonBody(event));
    return json(await page(query, token, request.offset, request.page_size, started));
  });

  app.get('/api/queries/:query_id/bounds', async (event) => {
    const { query } = await authorize(event, keys);
    const { sources } = await prepare(query);
    const value = unwrap<BoundsValue>(await pool.run({ kind: 'bounds', sql: query.sql, sources, geometryColumn: query.geometry_column, settings }));
    return json({ bounds: value.bounds });
  });

  app.get('/api/queries/:query_id/tiles/:z/:x/:tile', async (event) => {
    const { query } = await authorize(event, keys, true);
    const match = /^(\d{1,8})\.mvt$/.exec(event.context.params?.tile ?? '');
    const [z, x, y] = [Number(event.context.params?.z), Number(event.context.params?.x), Number(match?.[1])];
    if (!match || !isValidTile(z, x, y)) throw queryError(400, 'invalid_tile', 'The tile address must be /tiles/{z}/{x}/{y}.mvt with 0 ≤ z ≤ 24 and 0 ≤ x, y < 2^z.');
    const { sources } = await prepare(query);
    const value = unwrap<TileValue>(await pool.run({ kind: 'tile', sql: query.sql, sources, geometryColumn: query.geometry_column, z, x, y, settings }));
    const headers: Record<string, string> = { ...CORS_HEADERS, 'content-type': 'application/vnd.mapbox-vector-tile', 'cache-control': 'private, max-age=300' };
    if (value.truncated) headers['x-geoshelf-tile-truncated'] = 'true';
    if (value.features === 0) return new FastResponse(null, { status: 204, headers });
    return new FastResponse(value.bytes as Uint8Array<ArrayBuffer>, { headers });
  });

  app.all('/api/queries', () => methodNotAllowed('POST'));
  app.all('/api/queries/**', (event) => {
    if (event.url.pathname.endsWith('/pages')) return methodNotAllowed('POST');
    if (event.url.pathname.endsWith('/bounds') || event.url.pathname.includes('/tiles/')) return methodNotAllowed('GET');
    throw queryError(404, 'not_found', 'There is no such query route; see /api/openapi.');
  });

  return {
    pool,
    close: async () => {
      await pool.close();
      (await parser)?.close();
    },
  };
}

function methodNotAllowed(allowed: string): never {
  throw queryError(405, 'method_not_allowed', `This query route accepts ${allowed} only.`, { allow: `${allowed}, OPTIONS` });
}

/** Reads the path's query_id and the token (header, or `token` query parameter for tiles), and checks they match. */
async function authorize(event: H3Event, keys: ReturnType<typeof readTokenKeys>, allowQueryParameter = false) {
  const queryId = event.context.params?.query_id ?? '';
  if (!QUERY_ID.test(queryId)) throw queryError(400, 'invalid_query_id', 'query_id must be 20 to 64 characters of A-Z, a-z, 0-9, _ and -.');
  const token = event.req.headers.get(TOKEN_HEADER) ?? (allowQueryParameter ? event.url.searchParams.get('token') : null);
  return { query: await readToken(token, queryId, keys), token: token! };
}

/** Reads a JSON body of at most 64 KiB; a larger body, or one that is not JSON, is a 400. */
async function readJsonBody(event: H3Event): Promise<unknown> {
  const declared = Number(event.req.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw queryError(400, 'body_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = event.req.body?.getReader();
  for (;;) {
    const next = reader ? await reader.read() : { done: true as const, value: undefined };
    if (next.done) break;
    size += next.value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader?.cancel();
      throw queryError(400, 'body_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
    }
    chunks.push(next.value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw queryError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
}

function parseBody<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = safeParseWithFriendlyErrors(schema, value, { source: 'request body', describePath: formatPath });
  if (result.ok) return result.data;
  const detail = result.issues.slice(0, 5).map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  throw queryError(400, 'invalid_request', `The request body is not valid: ${detail}.`);
}

function unwrap<T>(outcome: TaskOutcome): T {
  if (!outcome.ok) throw new HTTPError({ status: outcome.status, message: outcome.message, data: { code: outcome.code } });
  return outcome.value as T;
}

function json(body: unknown): Response {
  return new FastResponse(JSON.stringify(body), { headers: { ...CORS_HEADERS, 'content-type': 'application/json', 'cache-control': 'no-store' } });
}
