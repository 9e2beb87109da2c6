/**
 * The query service as the console calls it: `POST /api/queries`, its pages and its bounds, at `origin`
 * ('' for this site, or the origin set at build time; the query routes allow CORS).
 */
import type { MapConfiguration, QueryBounds, QueryRequest, QueryResult } from '../../../schemas/query.ts';

/** A failed call: the service's `{code, message}`, or a code of the console's own when it got no such body. */
export class QueryCallError extends Error {
  readonly code: string;
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  /** Seconds to wait before retrying, from Retry-After (503). */
  readonly retryAfter: number | null;

  constructor(code: string, message: string, status: number, retryAfter: number | null = null) {
    super(message);
    this.name = 'QueryCallError';
    this.code = code;
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** The three calls of a query, bound to one origin. */
export interface QueryClient {
  /** Where the service is, in words for messages. */
  readonly where: string;
  run(request: QueryRequest): Promise<QueryResult>;
  page(result: Pick<QueryResult, 'query_id' | 'query_token'>, offset: number, pageSize: number): Promise<QueryResult>;
  /** The WGS84 extent of the whole result, or null when it cannot be framed (422). */
  bounds(configuration: MapConfiguration, token: string): Promise<QueryBounds['bounds'] | null>;
}

const TOKEN_HEADER = 'X-Service-Query-Token';

/** A client of the query service at `origin`. */
export function createQueryClient(origin: string): QueryClient {
  const base = `${origin.replace(/\/+$/, '')}/api/queries`;
  const where = origin === '' ? 'this site' : origin;
  const call = async (url: string, init: RequestInit): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      throw new QueryCallError('network_error', `The query service at ${where} could not be reached (${(error as Error).message}).`, 0);
    }
    const body: unknown = await response.json().catch(() => undefined);
    if (response.ok && body !== undefined) return body;
    if (isQueryError(body)) throw new QueryCallError(body.code, body.message, response.status, readRetryAfter(response.headers.get('retry-after')));
    throw new QueryCallError('no_query_service', `No query service answered at ${where} (HTTP ${response.status}).`, response.status);
  };
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    call(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...headers }, body: JSON.stringify(body) });

  return {
    where,
    run: async (request) => (await post(base, request)) as QueryResult,
    page: async ({ query_id: id, query_token: token }, offset, pageSize) =>
      (await post(`${base}/${encodeURIComponent(id)}/pages`, { offset, page_size: pageSize }, { [TOKEN_HEADER]: token })) as QueryResult,
    bounds: async (configuration, token) => {
      try {
        const body = (await call(configuration.bounds_url, { headers: { [configuration.token_header]: token, accept: 'application/json' } })) as QueryBounds;
        return body.bounds;
      } catch (error) {
        if (error instanceof QueryCallError && error.status === 422) return null;
        throw error;
      }
    },
  };
}

/**
 * Whether a query service answers at `origin`. `/api/health` cannot tell, since the static tree holds it too;
 * the query route's answer to OPTIONS can, and unlike a deliberately bad POST it logs no error in the browser's
 * console when the service is there. A static host or CDN with CORS may answer OPTIONS too, but it does not allow
 * POST; where the allowed methods cannot be read (another origin that does not expose them), a success counts.
 */
export async function probeQueryService(origin: string, timeoutMs = 4000): Promise<boolean> {
  try {
    const response = await fetch(`${origin.replace(/\/+$/, '')}/api/queries`, { method: 'OPTIONS', signal: AbortSignal.timeout(timeoutMs) });
    const methods = response.headers.get('access-control-allow-methods');
    return response.ok && (methods === null || /\bPOST\b/i.test(methods));
  } catch {
    return false;
  }
}

function isQueryError(body: unknown): body is { code: string; message: string } {
  return typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string' && typeof (body as { message?: unknown }).message === 'string';
}

/** Retry-After in seconds: delta-seconds or an HTTP date. */
function readRetryAfter(value: string | null): number | null {
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
