import fc from 'fast-check';
import { API_ROUTES } from '../../core/api/catalog/routes.ts';
import { FEATURES_ROUTES } from '../../core/api/ogc/routes.ts';
import type { Route } from '../../core/api/route-table.ts';
import { STAC_API_ROUTES } from '../../core/api/stac/routes.ts';
import { QueryRequestSchema } from '../../schemas/query.ts';
import { ROOT } from './catalog.ts';
import { describeRequest, send, wirePathname, type ChildServer, type FuzzRequest, type FuzzResponse } from './fuzz-server.ts';
import { harvestCatalog, routeRequest, type Harvest } from './fuzz-routes.ts';
import { createResponseChecker } from './openapi-responses.ts';
import { queryBody } from './sql-grammar.ts';

/**
 * The fuzzing properties, shared by `tests/fuzz.test.ts` (a few hundred cases) and `npm run fuzz` (thousands):
 * every route of every route table answers as its OpenAPI document says and never 500; forbidden SQL is refused
 * before it runs; nothing leaks paths, files, SQL or tokens.
 */

/** The OpenAPI documents the checked surfaces publish, by surface name. */
export const SURFACE_DOCUMENTS = { api: '/api/openapi', stac: '/stac/api/openapi', features: '/features/api' } as const;

/**
 * How the fuzzed server runs. Its old space is capped, as a container's memory would be, so that garbage is
 * collected rather than left to grow: RSS that keeps growing then means a leak, not a lazy collector. The tile
 * cache is small, so that it fills during a run and its bound is exercised.
 */
export const FUZZ_SERVER_OPTIONS = {
  nodeArgs: ['--max-old-space-size=128'],
  env: { GEOSHELF_TILE_CACHE_MB: '8', GEOSHELF_STATIC_CACHE_MB: '16', GEOSHELF_QUERY_TIMEOUT_MS: '4000' },
};

/** The route tables fuzzed, one per surface; a route added to a table is fuzzed with no change here. */
export const FUZZED_SURFACES: { name: keyof typeof SURFACE_DOCUMENTS; routes: readonly Route[] }[] = [
  { name: 'api', routes: API_ROUTES as Route[] },
  { name: 'stac', routes: STAC_API_ROUTES },
  { name: 'features', routes: FEATURES_ROUTES },
];

/** Everything the properties need: the server, the response checker, what the crawl found, real query tokens. */
export interface FuzzContext {
  server: ChildServer;
  checker: ReturnType<typeof createResponseChecker>;
  harvest: Harvest;
  /** Tokens and ids of real queries, to mix with mutated ones. */
  queries: { query_id: string; query_token: string }[];
  /** Texts no answer may hold: server folders, and what a readable /etc/passwd starts with. */
  secrets: string[];
}

/** Counts of one property's run, for the summary. */
export interface FuzzTally {
  requests: number;
  statuses: Map<number, number>;
  /** Requests by outcome (`getDataset 200`, `allowed 422 query_binder_error`, …). */
  outcomes: Map<string, number>;
}

/** Options of one property run. */
export interface FuzzRunOptions {
  numRuns: number;
  seed?: number;
  /** fast-check's replay path of a failure, with its seed, to run that counterexample again at once. */
  path?: string;
}

/**
 * Loads the OpenAPI documents from the running server, crawls its catalog for real values, and runs one real
 * query per GeoParquet source (up to four) for tokens and query ids.
 */
export async function prepareFuzz(server: ChildServer, folders: string[]): Promise<FuzzContext> {
  const getJson = async (target: string) => JSON.parse((await send(server.origin, { method: 'GET', target, headers: {} })).body.toString('utf8'));
  const documents = Object.fromEntries(await Promise.all(Object.entries(SURFACE_DOCUMENTS).map(async ([name, path]) => [name, await getJson(path)])));
  const baseUrl = String((await getJson('/api')).links.self).replace(/\/api$/, '');
  const harvest = await harvestCatalog(server.origin, baseUrl, FUZZED_SURFACES.flatMap((surface) => surface.routes));
  const queries: FuzzContext['queries'] = [];
  for (const { columns: _columns, ...source } of harvest.sources.slice(0, 4)) {
    const response = await send(server.origin, jsonPost('/api/queries', { sources: [{ alias: 't', ...source }], sql: 'SELECT * FROM t LIMIT 50', limit: 10 }));
    if (response.status !== 200) continue;
    const { query_id, query_token } = JSON.parse(response.body.toString('utf8')) as FuzzContext['queries'][number];
    queries.push({ query_id, query_token });
  }
  for (const { query_id, query_token } of queries) {
    (harvest.pools.get('query_id') ?? harvest.pools.set('query_id', []).get('query_id')!).push(query_id);
    (harvest.pools.get('query_token') ?? harvest.pools.set('query_token', []).get('query_token')!).push(query_token);
  }
  return { server, checker: createResponseChecker(documents), harvest, queries, secrets: [...new Set([ROOT, ...folders])].filter((folder) => folder.length > 4).concat('root:x:0:0') };
}

