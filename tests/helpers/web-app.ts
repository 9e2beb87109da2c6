import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { buildCatalog } from '../../generator/build.ts';
import { createServer } from '../../server/app.ts';
import { listen } from '../../server/listen.ts';
import { makeTestConfig } from './catalog.ts';
import { TEST_KEYS } from './queries.ts';
import { serveStatic } from './static-host.ts';

/** A running copy of the web app: its origin and the folder its build went to. */
export interface RunningSite {
  origin: string;
  distDir: string;
  close(): Promise<void>;
}

/** A port nobody listens on right now, so a build can write its address before the server starts. */
export async function findFreePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Builds the sample for a free local port, so its links and source URLs point where it will be served. */
async function buildSampleForFreePort() {
  const port = await findFreePort();
  const origin = `http://127.0.0.1:${port}`;
  const config = { ...(await makeTestConfig({ baseUrl: origin })), queryKeys: TEST_KEYS };
  await buildCatalog({ config });
  return { port, origin, config };
}

/**
 * Builds the sample for `origin` and serves it as `npm start` does: pages, API, data and queries on one port.
 * `onRequest` sees every request the server receives, as an access log would.
 */
export async function startGeoshelf(options: { onRequest?: (request: Request) => void } = {}): Promise<RunningSite> {
  const { port, origin, config } = await buildSampleForFreePort();
  const geoshelf = createServer({ config, serveData: true });
  const { onRequest } = options;
  const fetch = onRequest ? (request: Request) => (onRequest(request), geoshelf.fetch(request)) : geoshelf.fetch;
  const server = await listen({ fetch }, { port, hostname: '127.0.0.1' });
  return {
    origin,
    distDir: config.distDir,
    close: async () => {
      await server.close(true);
      await geoshelf.close();
      await rm(config.root, { recursive: true, force: true });
    },
  };
}

/**
 * Builds the sample for `origin` and serves `dist/` and the data folder with a plain static file server, as object
 * storage behind a CDN would: no geoshelf code answers any request.
 */
export async function startStaticSite(): Promise<RunningSite> {
  const { port, origin, config } = await buildSampleForFreePort();
  const host = await serveStatic({ port, mounts: [{ prefix: '/data', dir: config.dataDir }, { prefix: '/', dir: config.distDir }] });
  return {
    origin,
    distDir: config.distDir,
    close: async () => {
      await host.close();
      await rm(config.root, { recursive: true, force: true });
    },
  };
}
