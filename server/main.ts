import { loadConfig, type Config } from '../runtime/config.ts';
import { readManifestSync } from '../runtime/manifest.ts';
import { buildCatalog } from '../generator/build.ts';
import { printBuildError } from '../generator/cli.ts';
import { createTerminalProgress } from '../generator/enrich/progress.ts';
import { BuildError } from '../generator/errors.ts';
import { createServer } from './app.ts';
import { listen } from './listen.ts';

/**
 * `npm start`: brings `dist/` up to date with the records (an incremental build, quick when nothing changed),
 * then serves the API, the data files and the query routes on one port. A failed build keeps serving the
 * previous tree when there is one. With `--no-build` (`npm run serve`) it serves the tree CI built, as a
 * production query service does.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (!process.argv.includes('--no-build')) await buildBeforeServing(config);
  if (!readManifestSync(config.distDir)) {
    console.error(`✖ ${config.distDir} holds no build; run npm run build first, or npm start.`);
    process.exit(1);
  }
  const geoshelf = createServer({ config, serveData: true, reloadIntervalMs: 2000 });
  const server = await listen(geoshelf, { port: config.port, hostname: config.host });
  console.log(`geoshelf is serving ${config.baseUrl}/ (the web app; the API at ${config.baseUrl}/api, STAC at ${config.baseUrl}/stac, OGC API - Features at ${config.baseUrl}/features, data under ${config.storageBaseUrl}) on ${config.host}:${config.port}`);
  const stop = async () => {
    await server.close();
    await geoshelf.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** Builds incrementally; on record problems, prints them all and goes on with the previous tree, if any. */
async function buildBeforeServing(config: Config): Promise<void> {
  try {
    const quiet = config.ci || !process.stdout.isTTY;
    const result = await buildCatalog({ config, ...(quiet ? {} : { log: (line: string) => console.log(`  ${line}`), progress: createTerminalProgress(process.stdout) }) });
    console.log(`✔ catalog built: ${result.documents} documents (${result.written.length} written)`);
  } catch (error) {
    if (!(error instanceof BuildError)) throw error;
    printBuildError(error);
    if (readManifestSync(config.distDir)) console.error('Serving the previous build instead.');
  }
}

await main();
