import { serve } from 'srvx';
import { loadConfig } from '../runtime/config.ts';
import { createServer } from '../server/app.ts';

/** Serves an existing dist/ (GEOSHELF_DIST_DIR) on PORT without building, for load tests. */
const config = loadConfig();
const geoshelf = createServer({ config });
const server = serve({ fetch: geoshelf.fetch, port: config.port, hostname: '127.0.0.1', silent: true });
await server.ready();
process.send?.('ready');
