import { cacheControlOf } from '../core/static-files.ts';

/** CORS headers of every response: any origin may read the catalog and call the query routes. */
export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ETag, Content-Encoding, Content-Length, Content-Range, Accept-Ranges, X-Geoshelf-Tile-Truncated, Retry-After',
} as const;

/** Headers of a preflight answer: the methods and request headers any route accepts. */
export const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'access-control-allow-methods': 'GET, HEAD, POST, OPTIONS',
  'access-control-allow-headers': 'Content-Type, X-Service-Query-Token, If-None-Match, Range',
  'access-control-max-age': '86400',
} as const;

/** What the headers of a body response depend on. */
export interface BodyHeaderOptions {
  type: string;
  sha256: string;
  encoding: 'identity' | 'br' | 'gzip';
  /** Whether compressed variants exist, so caches must key on Accept-Encoding. */
  varies: boolean;
  cacheMaxAge: number;
  /** Key of a file of the tree, whose name may make it immutable; absent for computed answers. */
  key?: string;
}

/**
 * Headers of a catalog body, static or computed alike: content type, CORS, caching, and an ETag that is the
 * content hash, suffixed by the encoding so each variant has its own.
 */
export function bodyHeaders(options: BodyHeaderOptions): [string, string][] {
  const suffix = options.encoding === 'br' ? '.br' : options.encoding === 'gzip' ? '.gz' : '';
  const headers: [string, string][] = [
    ...Object.entries(CORS_HEADERS),
    ['content-type', options.type],
    ['etag', `"${options.sha256}${suffix}"`],
    ['cache-control', cacheControlOf(options.key ?? '', options.cacheMaxAge)],
  ];
  if (options.varies) headers.push(['vary', 'Accept-Encoding']);
  if (options.encoding !== 'identity') headers.push(['content-encoding', options.encoding]);
  return headers;
}
