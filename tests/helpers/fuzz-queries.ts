import fc from 'fast-check';
import { QUERY_ROUTES, QUERY_TOKEN_HEADER } from '../../core/api/catalog/routes.ts';
import { MAX_TILE_ZOOM } from '../../core/geo/mvt-tile-math.ts';
import { checkRequests, jsonPost, type FuzzContext, type FuzzRunOptions, type FuzzTally } from './fuzz.ts';
import type { FuzzRequest } from './fuzz-server.ts';
import { hostileText, mutatedToken } from './fuzz-values.ts';
import { queryBody, type QueryBodyCase } from './sql-grammar.ts';

/**
 * Query bodies from the SQL grammar: allowed SQL answers 200 or a documented 4xx, 503 or 504; forbidden SQL is
 * refused before it runs: a 400 (the body, the sources or the SQL validator), or a source that is not GeoParquet
 * (422 source_not_queryable, decided from the catalog before any SQL is read). Any other answer, a 200 or an
 * engine's 422, means the SQL reached DuckDB.
 */
export function fuzzQueryBodies(context: FuzzContext, options: FuzzRunOptions): Promise<FuzzTally> {
  return checkRequests(context, 'query bodies', queryBody(context.harvest.sources), (test: QueryBodyCase) => jsonPost(QUERY_ROUTES.createQuery.path, test.body), (test, response) => {
    const refused = response.status === 400 || (response.status === 422 && errorCode(response.body) === 'source_not_queryable');
    if (test.forbidden && !refused) return [`forbidden SQL (${test.forbidden}) was not refused before it ran: ${response.status} ${errorCode(response.body)}`];
    return [];
  }, options, (test, response) => `${test.forbidden ? 'forbidden' : 'allowed'} ${response.status} ${errorCode(response.body)}`);
}

/** A follow-up request of a real query: its page, bounds or a tile, with its token intact or changed. */
interface FollowUp {
  kind: keyof typeof SERVED;
  request: FuzzRequest;
  /** The query_id in the path is the token's own, and the token is its own (byte for byte). */
  ownPair: boolean;
  /** The token's bytes are no real query's token. */
  forged: boolean;
  /** The rest of the request (page body, tile address) is valid. */
  validRest: boolean;
}

/**
 * Statuses that serve a follow-up: a page; bounds, or 422 when the result has no geometry; a tile, empty (204) or
 * not, or 422. 503 and 504 say "later", not "no", so a loaded machine does not fail the property.
 */
const SERVED = { page: [200, 503, 504], bounds: [200, 422, 503, 504], tile: [200, 204, 422, 503, 504] };

/**
 * Pages, bounds and tiles of real queries with tokens as clients mangle them (flipped, cut, another query's,
 * made up) and query ids of other queries: every answer is documented, an untouched id and token pair with a
 * valid request is served (200, or 204/422 where a result has nothing to draw), and a forged token is never served.
 */
export function fuzzQueryFollowUps(context: FuzzContext, options: FuzzRunOptions): Promise<FuzzTally> {
  const tokens = context.queries.map((query) => query.query_token);
  const follow = fc.record({
    query: fc.constantFrom(...context.queries),
    other: fc.constantFrom(...context.queries),
    token: mutatedToken(tokens),
    useOwnToken: fc.boolean(),
    idChoice: fc.constantFrom('own', 'own', 'own', 'other', 'hostile'),
    hostileId: hostileText(),
    kind: fc.constantFrom('page', 'bounds', 'tile'),
    page: fc.record({ offset: fc.oneof(fc.nat({ max: 200 }), fc.constantFrom(-1, 1.5, 2 ** 53, '0')), page_size: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(0, 1001, null)) }),
    tile: fc.tuple(fc.integer({ min: 0, max: MAX_TILE_ZOOM + 1 }), fc.nat(), fc.nat()),
    inQuery: fc.boolean(),
  }).map(({ query, other, token, useOwnToken, idChoice, hostileId, kind, page, tile: [z, x, y], inQuery }): FollowUp => {
    const sent = useOwnToken ? query.query_token : token;
    const id = idChoice === 'own' ? query.query_id : idChoice === 'other' ? other.query_id : encodeURIComponent(hostileId.toWellFormed());
    const header = { [QUERY_TOKEN_HEADER]: sent.replace(/[^\t\x20-\x7e]/g, '?') };
    // The token as the server reads it: a header value loses its surrounding spaces and tabs (RFC 9110 §5.5).
    // Bounds and tiles take the token as a query parameter too, where it arrives as sent.
    const received = kind !== 'page' && inQuery ? sent : header[QUERY_TOKEN_HEADER]!.replace(/^[\t ]+|[\t ]+$/g, '');
    const ownPair = context.queries.some((known) => known.query_id === id && sameBytes(received, known.query_token));
    const forged = !tokens.some((known) => sameBytes(received, known));
    if (kind === 'page') {
      const validRest = Number.isSafeInteger(page.offset) && (page.offset as number) >= 0 && Number.isSafeInteger(page.page_size) && (page.page_size as number) >= 1 && (page.page_size as number) <= 1000;
      return { kind, request: jsonPost(QUERY_ROUTES.getQueryPage.path.replace('{query_id}', id), page, header), ownPair, forged, validRest };
    }
    const address = { query_id: id, z: String(z), x: String(x % 2 ** z), y: String(y % 2 ** z) };
    const path = kind === 'bounds'
      ? QUERY_ROUTES.getQueryBounds.path.replace('{query_id}', id)
      : QUERY_ROUTES.getQueryTile.path.replace(/\{(\w+)\}/g, (_, name: keyof typeof address) => address[name]);
    const target = inQuery ? `${path}?token=${encodeURIComponent(sent.toWellFormed())}` : path;
    return { kind, request: { method: 'GET', target, headers: inQuery ? {} : header }, ownPair, forged, validRest: kind === 'bounds' || z <= MAX_TILE_ZOOM };
  });
  return checkRequests(context, 'query follow-ups', follow, (value) => value.request, (value, response) => {
    if (value.forged && response.status < 300) return [`a forged token was served (${response.status})`];
    if (value.ownPair && value.validRest && !SERVED[value.kind].includes(response.status)) return [`a real query's own id and token were refused (${response.status} ${errorCode(response.body)})`];
    return [];
  }, options, (value, response) => `${value.kind} ${value.forged ? 'forged' : value.ownPair ? 'own' : 'mismatched'} token ${response.status} ${errorCode(response.body)}`);
}

/** Whether two tokens carry the same bytes: base64url spellings that differ only in unused bits are one token. */
function sameBytes(a: string, b: string): boolean {
  const parts = [a.split('.'), b.split('.')];
  if (parts[0]!.length !== parts[1]!.length) return false;
  return parts[0]!.every((part, index) => /^[\w-]*$/.test(part) && /^[\w-]*$/.test(parts[1]![index]!) && Buffer.from(part, 'base64url').equals(Buffer.from(parts[1]![index]!, 'base64url')));
}

function errorCode(body: Buffer): string {
  try {
    return String((JSON.parse(body.toString('utf8')) as { code?: unknown }).code ?? '');
  } catch {
    return '';
  }
}
