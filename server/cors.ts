/** CORS headers of every response: any origin may read the catalog and call the query routes. */
export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ETag, Content-Encoding, Content-Length, X-Geoshelf-Tile-Truncated, Retry-After',
} as const;

/** Headers of a preflight answer: the methods and request headers any route accepts. */
export const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'access-control-allow-methods': 'GET, HEAD, POST, OPTIONS',
  'access-control-allow-headers': 'Content-Type, X-Service-Query-Token, If-None-Match, Range',
  'access-control-max-age': '86400',
} as const;
