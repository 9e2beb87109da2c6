import { loadConfig } from '../runtime/config.ts';
import { createServer } from '../server/app.ts';
import { listen } from '../server/listen.ts';

/**
 * Serves an existing dist/ (GEOSHELF_DIST_DIR) and its data folder on PORT without building, for load tests; with
 * BENCH_RELOAD_MS, it looks for a new build that often, as `npm run serve` does every 2 s.
 */
const config = loadConfig();
const geoshelf = createServer({ config, serveData: true, reloadIntervalMs: Number(process.env.BENCH_RELOAD_MS ?? 0) });
await listen(geoshelf, { port: config.port, hostname: '127.0.0.1' });
process.send?.('ready');
