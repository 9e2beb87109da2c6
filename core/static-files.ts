import { PROBLEM_DIR } from './constants.ts';

/** A file of the static tree: its key under dist/, its bytes and its content type. */
export interface TreeFile {
  key: string;
  body: Uint8Array;
  type: string;
}

const encoder = new TextEncoder();

/**
 * Serialises a JSON document the one way every file and computed answer uses: compact, key order as built.
 * The bytes have their own exact-size memory, so handing them to a worker thread copies only them.
 */
export function serializeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/**
 * Maps a URL path outside /api to its key: a last segment with an extension is the file itself, anything
 * else is a clean URL stored as `index.json`. Returns undefined for paths that could escape the tree.
 * @example fileKeyForPath('/.well-known/api-catalog') // '.well-known/api-catalog/index.json'
 */
export function fileKeyForPath(pathname: string): string | undefined {
  const segments = pathname.split('/').slice(1);
  if (segments.at(-1) === '') segments.pop();
  if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes('\\') || segment.includes('\0'))) return undefined;
  if (segments.length === 0) return undefined;
  const last = segments.at(-1)!;
  return /\.[a-z0-9]+$/i.test(last) ? segments.join('/') : `${segments.join('/')}/index.json`;
}

/**
 * The keys a path outside /api may be stored under, in the order to try them: a web app page
 * (`<path>/index.html`, `index.html` for `/`), then the static-tree file of `fileKeyForPath`.
 * @example fileKeysForPath('/collections/geonames/') // ['collections/geonames/index.html', 'collections/geonames/index.json']
 */
export function fileKeysForPath(pathname: string): string[] {
  if (/^\/*$/.test(pathname)) return ['index.html'];
  const key = fileKeyForPath(pathname);
  if (key === undefined) return [];
  return key.endsWith('/index.json') ? [`${key.slice(0, -'index.json'.length)}index.html`, key] : [key];
}

/** Key of the static 404 Problem that a CDN serves for unknown /api paths. */
export const NOT_FOUND_KEY = `api/${PROBLEM_DIR}/not-found.json`;

/** Content-hashed names of the web app's scripts, styles and wasm: their bytes never change under one name. */
const IMMUTABLE_PREFIX = '_site/assets/';
const YEAR_SECONDS = 31_536_000;

/**
 * The `Cache-Control` of a file of the tree, the same from the server and from a bucket `npm run publish` filled:
 * long and immutable for content-hashed assets, `max-age` (GEOSHELF_CACHE_MAX_AGE) for everything else.
 * @example cacheControlOf('_site/assets/app.3f2a.js', 300) // 'public, max-age=31536000, immutable'
 */
export function cacheControlOf(key: string, maxAge: number): string {
  return key.startsWith(IMMUTABLE_PREFIX) ? `public, max-age=${YEAR_SECONDS}, immutable` : `public, max-age=${maxAge}`;
}
