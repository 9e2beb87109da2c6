/**
 * A Cloudflare Worker that serves a geoshelf build from the R2 bucket `npm run publish` filled, and sends the
 * server only what the bucket cannot answer. Copy it with `core/` beside it; docs/static-tree.md ("An edge rule")
 * says how to deploy it, and tests/cloudflare-worker.test.ts runs it in workerd.
 */
import { fileKeyForRoute, resolveApiUrl } from '../core/api/catalog/resolve.ts';
import { fileKeysForPath, NOT_FOUND_KEY } from '../core/static-files.ts';

/** The Worker's bindings: the bucket, the prefix publish wrote under (`site/v1/`, or empty) and the server's origin. */
export interface Env {
  BUCKET: Bucket;
  PREFIX?: string;
  ORIGIN: string;
}

/** The part of R2's Workers API used here (`R2Bucket` in @cloudflare/workers-types). */
interface Bucket {
  get(key: string, options?: { range?: Headers }): Promise<StoredBody | null>;
  head(key: string): Promise<StoredObject | null>;
}
interface StoredObject {
  size: number;
  customMetadata?: Record<string, string>;
  range?: { offset?: number; length?: number; suffix?: number };
  /** Sets Content-Type, Content-Encoding and Cache-Control as publish stored them. */
  writeHttpMetadata(headers: Headers): void;
}
interface StoredBody extends StoredObject {
  body: ReadableStream;
}

/** Routes only the server can answer: queries, zip downloads, the STAC API, OGC API - Features and MCP. */
const DYNAMIC = /^\/(api\/queries|stac\/api|features|mcp)(\/|$)|\/download-zip$/;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const { pathname } = url;
    if ((request.method !== 'GET' && request.method !== 'HEAD') || DYNAMIC.test(pathname)) return forward(request, url, env);
    if (pathname === '/api' || pathname.startsWith('/api/')) {
      const resolution = resolveApiUrl(pathname, url.searchParams);
      if (!resolution.ok && resolution.status === 404) return (await serve(request, env, [NOT_FOUND_KEY], 404)) ?? forward(request, url, env);
      // A slice that was not prebuilt, or a bad parameter (400): the server answers with the bytes a file would hold.
      const key = resolution.ok ? fileKeyForRoute(resolution.route) : undefined;
      return (key !== undefined ? await serve(request, env, [key]) : undefined) ?? forward(request, url, env);
    }
    const path = decode(pathname);
    if (path?.startsWith('/data/')) return (await serveData(request, env, path.slice(1))) ?? notFound(request, env);
    // Pages ignore the query string (`/search/?q=`, `/console/?source=` are read by the page), so they need no server.
    return (await serve(request, env, path === undefined ? [] : fileKeysForPath(path))) ?? notFound(request, env);
  },
};

/** The first of `keys` in the bucket, as its `.br` or `.gz` sibling when the client takes one; undefined if none is there. */
async function serve(request: Request, env: Env, keys: string[], status = 200): Promise<Response | undefined> {
  const accepted = clientEncodings(request);
  const suffixes = [...(/\bbr\b/.test(accepted) ? ['.br'] : []), ...(/\bgzip\b/.test(accepted) ? ['.gz'] : []), ''];
  for (const key of keys) {
    // Files under 1,024 bytes have no siblings: those lookups miss, and the plain file answers.
    for (const suffix of suffixes) {
      const object = await read(request, env, key + suffix);
      if (!object) continue;
      const headers = headersOf(object, suffix);
      headers.set('vary', 'Accept-Encoding');
      if (status !== 200) headers.delete('etag');
      else if (matches(request, object)) return notModified(object, headers);
      return respond(request, object, { status, headers });
    }
  }
  return undefined;
}

/** A data file (`data/<path>`), with single byte ranges: the file page reads GeoParquet footers and row groups so. */
async function serveData(request: Request, env: Env, key: string): Promise<Response | undefined> {
  const object = await read(request, env, key, true).catch(() => 'unsatisfiable' as const);
  if (object === 'unsatisfiable') return new Response(null, { status: 416 });
  if (!object) return undefined;
  const headers = headersOf(object, '');
  headers.set('accept-ranges', 'bytes');
  headers.set('access-control-expose-headers', 'ETag, Content-Length, Content-Range, Accept-Ranges');
  if (matches(request, object)) return notModified(object, headers);
  // R2 reads the Range header itself; one it cannot use (several ranges, past the end) gives the whole file: a 200.
  const { suffix, offset = 0, length = object.size - offset } = object.range ?? {};
  const [start, count] = suffix === undefined ? [offset, length] : [object.size - suffix, suffix];
  if (count >= object.size || !('body' in object)) return respond(request, object, { headers });
  headers.set('content-range', `bytes ${start}-${start + count - 1}/${object.size}`);
  return new Response(object.body, { status: 206, headers });
}

/** HEAD reads the metadata only; GET the body too (a byte range of it for data files). */
async function read(request: Request, env: Env, key: string, ranged = false): Promise<StoredObject | StoredBody | null> {
  const fullKey = (env.PREFIX ?? '') + key;
  if (request.method === 'HEAD') return env.BUCKET.head(fullKey);
  return env.BUCKET.get(fullKey, ranged ? { range: request.headers } : undefined);
}

function headersOf(object: StoredObject, suffix: string): Headers {
  const headers = new Headers({ 'access-control-allow-origin': '*', etag: `"${object.customMetadata?.sha256}${suffix}"` });
  object.writeHttpMetadata(headers);
  return headers;
}

/** Whether If-None-Match names this content; the ETag of any encoding does, as on the server. */
function matches(request: Request, object: StoredObject): boolean {
  const tags = request.headers.get('if-none-match')?.split(',') ?? [];
  return tags.some((tag) => tag.trim().replace(/^W\//, '').replace(/"/g, '').split('.')[0] === object.customMetadata?.sha256);
}

function notModified(object: StoredObject, headers: Headers): Response {
  if ('body' in object) void (object as StoredBody).body.cancel();
  return new Response(null, { status: 304, headers });
}

function respond(request: Request, object: StoredObject, init: { status?: number; headers: Headers }): Response {
  init.headers.set('content-length', String(object.size));
  const body = request.method === 'HEAD' ? null : (object as StoredBody).body;
  // 'manual': the body is already brotli or gzip as Content-Encoding says; workerd must not encode it again.
  return new Response(body, { ...init, encodeBody: 'manual' } as ResponseInit);
}

/** The web app's 404 page with status 404. */
async function notFound(request: Request, env: Env): Promise<Response> {
  return (await serve(request, env, ['404.html'], 404)) ?? new Response('Not found', { status: 404 });
}

/** Sends the request on to the geoshelf server, asking for the encodings the client takes; 502 when it cannot be reached. */
async function forward(request: Request, url: URL, env: Env): Promise<Response> {
  const forwarded = new Request(env.ORIGIN + url.pathname + url.search, request);
  forwarded.headers.set('accept-encoding', clientEncodings(request) || 'identity');
  try {
    return await fetch(forwarded);
  } catch {
    return new Response('The geoshelf server cannot be reached.', { status: 502 });
  }
}

/**
 * The client's Accept-Encoding. Cloudflare hands the Worker `br, gzip` whatever the client sent, and keeps the
 * original in `request.cf.clientAcceptEncoding`; choosing by it gives each client a body and ETag of its own encoding.
 */
function clientEncodings(request: Request): string {
  const cf = (request as { cf?: { clientAcceptEncoding?: string } }).cf;
  return cf?.clientAcceptEncoding ?? request.headers.get('accept-encoding') ?? '';
}

function decode(pathname: string): string | undefined {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
}
