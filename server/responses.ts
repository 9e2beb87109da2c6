import { hash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from 'node:zlib';
import { FastResponse } from 'srvx';
import { COMPRESS_MIN_BYTES } from '../core/constants.ts';
import { bodyHeaders } from './headers.ts';
import { parseAcceptEncoding, type StaticBody } from './static-store.ts';

/** Options of a computed body response. */
export interface BodyResponseOptions {
  status?: number;
  type: string;
  cacheMaxAge: number;
}

/** Whether any entity tag in If-None-Match names this content (any encoding of it). */
export function matchesEtag(header: string | null, sha256: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '').replace(/"/g, '').split('.')[0] === sha256);
}

/**
 * Answers a file of the static tree with its prepared headers: 304 on a matching ETag, HEAD without body.
 * `ifNoneMatch` may be passed when the caller already has it, to spare reading the headers again.
 */
export function respondStatic(request: Request, body: StaticBody, ifNoneMatch = request.headers.get('if-none-match')): Response {
  if (ifNoneMatch && matchesEtag(ifNoneMatch, body.entry.sha256)) return new FastResponse(null, { status: 304, headers: body.headers });
  if (request.method === 'HEAD') return new FastResponse(null, { status: 200, headers: [...body.headers, ['content-length', String(body.bytes.length)]] });
  return new FastResponse(asBody(body.bytes), { status: 200, headers: body.headers });
}

/**
 * Bodies at least this large are compressed on libuv's thread pool rather than on the event loop. Measured here on
 * 1.4 MB of GeoJSON points: brotli at quality 4 took 77–87 ms, gzip at level 4 13–16 ms (about 5.5 and 1 ms per
 * 100 KB), so a page of 10,000 features compressed in place would hold the loop for a tenth of a second.
 */
const COMPRESS_OFF_THREAD_BYTES = 64 * 1024;
const brotliOffThread = promisify(brotliCompress);
const gzipOffThread = promisify(gzip);

/**
 * Answers a computed JSON body like a static file: ETag from its hash, compressed on the fly when accepted (off the
 * event loop for a large body, so the answer is then a promise).
 */
export function respondComputed(request: Request, bytes: Uint8Array, options: BodyResponseOptions): Response | Promise<Response> {
  const sha256 = hash('sha256', bytes, 'hex');
  const compressible = bytes.length >= COMPRESS_MIN_BYTES;
  const accepted = compressible ? parseAcceptEncoding(request.headers.get('accept-encoding')) : { br: false, gzip: false };
  const encoding = accepted.br ? 'br' : accepted.gzip ? 'gzip' : 'identity';
  const headers = bodyHeaders({ type: options.type, sha256, encoding, varies: compressible, cacheMaxAge: options.cacheMaxAge });
  const status = options.status ?? 200;
  if (status === 200 && matchesEtag(request.headers.get('if-none-match'), sha256)) return new FastResponse(null, { status: 304, headers });
  const respond = (sent: Uint8Array) => {
    headers.push(['content-length', String(sent.length)]);
    return new FastResponse(request.method === 'HEAD' ? null : asBody(sent), { status, headers });
  };
  if (encoding === 'identity') return respond(bytes);
  const brotli = { params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } };
  if (bytes.length >= COMPRESS_OFF_THREAD_BYTES) {
    return (encoding === 'br' ? brotliOffThread(bytes, brotli) : gzipOffThread(bytes, { level: 4 })).then(respond);
  }
  return respond(encoding === 'br' ? brotliCompressSync(bytes, brotli) : gzipSync(bytes, { level: 4 }));
}

/** Bytes as a fetch body (Uint8Arrays over a plain ArrayBuffer here). */
export function asBody(bytes: Uint8Array): BodyInit {
  return bytes as unknown as Uint8Array<ArrayBuffer>;
}
