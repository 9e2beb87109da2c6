import { hash } from 'node:crypto';
import type { H3, H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { describeQueryError, queryFailure } from '../query/errors.ts';
import { MAX_TILE_ZOOM } from '../core/geo/mvt.ts';
import type { QueryService, TileAddress } from '../query/service.ts';
import { queryHttpError } from './errors.ts';
import { CORS_HEADERS } from './headers.ts';
import { matchesEtag } from './responses.ts';

/** Largest request body of the query routes (contract section 8). */
export const MAX_BODY_BYTES = 64 * 1024;
const TOKEN_HEADER = 'x-service-query-token';
const TILE_TYPE = 'application/vnd.mapbox-vector-tile';
/** A canonical non-negative decimal: `Number()` would also take `0x1`, `1e0` and `+1`. */
const DECIMAL = /^(0|[1-9][0-9]{0,7})$/;

/** Options of the query routes. */
export interface QueryRouteOptions {
  /** Seconds a CDN may keep a tile: a tile URL is only usable while its token lives. */
  tileMaxAge: number;
}

/**
 * Registers the four query routes (contract 4.3) as thin adapters over the query service: read the request,
 * call the service, write its answer. Errors are QueryFailures that the app's error renderer turns into
 * `{code, message}`; wrong methods on known routes answer 405 with Allow, anything else under /api/queries 404.
 */
export function registerQueryRoutes(app: H3, service: QueryService, options: QueryRouteOptions): void {
  const token = (event: H3Event) => event.req.headers.get(TOKEN_HEADER);
  const queryId = (event: H3Event) => event.context.params?.query_id ?? '';

  app.post('/api/queries', async (event) => json(await service.run(await readJsonBody(event))));
  app.post('/api/queries/:query_id/pages', async (event) => json(await service.page(queryId(event), token(event), await readJsonBody(event))));
  for (const method of ['GET', 'HEAD'] as const) {
    app.on(method, '/api/queries/:query_id/bounds', async (event) => json(await service.bounds(queryId(event), token(event)), event.req.method === 'HEAD'));
    app.on(method, '/api/queries/:query_id/tiles/:z/:x/:tile', async (event) => {
      const address = readTileAddress(event.context.params ?? {});
      if (!address) throw queryFailure('not_found');
      const tile = await service.tile(queryId(event), token(event) ?? event.url.searchParams.get('token'), address);
      return respondTile(event.req, tile, options.tileMaxAge);
    });
  }
  app.all('/api/queries', () => methodNotAllowed('POST'));
  app.all('/api/queries/**', (event) => {
    const parts = event.url.pathname.split('/');
    if (parts.length === 5 && parts[4] === 'pages') return methodNotAllowed('POST');
    if (parts.length === 5 && parts[4] === 'bounds') return methodNotAllowed('GET, HEAD');
    if (parts.length === 8 && parts[4] === 'tiles' && readTileAddress({ z: parts[5]!, x: parts[6]!, tile: parts[7]! })) return methodNotAllowed('GET, HEAD');
    throw queryFailure('not_found');
  });
}

/**
 * Reads `{z}/{x}/{y}.mvt` from the path. Returns undefined when the path is not shaped like a tile (h3 then goes
 * on to the 404); a tile-shaped path whose numbers are not canonical decimals is `invalid_tile`.
 */
function readTileAddress(params: Record<string, string>): TileAddress | undefined {
  const match = /^([^./]+)\.mvt$/.exec(params.tile ?? '');
  if (!match) return undefined;
  const [z, x, y] = [params.z ?? '', params.x ?? '', match[1]!];
  if (![z, x, y].every((part) => DECIMAL.test(part))) throw queryFailure('invalid_tile', MAX_TILE_ZOOM);
  return { z: Number(z), x: Number(x), y: Number(y) };
}

/**
 * Answers a tile: 204 when empty. A tile is fixed by its query (the token names it), so its ETag is its content
 * hash and a CDN may keep it; the URL holds the query id, 144 random bits, which only a token holder learns.
 */
function respondTile(request: Request, tile: { bytes: Uint8Array; features: number; truncated: boolean }, maxAge: number): Response {
  const etag = `"${hash('sha256', tile.bytes, 'base64url').slice(0, 27)}"`;
  const headers: Record<string, string> = { ...CORS_HEADERS, 'content-type': TILE_TYPE, 'cache-control': `public, max-age=${maxAge}`, etag };
  if (tile.truncated) headers['x-geoshelf-tile-truncated'] = 'true';
  if (matchesEtag(request.headers.get('if-none-match'), etag.slice(1, -1))) return new FastResponse(null, { status: 304, headers });
  if (tile.features === 0) return new FastResponse(null, { status: 204, headers });
  headers['content-length'] = String(tile.bytes.byteLength);
  return new FastResponse(request.method === 'HEAD' ? null : (tile.bytes as Uint8Array<ArrayBuffer>), { headers });
}

function methodNotAllowed(allowed: string): never {
  throw queryHttpError(describeQueryError('method_not_allowed', allowed), { allow: `${allowed}, OPTIONS` });
}

/** Reads a JSON body of at most 64 KiB; a larger body, or one that is not JSON, is a QueryFailure. */
async function readJsonBody(event: H3Event): Promise<unknown> {
  const declared = Number(event.req.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw queryFailure('body_too_large', MAX_BODY_BYTES);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = event.req.body?.getReader();
  for (;;) {
    const next = reader ? await reader.read() : { done: true as const, value: undefined };
    if (next.done) break;
    size += next.value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader?.cancel();
      throw queryFailure('body_too_large', MAX_BODY_BYTES);
    }
    chunks.push(next.value);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw queryFailure('invalid_json');
  }
}

function json(body: unknown, head = false): Response {
  const text = JSON.stringify(body);
  return new FastResponse(head ? null : text, {
    headers: { ...CORS_HEADERS, 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': String(Buffer.byteLength(text)) },
  });
}
