import type { H3, H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { describeQueryError, queryFailure } from '../query/errors.ts';
import { serializeQueryResult } from '../query/page.ts';
import { MAX_QUERY_BODY_BYTES } from '../core/constants.ts';
import { MAX_TILE_ZOOM } from '../core/geo/mvt.ts';
import type { QueryService, QueryTile } from '../query/service.ts';
import { serverTiming, startSteps, STEP, type StepClock } from '../query/steps.ts';
import { QUERY_ROUTES, QUERY_TOKEN_HEADER, TILE_CONTENT_TYPE } from '../core/api/catalog/routes.ts';
import type { DownloadFormat } from '../core/api/download-formats.ts';
import { renderQueryTileset } from '../core/api/ogc/tiles.ts';
import { readJsonBody } from './body.ts';
import { requestClientOf } from './client-address.ts';
import { mapQueryError, queryHttpError } from './errors.ts';
import { CORS_HEADERS } from './headers.ts';
import { prefersArrow, respondArrowPage, respondDownload } from './query-formats.ts';
import { matchesEtag } from './responses.ts';
import { mountRouteTable } from './surface-kit.ts';

/** Options of the query routes. */
export interface QueryRouteOptions {
  /** Seconds a CDN may keep a tile: a tile URL is only usable while its token lives. */
  tileMaxAge: number;
  /** Milliseconds a download's client may take no bytes before the response is cut (GEOSHELF_SEND_IDLE_TIMEOUT_MS). */
  sendIdleTimeoutMs: number;
  /** The `{base_url}` of the build in force, which a tileset's tile template starts with. */
  baseUrl: () => string;
}

/**
 * Mounts the query routes (contract 4.3, and the download route) from their declarations in the route table, as thin
 * adapters over the query service: read the request, call the service, write its answer. A GET route answers HEAD
 * too. Errors are QueryFailures answered as `{code, message}` (server/errors.ts `mapQueryError`); another method on
 * a known route answers 405 with Allow, and any other path under /api/queries 404.
 */
export function registerQueryRoutes(app: H3, service: QueryService, options: QueryRouteOptions): void {
  const token = (event: H3Event) => event.req.headers.get(QUERY_TOKEN_HEADER);
  /**
   * The token of a GET route: the header, else the token query parameter the route table declares (map clients
   * and links cannot set headers; map_configuration names both). Pages are POSTs with a JSON body, sent by clients
   * that can set a header, so they take the header only and keep tokens out of URLs and logs.
   */
  const tokenOf = (event: H3Event, route: typeof QUERY_ROUTES.getQueryBounds | typeof QUERY_ROUTES.getQueryTile | typeof QUERY_ROUTES.getQueryDownload) => {
    const query = route.parseQuery(event.url.searchParams);
    if (!query.ok) throw queryFailure('invalid_request', query.detail);
    return token(event) ?? query.value.token;
  };
  mountRouteTable(app, {
    routes: QUERY_ROUTES,
    handlers: {
      // An Accept that prefers Arrow gets the page as an Arrow IPC stream (server/query-formats.ts); JSON otherwise.
      createQuery: async (event) => {
        const steps = startSteps();
        const body = await readQueryBody(event);
        steps.lap(STEP.body);
        return timed(prefersArrow(event.req.headers.get('accept'))
          ? respondArrowPage(await service.runArrow(body, requestClientOf(event), { steps }))
          : jsonBytes(serializeQueryResult(await service.run(body, requestClientOf(event), { steps }))), steps);
      },
      getQueryPage: async (event, { query_id }) => {
        const steps = startSteps();
        const body = await readQueryBody(event);
        steps.lap(STEP.body);
        return timed(prefersArrow(event.req.headers.get('accept'))
          ? respondArrowPage(await service.pageArrow(String(query_id), token(event), body, requestClientOf(event), { steps }))
          : jsonBytes(serializeQueryResult(await service.page(String(query_id), token(event), body, requestClientOf(event), { steps }))), steps);
      },
      getQueryBounds: async (event, { query_id }) => {
        const steps = startSteps();
        const bounds = await service.bounds(String(query_id), tokenOf(event, QUERY_ROUTES.getQueryBounds), requestClientOf(event), { steps });
        return timed(json(bounds, event.req.method === 'HEAD'), steps);
      },
      getQueryTile: async (event, { query_id, z, x, y }) => {
        const steps = startSteps();
        const address = { z: Number(z), x: Number(x), y: Number(y) };
        const tile = await service.tile(String(query_id), tokenOf(event, QUERY_ROUTES.getQueryTile), address, requestClientOf(event), { steps });
        return timed(respondTile(event.req, tile, options.tileMaxAge), steps);
      },
      getQueryTileset: async (event, { query_id }) => {
        const query = QUERY_ROUTES.getQueryTileset.parseQuery(event.url.searchParams);
        if (!query.ok) throw queryFailure('invalid_request', query.detail);
        const queryToken = token(event) ?? query.value.token;
        const { bounds } = await service.bounds(String(query_id), queryToken, requestClientOf(event), { steps: startSteps() });
        return json(renderQueryTileset(options.baseUrl(), String(query_id), queryToken!, bounds, query.value.f ?? 'json'), event.req.method === 'HEAD');
      },
      getQueryDownload: async (event, { query_id, format }) => {
        const file = await service.download(String(query_id), tokenOf(event, QUERY_ROUTES.getQueryDownload), format as DownloadFormat, requestClientOf(event));
        return respondDownload(event.req, String(query_id), format as DownloadFormat, file, options.sendIdleTimeoutMs);
      },
    },
    invalidPath: (path) => {
      throw path.name === 'query_id' ? queryFailure('invalid_query_id') : path.name === 'format' ? queryFailure('unknown_download_format') : queryFailure('invalid_tile', MAX_TILE_ZOOM);
    },
    methodNotAllowed: (methods) => {
      throw queryHttpError(describeQueryError('method_not_allowed', methods.join(', ')), { allow: `${methods.join(', ')}, OPTIONS` });
    },
    notFound: () => {
      throw queryFailure('not_found');
    },
  }, mapQueryError);
}

/**
 * Answers a tile: 204 when empty. A tile is fixed by its query (the token names it), so its ETag is its content
 * hash and a CDN may keep it; the URL holds the query id, 144 random bits, which only a token holder learns.
 */
function respondTile(request: Request, tile: QueryTile, maxAge: number): Response {
  const etag = `"${tile.etag}"`;
  const headers: Record<string, string> = { ...CORS_HEADERS, 'content-type': TILE_CONTENT_TYPE, 'cache-control': `public, max-age=${maxAge}`, etag };
  if (tile.truncated) headers['x-geoshelf-tile-truncated'] = 'true';
  if (matchesEtag(request.headers.get('if-none-match'), etag.slice(1, -1))) return new FastResponse(null, { status: 304, headers });
  if (tile.features === 0) return new FastResponse(null, { status: 204, headers });
  headers['content-length'] = String(tile.bytes.byteLength);
  return new FastResponse(request.method === 'HEAD' ? null : (tile.bytes as Uint8Array<ArrayBuffer>), { headers });
}

/**
 * Adds where the request's time went as a Server-Timing header (query/steps.ts), after a last `shape` lap (making
 * the answer): browsers show it beside the request, and `npm run bench -- queries` prints it per step.
 * Timing-Allow-Origin lets a page of another origin read it too.
 */
function timed(response: Response, steps: StepClock): Response {
  steps.lap(STEP.shape);
  response.headers.set('server-timing', serverTiming(steps.steps));
  response.headers.set('timing-allow-origin', '*');
  return response;
}

/** Reads a JSON body of at most 64 KiB; a larger body, or one that is not JSON, is a QueryFailure. */
function readQueryBody(event: H3Event): Promise<unknown> {
  return readJsonBody(event.req, MAX_QUERY_BODY_BYTES, (why, detail) => (why === 'too_large'
    ? queryFailure('body_too_large', MAX_QUERY_BODY_BYTES)
    : why === 'too_deep' ? queryFailure('body_too_deep', detail) : queryFailure('invalid_json')));
}

function json(body: unknown, head = false): Response {
  return jsonBytes(Buffer.from(JSON.stringify(body)), head);
}

function jsonBytes(bytes: Uint8Array, head = false): Response {
  return new FastResponse(head ? null : (bytes as Uint8Array<ArrayBuffer>), {
    headers: { ...CORS_HEADERS, 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': String(bytes.byteLength) },
  });
}
