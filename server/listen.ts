import type { IncomingMessage, Server as NodeHttpServer, ServerResponse } from 'node:http';
import { serve, type Server } from 'srvx';
import type { QueryService } from '../query/service.ts';
import type { GeoshelfServer } from './app.ts';

/**
 * Timeouts of the HTTP server, so a slow or idle client cannot hold a connection for ever (slowloris):
 * the whole request must arrive within `requestTimeout`, its headers within `headersTimeout`, and an idle
 * keep-alive connection closes after `keepAliveTimeout`. Behind a proxy, keep the proxy's idle timeout
 * shorter than `keepAliveTimeout` (docs: nginx `keepalive_timeout`), or it may reuse a closed connection.
 */
export const HTTP_TIMEOUTS = {
  requestTimeout: 30_000,
  headersTimeout: 10_000,
  keepAliveTimeout: 65_000,
} as const;

/** Options of {@link listen}. */
export interface ListenOptions {
  port: number;
  hostname: string;
}

/** What {@link drain} knows of a server it may have to stop: the responses not yet sent, and whether it is stopping. */
interface DrainState {
  open: Set<ServerResponse>;
  draining: boolean;
  /** Called when the last open response closes while draining. */
  onDrained: () => void;
}

const DRAIN_STATES = new WeakMap<Server, DrainState>();

/** Longest {@link listen} waits for the query workers before it serves anyway (queries then wait for them). */
const WORKER_START_LIMIT_MS = 30_000;

/**
 * Serves a geoshelf server on a port with the timeouts above; resolves once it listens. The query workers are
 * started first, and it listens once they can take tasks (under 1 s on an idle machine, 2–7 s on a loaded one),
 * so the first query is as fast as the next (measured before: the first OGC items request 504 after 12 s, warm
 * 76 ms). srvx's own signal handling is off (it would force connections closed after 5 s): {@link drain} does
 * the shutdown.
 * @example const server = await listen(createServer({ config }), { port: 3000, hostname: 'localhost' });
 */
export async function listen(geoshelf: Pick<GeoshelfServer, 'fetch'> & { queries?: Pick<QueryService, 'start'> }, options: ListenOptions): Promise<Server> {
  if (geoshelf.queries) await startQueryWorkers(geoshelf.queries);
  const server = serve({ fetch: geoshelf.fetch, port: options.port, hostname: options.hostname, silent: true, gracefulShutdown: false, node: { ...HTTP_TIMEOUTS } });
  const state: DrainState = { open: new Set(), draining: false, onDrained: () => undefined };
  DRAIN_STATES.set(server, state);
  // Runs before srvx's handler, which may answer synchronously, so a request arriving while draining gets `Connection: close`.
  nodeServerOf(server).prependListener('request', (_request: IncomingMessage, response: ServerResponse) => trackResponse(server, state, response));
  await server.ready();
  return server;
}

/**
 * Starts the query workers and waits for them, at most WORKER_START_LIMIT_MS: past it, or if they fail, the server
 * listens anyway (the catalog needs no worker), says so, and queries wait for the workers without their deadline
 * running (query/pool.ts).
 */
async function startQueryWorkers(queries: Pick<QueryService, 'start'>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`did not start within ${WORKER_START_LIMIT_MS / 1000} s`), WORKER_START_LIMIT_MS)));
  const started = queries.start().then(() => undefined, (error: unknown) => `could not start: ${(error as Error).message}`);
  const problem = await Promise.race([started, late]);
  clearTimeout(timer);
  if (problem) console.warn(`geoshelf: the query workers ${problem}; serving anyway, and queries wait for them.`);
}

/** Requests the server accepted and has not finished answering. */
export function countOpenRequests(server: Server): number {
  return DRAIN_STATES.get(server)?.open.size ?? 0;
}

/**
 * Stops a server gracefully: closes the listening socket at once (new connections are refused) and idle
 * keep-alive connections with it, lets every accepted request finish, each answered with `Connection: close`
 * where its headers are not sent yet, and closes each connection once its last response is out. Resolves with
 * the number of requests still unfinished after `graceMs` (0 when all finished), after cutting their
 * connections. srvx's `close()` alone would wait for the keep-alive connections of the requests in flight to
 * time out (65 s): measured, it resolved 66 s after the last response.
 * @example const cut = await drain(server, 10_000); process.exit(cut === 0 ? 0 : 1);
 */
export async function drain(server: Server, graceMs: number): Promise<number> {
  const state = DRAIN_STATES.get(server);
  if (!state) throw new Error('drain() needs a server started by listen()');
  const node = nodeServerOf(server);
  state.draining = true;
  for (const response of state.open) {
    if (!response.headersSent) response.shouldKeepAlive = false;
  }
  // Node's close() stops listening and destroys idle keep-alive connections; its callback would wait for the rest.
  node.close(() => undefined);
  const finished = new Promise<void>((resolve) => {
    state.onDrained = resolve;
    if (state.open.size === 0) resolve();
  });
  let timer: NodeJS.Timeout | undefined;
  const outOfTime = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
  await Promise.race([finished, outOfTime]);
  clearTimeout(timer);
  const cut = state.open.size;
  node.closeAllConnections();
  return cut;
}

function trackResponse(server: Server, state: DrainState, response: ServerResponse): void {
  state.open.add(response);
  if (state.draining) response.shouldKeepAlive = false;
  response.once('close', () => {
    state.open.delete(response);
    // A response whose headers went out before draining began leaves its connection idle: close it now.
    if (!state.draining) return;
    setImmediate(() => nodeServerOf(server).closeIdleConnections());
    if (state.open.size === 0) state.onDrained();
  });
}

function nodeServerOf(server: Server): NodeHttpServer {
  return server.node!.server as NodeHttpServer;
}
