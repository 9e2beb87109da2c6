const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json',
  jsonld: 'application/ld+json',
  geojson: 'application/geo+json',
  wasm: 'application/wasm',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
  txt: 'text/plain; charset=utf-8',
  xml: 'application/xml',
  atom: 'application/atom+xml',
  woff2: 'font/woff2',
};

/** Content type of a site file by its extension; binary data for anything unknown. */
export function contentTypeOf(key: string): string {
  const extension = /\.([a-z0-9]+)$/i.exec(key)?.[1]?.toLowerCase();
  return (extension && TYPES[extension]) ?? 'application/octet-stream';
}
