import { serve, type Server } from 'srvx';
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

/**
 * Serves a geoshelf server on a port with the timeouts above; resolves once it listens.
 * @example const server = await listen(createServer({ config }), { port: 3000, hostname: 'localhost' });
 */
export async function listen(geoshelf: Pick<GeoshelfServer, 'fetch'>, options: ListenOptions): Promise<Server> {
  const server = serve({ fetch: geoshelf.fetch, port: options.port, hostname: options.hostname, silent: true, node: { ...HTTP_TIMEOUTS } });
  await server.ready();
  return server;
}
