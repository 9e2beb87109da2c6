import { HTTPError, type H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { PROBLEM_CONTENT_TYPE } from '../core/constants.ts';
import { problemKindForStatus, renderProblem } from '../core/render/problems.ts';
import { describeQueryError, isQueryErrorCode, QUERY_ERRORS, QueryFailure, type QueryErrorBody } from '../query/errors.ts';
import { STAC_ERROR_CODES, StacApiFailure, type StacErrorStatus } from '../core/stac/api-errors.ts';
import { respondFeaturesHttpError } from './features.ts';
import { CORS_HEADERS } from './headers.ts';
import { respondStacFailure } from './stac.ts';

/** Status a request gets when its client went away before the answer; nobody reads it, so nothing is logged. */
const CLIENT_CLOSED = 499;

/**
 * The one error path of the server. Query routes answer `{code, message}` as JSON, from the QUERY_ERRORS
 * catalog; every other route answers a Problem as application/problem+json. Unexpected errors are logged
 * without their detail reaching the client; a request its client aborted is neither logged nor answered.
 */
export function renderError(error: HTTPError, event: H3Event, baseUrl: string): Response {
  if (event.req.signal?.aborted || isAbort(error.cause)) return new FastResponse(null, { status: CLIENT_CLOSED });
  const failure = error.cause instanceof QueryFailure ? error.cause : undefined;
  const expected = failure !== undefined || (!error.unhandled && (error.status < 500 || error.status === 502 || error.status === 503 || error.status === 504));
  if (!expected) console.error('unexpected error', error.cause ?? error);
  const headers = new Headers(error.headers);
  for (const [name, value] of Object.entries(CORS_HEADERS)) headers.set(name, value);
  headers.set('cache-control', 'no-store');
  const pathname = event.url.pathname;
  if (pathname === '/api/queries' || pathname.startsWith('/api/queries/')) {
    const body = failure?.body ?? (expected ? fromHttpError(error) : describeQueryError('internal_error'));
    if (failure?.retryAfter !== undefined) headers.set('retry-after', String(failure.retryAfter));
    headers.set('content-type', 'application/json');
    return new FastResponse(JSON.stringify({ code: body.code, message: body.message }), { status: body.status, headers });
  }
  const status = expected ? error.status : 500;
  const message = expected ? error.message : 'An unexpected error occurred; it has been logged.';
  // STAC API and OGC API - Features render their own failures; what reaches here was refused by h3 before routing.
  if (isUnder(pathname, '/stac/api') || isUnder(pathname, '/features')) {
    const description = status === 400 && !canDecode(pathname) ? 'The path is not valid percent-encoding.' : message;
    if (isUnder(pathname, '/features')) return respondFeaturesHttpError(status, description);
    return respondStacFailure(event.req, new StacApiFailure(Object.hasOwn(STAC_ERROR_CODES, status) ? (status as StacErrorStatus) : 500, description));
  }
  headers.set('content-type', PROBLEM_CONTENT_TYPE);
  const problem = renderProblem(problemKindForStatus(status), message, baseUrl, pathname.length <= 300 ? pathname : undefined);
  if (status !== problem.status) problem.status = status;
  return new FastResponse(JSON.stringify(problem), { status, headers });
}

/** A query error from an HTTPError that h3 raised or a route threw with a catalog code in `data`. */
function fromHttpError(error: HTTPError): QueryErrorBody {
  const code = (error.data as { code?: string } | undefined)?.code;
  if (code !== undefined && isQueryErrorCode(code)) return { code, status: error.status, message: error.message, hint: QUERY_ERRORS[code].hint };
  if (error.status === 404) return describeQueryError('not_found');
  return { ...describeQueryError('invalid_request', error.message), status: error.status };
}

function isUnder(pathname: string, prefix: string): boolean {
  return pathname === prefix || pathname.startsWith(`${prefix}/`);
}

/** Whether a request path is valid percent-encoding (h3 refuses one that is not before any route runs). */
export function canDecode(pathname: string): boolean {
  try {
    decodeURI(pathname);
    return true;
  } catch {
    return false;
  }
}

/** Errors of a connection that the client closed, as Node and undici name them. */
function isAbort(error: unknown): boolean {
  const { name, code } = (error ?? {}) as { name?: string; code?: string };
  return name === 'AbortError' || code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ABORT_ERR';
}

/**
 * An HTTPError carrying a catalog code, for errors that need HTTP headers (405 with Allow).
 * @example throw queryHttpError(describeQueryError('method_not_allowed', 'POST'), { allow: 'POST, OPTIONS' })
 */
export function queryHttpError(body: QueryErrorBody, headers?: HeadersInit): HTTPError {
  return new HTTPError({ status: body.status, message: body.message, data: { code: body.code }, ...(headers ? { headers } : {}) });
}
