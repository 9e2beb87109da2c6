import { FastResponse } from 'srvx';
import { ARROW_STREAM_CONTENT_TYPE, QUERY_TOKEN_HEADER } from '../core/api/catalog/routes.ts';
import type { ArrowPage } from '../query/arrow.ts';
import { DOWNLOAD_FORMATS, type DownloadFormat } from '../core/api/download-formats.ts';
import type { ResultFile } from '../query/export.ts';
import { CORS_HEADERS } from './headers.ts';
import { cutWhenIdle } from './send-idle.ts';

/**
 * The HTTP side of Arrow pages and downloads: which format an Accept header asks for, and the headers that carry
 * what a JSON body would (every QueryResult field but rows, columns and map_configuration, as
 * `X-Geoshelf-<Field-Name>`, and the token as X-Service-Query-Token).
 */

/**
 * Whether a request prefers an Arrow page: Accept names application/vnd.apache.arrow.stream with a higher
 * quality than any type JSON matches (application/json, application/*, *\/*). JSON wins ties and is the
 * default; an Accept naming neither also gets JSON, as RFC 9110 allows, because the contract gives the query
 * routes no 406.
 * @example prefersArrow('application/vnd.apache.arrow.stream, application/json;q=0.5') // true
 */
export function prefersArrow(accept: string | null): boolean {
  if (!accept) return false;
  let arrow = 0;
  let json = 0;
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = Number(parameters.find((parameter) => parameter.startsWith('q='))?.slice(2) ?? 1);
    const quality = Number.isFinite(q) ? Math.min(Math.max(q, 0), 1) : 0;
    if (type === ARROW_STREAM_CONTENT_TYPE) arrow = Math.max(arrow, quality);
    else if (type === 'application/json' || type === 'application/*' || type === '*/*') json = Math.max(json, quality);
  }
  return arrow > json;
}

/** Lets a browser script read the headers that carry the answer's facts, besides those every answer exposes. */
function exposeFacts(headers: Record<string, string>): Record<string, string> {
  const facts = Object.keys(headers).filter((name) => /^(x-|content-disposition$)/i.test(name));
  return { ...headers, 'access-control-expose-headers': [CORS_HEADERS['access-control-expose-headers'], ...facts].join(', ') };
}

/** `has_more` → `X-Geoshelf-Has-More`. */
function headerName(field: string): string {
  return `X-Geoshelf-${field.split('_').map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('-')}`;
}

/** A header value: text as it is, numbers and booleans as JSON, lists as JSON with non-ASCII escaped (headers are Latin-1). */
function headerValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** An Arrow page: the stream as the body, its facts as headers. */
export function respondArrowPage(page: ArrowPage): Response {
  const { query_token, ...facts } = page.facts;
  const headers: Record<string, string> = {
    ...CORS_HEADERS,
    'content-type': ARROW_STREAM_CONTENT_TYPE,
    'content-length': String(page.ipc.byteLength),
    'cache-control': 'no-store',
    vary: 'Accept',
    [QUERY_TOKEN_HEADER]: query_token,
  };
  for (const [field, value] of Object.entries(facts)) headers[headerName(field)] = headerValue(value);
  return new FastResponse(page.ipc as Uint8Array<ArrayBuffer>, { headers: exposeFacts(headers) });
}

/**
 * A download: the file as an attachment, streamed, with its row count and warnings as headers. A client that takes
 * no bytes for `idleMs` is cut, which closes the (already deleted) file.
 */
export function respondDownload(request: Request, queryId: string, format: DownloadFormat, file: ResultFile, idleMs: number): Response {
  const headers: Record<string, string> = {
    ...CORS_HEADERS,
    'content-type': DOWNLOAD_FORMATS[format].contentType,
    'content-length': String(file.bytes),
    'content-disposition': `attachment; filename="query-${queryId}.${format}"`,
    'cache-control': 'no-store',
    [headerName('row_count')]: String(file.rows),
    [headerName('warnings')]: headerValue(file.warnings),
  };
  if (request.method === 'HEAD') void file.discard();
  return new FastResponse(request.method === 'HEAD' ? null : cutWhenIdle(file.body, idleMs), { headers: exposeFacts(headers) });
}