/** A JSON POST request. */
export function jsonPost(target: string, body: unknown, headers: Record<string, string> = {}): FuzzRequest {
  return { method: 'POST', target, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** DuckDB's own error words: an answer holding them passes an engine message through. */
const ENGINE_WORDS = /\b(?:Binder|Parser|Catalog|Conversion|IO|Invalid Input|Permission|Out of Range|Not implemented|Internal|Serialization) Error\b|\bLINE \d+:/;

/**
 * Problems of one answer: a 500, a status, content type or body the OpenAPI document does not declare, a server
 * folder or file content anywhere, and in an error an engine message, a piece of the SQL or a token.
 */
export function answerProblems(context: FuzzContext, request: FuzzRequest, response: FuzzResponse, sql?: string): string[] {
  const problems: string[] = [];
  if (response.status >= 500 && response.status !== 503 && response.status !== 504) problems.push(`status ${response.status}`);
  const pathname = wirePathname(request.target);
  problems.push(...context.checker.check({ method: request.method, pathname }, response.status, response.headers['content-type'], response.body));
  problems.push(...leaks(context, response, sql));
  return problems;
}

function leaks(context: FuzzContext, response: FuzzResponse, sql?: string): string[] {
  const text = response.body.toString('utf8');
  const found = context.secrets.filter((secret) => text.includes(secret)).map((secret) => `the answer holds "${secret}"`);
  return response.status < 400 ? found : [...found, ...errorLeaks(context, text, sql)];
}

/** What an error's text must not hold: an engine message, a piece of the SQL sent, a query token. */
export function errorLeaks(context: FuzzContext, text: string, sql?: string): string[] {
  const found: string[] = [];
  if (ENGINE_WORDS.test(text)) found.push('an error holds a DuckDB message');
  if (sql && sqlPieces(sql).some((piece) => text.includes(piece))) found.push('an error holds a piece of the SQL');
  for (const { query_token } of context.queries) if (text.includes(query_token.slice(0, 40))) found.push('an error holds a query token');
  return found;
}

/** Pieces of SQL text long enough to be a fragment rather than a name: 24 characters holding a space. */
function sqlPieces(sql: string): string[] {
  const pieces: string[] = [];
  for (let start = 0; start + 24 <= sql.length; start += 4) {
    const piece = sql.slice(start, start + 24);
    if (/\s/.test(piece.trim())) pieces.push(piece);
  }
  return pieces;
}

/**
 * Runs a property over requests: each is sent, and its answer must have no problems. A failure throws with the
 * shrunk counterexample and a curl line that replays it.
 */
export async function checkRequests<T>(context: FuzzContext, name: string, arbitrary: fc.Arbitrary<T>, toRequest: (value: T) => FuzzRequest,
  extraProblems: (value: T, response: FuzzResponse) => string[], options: FuzzRunOptions, label?: (value: T, response: FuzzResponse) => string): Promise<FuzzTally> {
  const tally: FuzzTally = { requests: 0, statuses: new Map(), outcomes: new Map() };
  const property = fc.asyncProperty(arbitrary, async (value) => {
    const request = toRequest(value);
    const response = await send(context.server.origin, request);
    tally.requests++;
    tally.statuses.set(response.status, (tally.statuses.get(response.status) ?? 0) + 1);
    const outcome = label?.(value, response) ?? `${operationOf(context, request)} ${response.status}`;
    tally.outcomes.set(outcome, (tally.outcomes.get(outcome) ?? 0) + 1);
    const problems = [...answerProblems(context, request, response, sqlOf(request)), ...extraProblems(value, response)];
    if (problems.length > 0) {
      throw new Error(`${problems.join('\n')}\nreplay: ${describeRequest(context.server.origin, request)}\nanswer ${response.status}: ${response.body.toString('utf8').slice(0, 500)}`);
    }
  });
  const details = await fc.check(property, { numRuns: options.numRuns, ...(options.seed === undefined ? {} : { seed: options.seed }), ...(options.path ? { path: options.path } : {}) });
  if (details.failed) {
    const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new FuzzFailure(`${name} failed after ${details.numRuns} cases (seed ${details.seed}, path "${details.counterexamplePath}", shrunk ${details.numShrinks} times):\n${error}`, details.seed, details.counterexamplePath ?? '');
  }
  return tally;
}

/** A property that failed: the shrunk counterexample in the message, and the seed and path that replay it. */
export class FuzzFailure extends Error {
  readonly seed: number;
  readonly path: string;

  constructor(message: string, seed: number, path: string) {
    super(message);
    this.name = 'FuzzFailure';
    this.seed = seed;
    this.path = path;
  }
}

/** The operationId a request lands on, or what else it is, for tallies. */
function operationOf(context: FuzzContext, request: FuzzRequest): string {
  const where = context.checker.match(wirePathname(request.target), request.method);
  if (where.kind === 'operation') return `${where.operation.operationId}${request.method === 'HEAD' ? ' HEAD' : ''}`;
  return `${request.method} ${where.kind === 'outside' ? 'elsewhere' : where.kind === 'method' ? `${where.path} (other method)` : `${where.surface.name} (no path)`}`;
}

/** The SQL of a query body, or of an MCP run_query call. */
export function sqlOf(request: FuzzRequest): string | undefined {
  try {
    const body = JSON.parse(request.body ?? 'null') as { sql?: unknown; params?: { arguments?: { sql?: unknown } } } | null;
    const sql = body?.sql ?? body?.params?.arguments?.sql;
    return typeof sql === 'string' ? sql : undefined;
  } catch {
    return undefined;
  }
}

/** Requests to every route of a route table, picked evenly, as `routeRequest` builds them. */
export function fuzzRoutes(context: FuzzContext, name: string, routes: readonly Route[], options: FuzzRunOptions): Promise<FuzzTally> {
  const tokens = context.queries.map((query) => query.query_token);
  const bodies = new Map([[QueryRequestSchema, queryBody(context.harvest.sources).map((test) => test.body)]]);
  const arbitrary = fc.oneof(...routes.map((route) => routeRequest(route, context.harvest, { tokens, bodies })));
  return checkRequests(context, name, arbitrary, (request) => request, () => [], options);
}
