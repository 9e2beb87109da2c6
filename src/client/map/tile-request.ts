/**
 * The token of a query result goes only to that result's tiles: MapLibre's
 * transformRequest adds the header to URLs under the tile template's
 * origin and path prefix, and to nothing else (basemap, other origins).
 */
import type { RequestParameters, RequestTransformFunction } from 'maplibre-gl';

/** Where a result's tiles live and the header that carries its token. */
export type TileAuth = { prefix: string; header: string; token: string };

/**
 * The absolute URL prefix of a tile template: everything before its first
 * placeholder, resolved against `base` (the page) when the template is relative.
 *
 * @example readTilePrefix('http://q.example/api/queries/abc/tiles/{z}/{x}/{y}.mvt', location.href)
 * // 'http://q.example/api/queries/abc/tiles/'
 */
export function readTilePrefix(template: string, base: string): string {
  const placeholder = template.indexOf('{');
  return new URL(placeholder === -1 ? template : template.slice(0, placeholder), base).href;
}

/** True when `url` is under the prefix, on the same origin (so a look-alike host never gets the token). */
export function isUnderPrefix(url: string, prefix: string, base: string): boolean {
  try {
    const resolved = new URL(url, base);
    return resolved.origin === new URL(prefix).origin && resolved.href.startsWith(prefix);
  } catch {
    return false;
  }
}

/** A transformRequest that reads the current TileAuth on each request, so a new result's token replaces the old one. */
export function createTileRequestTransform(readAuth: () => TileAuth | null, base: () => string): RequestTransformFunction {
  return (url: string): RequestParameters | undefined => {
    const auth = readAuth();
    if (auth === null || !isUnderPrefix(url, auth.prefix, base())) return undefined;
    return { url, headers: { [auth.header]: auth.token } };
  };
}
