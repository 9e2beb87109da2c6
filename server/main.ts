import type { Server } from 'srvx';
import { EXIT } from '../cli/exit-codes.ts';
import { runAsGeoshelf } from '../cli/run-as-geoshelf.ts';
import { loadConfig, type Config } from '../runtime/config.ts';
import { readManifestRoot } from '../runtime/manifest.ts';
import { buildCatalog } from '../generator/build.ts';
import { describeProgress, printBuildError } from '../generator/cli.ts';
import { BuildError } from '../generator/errors.ts';
import { InputError } from '../schemas/parse.ts';
import { createServer, type GeoshelfServer } from './app.ts';
import { countOpenRequests, drain, listen } from './listen.ts';

/** What `geoshelf start` and `geoshelf serve` are asked for. */
export interface ServeOptions {
  /** Bring `dist/` up to date with the records first (`start`); false serves the tree as it is (`serve`). */
  build: boolean;
}

/**
 * `geoshelf start` (`npm start`): brings `dist/` up to date with the records (an incremental build, quick when
 * nothing changed), then serves the API, the data files and the query routes on one port. A failed build keeps
 * serving the previous tree when there is one. `geoshelf serve` (`npm run serve`, `start --no-build`) serves the
 * tree CI built, as a production query service does. Resolves with 0 once the server listens (the process then
 * runs until a signal), or with 1 when there is nothing to serve. `node server/main.ts [--no-build]` runs
 * `geoshelf start [--no-build]`.
 */
export async function runServer(options: ServeOptions): Promise<number> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    console.error(`✖ ${error.message}`);
    return EXIT.failed;
  }
  if (options.build) await buildBeforeServing(config);
  if (!(await readManifestRoot(config.distDir))) {
    console.error(`✖ ${config.distDir} holds no build; run npm run build first, or npm start.`);
    return EXIT.failed;
  }
  const geoshelf = createServer({ config, serveData: true, reloadIntervalMs: 2000 });
  const server = await listen(geoshelf, { port: config.port, hostname: config.host });
  console.log(`geoshelf is serving ${config.baseUrl}/ (the web app; the API at ${config.baseUrl}/api, STAC at ${config.baseUrl}/stac, OGC API - Features at ${config.baseUrl}/features, data under ${config.storageBaseUrl}) on ${config.host}:${config.port}`);
  stopOnSignal((reason) => drainAndExit(reason, server, geoshelf, config.shutdownGraceMs));
  // The first readiness check warns about every source the data folder lacks, once, rather than each query.
  void geoshelf.readiness.current();
  return EXIT.ok;
}

/**
 * Stops once, on the first SIGTERM or SIGINT, or when the process that started this one with an IPC channel
 * (`npm run fleet`) goes away. Later signals are ignored: Ctrl-C under npm delivers SIGINT twice (from the
 * terminal and from npm), which must not cut the drain short; the grace period bounds it.
 */
function stopOnSignal(stop: (reason: string) => Promise<void>): void {
  let stopping = false;
  const once = (reason: string) => {
    if (stopping) return;
    stopping = true;
    void stop(reason);
  };
  process.on('SIGINT', () => once('SIGINT'));
  process.on('SIGTERM', () => once('SIGTERM'));
  if (process.connected) process.on('disconnect', () => once('the parent process left'));
}

/**
 * Refuses new connections, finishes the accepted requests within the grace period, then stops the query
 * workers and exits: 0 when every accepted request was answered, 1 when some were cut.
 */
async function drainAndExit(reason: string, server: Server, geoshelf: GeoshelfServer, graceMs: number): Promise<void> {
  const open = countOpenRequests(server);
  // drain() closes the listening socket before it first waits, so the line below is true when it is read.
  const draining = drain(server, graceMs);
  console.log(`${reason}: draining: new connections refused; finishing ${open} request(s) in flight within ${graceMs} ms`);
  const cut = await draining;
  await geoshelf.close();
  if (cut > 0) {
    console.error(`✖ stopped after the ${graceMs} ms grace period with ${cut} request(s) unfinished; they were cut`);
    process.exit(1);
  }
  console.log('drained: every accepted request was answered; exiting');
  process.exit(0);
}

/** Builds incrementally; on record problems, prints them all and goes on with the previous tree, if any. */
export async function buildBeforeServing(config: Config): Promise<void> {
  try {
    const result = await buildCatalog({ config, ...describeProgress(config) });
    console.log(result.skipped ? `✔ catalog unchanged since the last build: ${result.documents} documents` : `✔ catalog built: ${result.documents} documents (${result.written.length} written)`);
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    printBuildError(error);
    if (await readManifestRoot(config.distDir)) console.error('Serving the previous build instead.');
  }
}

if (import.meta.main) runAsGeoshelf(['start']);
