import { HTTPError, type H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { OgcApiFailure, ogcFailure, refusedRequestFailure, type OgcApi } from '../core/api/ogc-exception.ts';
import { PROBLEM_CONTENT_TYPE } from '../core/constants.ts';
import { problemKindForStatus, renderProblem } from '../core/api/catalog/problems.ts';
import { describeQueryError, isQueryErrorCode, QUERY_ERRORS, QueryFailure, type QueryErrorBody } from '../query/errors.ts';
import { CORS_HEADERS } from './headers.ts';
import { findErrorMapper, type ErrorMapper } from './surface-kit.ts';

/** Status a request gets when its client went away before the answer; nobody reads it, so nothing is logged. */
const CLIENT_CLOSED = 499;

/**
 * The app's error handler, for what no mounted surface answered itself: h3 refusing a URL before routing, and the
 * app's own routes (the site, data files, readiness). A path under a mounted surface is answered by that surface's
 * mapper (server/surface-kit.ts); every other path gets a Problem as application/problem+json.
 */
export function renderError(error: HTTPError, event: H3Event, baseUrl: string): Response | Promise<Response> {
  const mapError = findErrorMapper(event.app, event.url.pathname) ?? mapProblemError(() => baseUrl);
  return mapError(error, event);
}

/**
 * The error mapper of the catalog routes and the site: a Problem. Unexpected errors are logged without their detail
 * reaching the client; a request its client aborted is neither logged nor answered.
 */
export function mapProblemError(baseUrl: () => string): ErrorMapper {
  return (thrown, event) => {
    const error = toHttpError(thrown);
    if (isClientGone(error, event)) return new FastResponse(null, { status: CLIENT_CLOSED });
    const expected = isExpected(error);
    const headers = errorHeaders(error, PROBLEM_CONTENT_TYPE);
    const status = expected ? error.status : 500;
    const message = expected ? error.message : 'An unexpected error occurred; it has been logged.';
    const pathname = event.url.pathname;
    const problem = renderProblem(problemKindForStatus(status), message, baseUrl(), pathname.length <= 300 ? pathname : undefined);
    if (status !== problem.status) problem.status = status;
    return new FastResponse(JSON.stringify(problem), { status, headers });
  };
}

/** The error mapper of the query routes: `{code, message}` as JSON, from the QUERY_ERRORS catalog. */
export function mapQueryError(thrown: unknown, event: H3Event): Response {
  const error = toHttpError(thrown);
  if (isClientGone(error, event)) return new FastResponse(null, { status: CLIENT_CLOSED });
  const failure = error.cause instanceof QueryFailure ? error.cause : undefined;
  const expected = failure !== undefined || isExpected(error);
  const headers = errorHeaders(error, 'application/json');
  const body = failure?.body ?? (expected ? fromHttpError(error) : describeQueryError('internal_error'));
  if (failure?.retryAfter !== undefined) headers.set('retry-after', String(failure.retryAfter));
  return new FastResponse(JSON.stringify({ code: body.code, message: body.message }), { status: body.status, headers });
}

/**
 * The error mapper of an OGC API (STAC API, OGC API - Features): an exception document `{code, description}` in the
 * API's vocabulary (core/api/ogc-exception.ts). The query engine's failures keep their QUERY_ERRORS code and status;
 * anything unknown is logged and answered 500 without its detail.
 */
export function mapOgcError(api: OgcApi): ErrorMapper {
  return (error, event) => {
    if (HTTPError.isError(error)) return respondRefusal(api, error, event);
    let failure: OgcApiFailure;
    if (error instanceof OgcApiFailure) failure = error;
    else if (error instanceof QueryFailure) {
      failure = new OgcApiFailure(error.body.status, error.body.code, error.body.message, error.retryAfter === undefined ? {} : { 'retry-after': String(error.retryAfter) });
    } else {
      console.error(api === 'stac' ? 'unexpected error in the STAC API' : 'unexpected error on /features', error);
      failure = ogcFailure(500, 'An unexpected error occurred; it has been logged.');
    }
    return respondOgcException(api, event.req, failure);
  };
}

/** What h3 refused on a path of an OGC API before routing (a malformed URL), in the API's vocabulary. */
function respondRefusal(api: OgcApi, error: HTTPError, event: H3Event): Response {
  if (isClientGone(error, event)) return new FastResponse(null, { status: CLIENT_CLOSED });
  const expected = isExpected(error);
  const status = expected ? error.status : 500;
  const message = expected ? error.message : 'An unexpected error occurred; it has been logged.';
  const description = status === 400 && !canDecode(event.url.pathname) ? 'The path is not valid percent-encoding.' : message;
  return respondOgcException(api, event.req, refusedRequestFailure(status, description));
}

/** Writes an exception document; /features states its length even on a HEAD, as it always has, STAC does not. */
function respondOgcException(api: OgcApi, request: Request, failure: OgcApiFailure): Response {
  const text = JSON.stringify(failure.body);
  const headers: Record<string, string> = { ...CORS_HEADERS, ...failure.headers, 'content-type': 'application/json', 'cache-control': 'no-store' };
  if (api === 'features') headers['content-length'] = String(Buffer.byteLength(text));
  return new FastResponse(request.method === 'HEAD' ? null : text, { status: failure.status, headers });
}

/** A query error from an HTTPError that h3 raised or a route threw with a catalog code in `data`. */
function fromHttpError(error: HTTPError): QueryErrorBody {
  const code = (error.data as { code?: string } | undefined)?.code;
  if (code !== undefined && isQueryErrorCode(code)) return { code, status: error.status, message: error.message, hint: QUERY_ERRORS[code].hint };
  if (error.status === 404) return describeQueryError('not_found');
  return { ...describeQueryError('invalid_request', error.message), status: error.status };
}

/** A thrown value as h3 reads it: an HTTPError as it is; anything else an unhandled 500 whose cause is the value. */
function toHttpError(thrown: unknown): HTTPError {
  if (HTTPError.isError(thrown)) return thrown;
  // The same steps as h3's own error path (its toError and prepareResponse), whose fields are read-only in its types.
  const error = (thrown instanceof Error ? new HTTPError(thrown) : new HTTPError({ status: 500 })) as { -readonly [K in keyof HTTPError]: HTTPError[K] };
  error.unhandled = true;
  if (!(thrown instanceof Error)) error.cause = thrown;
  return error as HTTPError;
}

/** Whether an error is one the server meant to answer (a bad request, a busy engine); an unexpected one is logged. */
function isExpected(error: HTTPError): boolean {
  const expected = error.cause instanceof QueryFailure || (!error.unhandled && (error.status < 500 || error.status === 502 || error.status === 503 || error.status === 504));
  if (!expected) console.error('unexpected error', error.cause ?? error);
  return expected;
}

/** The headers of an error answer: its own (Allow on a 405), CORS, never stored, and its content type. */
function errorHeaders(error: HTTPError, contentType: string): Headers {
  const headers = new Headers(error.headers);
  for (const [name, value] of Object.entries(CORS_HEADERS)) headers.set(name, value);
  headers.set('cache-control', 'no-store');
  headers.set('content-type', contentType);
  return headers;
}

function isClientGone(error: HTTPError, event: H3Event): boolean {
  return event.req.signal?.aborted === true || isAbort(error.cause);
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
