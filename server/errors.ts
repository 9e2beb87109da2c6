import { HTTPError, type H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { PROBLEM_CONTENT_TYPE } from '../core/constants.ts';
import { problemKindForStatus, renderProblem } from '../core/render/problems.ts';
import { CORS_HEADERS } from './headers.ts';

/** QueryError codes by status, used when a thrown error names no code of its own. */
const DEFAULT_QUERY_CODES: Record<number, string> = {
  400: 'invalid_request',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'body_too_large',
  422: 'query_not_executable',
  503: 'query_service_unavailable',
  504: 'query_timeout',
};

/** Throws a QueryError with a stable code; the error renderer turns it into `{code, message}`. */
export function queryError(status: number, code: string, message: string, headers?: HeadersInit): HTTPError {
  return new HTTPError({ status, message, data: { code }, ...(headers ? { headers } : {}) });
}

/**
 * The one error path of the server. Query routes answer `{code, message}` as JSON; every other route answers a
 * Problem as application/problem+json. Unexpected errors are logged without their detail reaching the client.
 */
export function renderError(error: HTTPError, event: H3Event, baseUrl: string): Response {
  const status = error.unhandled || error.status >= 500 && error.status !== 502 && error.status !== 503 && error.status !== 504 ? 500 : error.status;
  if (status === 500) console.error('unexpected error', error.cause ?? error);
  const message = status === 500 ? 'An unexpected error occurred; it has been logged.' : error.message;
  const headers = new Headers(error.headers);
  for (const [name, value] of Object.entries(CORS_HEADERS)) headers.set(name, value);
  headers.set('cache-control', 'no-store');
  const pathname = event.url.pathname;
  if (pathname === '/api/queries' || pathname.startsWith('/api/queries/')) {
    const code = (error.data as { code?: string } | undefined)?.code ?? DEFAULT_QUERY_CODES[status] ?? 'internal_error';
    headers.set('content-type', 'application/json');
    return new FastResponse(JSON.stringify({ code, message }), { status, headers });
  }
  headers.set('content-type', PROBLEM_CONTENT_TYPE);
  const problem = renderProblem(problemKindForStatus(status), message, baseUrl, pathname.length <= 300 ? pathname : undefined);
  if (status !== problem.status) problem.status = status;
  return new FastResponse(JSON.stringify(problem), { status, headers });
}
