/**
 * `geoshelf start`, `serve`, `fleet` and `cdn`: the commands that run until stopped. The server is imported when a
 * command runs, so that `--help` and a wrong command line answer at once.
 */
import type { Command } from 'commander';
import { resolveCdnOptions, type CdnFlags } from '../deploy/cdn-config.ts';
import { failUsage, parseWholeNumber, type Finish } from './command-line.ts';

const STOPPING = 'SIGTERM or SIGINT stops it gracefully: new connections are refused and the requests in flight get GEOSHELF_SHUTDOWN_GRACE_MS to finish.';

/** Adds `start`, `serve`, `fleet` and `cdn` to the program. */
export function defineServeCommands(program: Command, finish: Finish): void {
  program.command('start')
    .summary('build incrementally, then serve the web app, API, data and query routes')
    .description(
      'Brings GEOSHELF_DIST_DIR up to date with the records (an incremental build, a second or two when nothing ' +
      'changed), then serves the web app, the catalog API, STAC, OGC API - Features, MCP, the data files under /data ' +
      'and the query routes on HOST:PORT, picking up a later build within two seconds. If the build fails it prints ' +
      `every problem and serves the previous tree. ${STOPPING}`,
    )
    .option('--no-build', 'serve the tree as it is, without building (what geoshelf serve does)')
    .action(async (options: { build: boolean }) => {
      const { runServer } = await import('../server/main.ts');
      finish(await runServer(options));
    });

  program.command('serve')
    .summary('serve an existing dist/ without building (a production query service)')
    .description(
      'Serves the tree in GEOSHELF_DIST_DIR as it is, as a production query service behind a load balancer does: ' +
      'the same routes as geoshelf start, and a new tree written there is picked up within two seconds. Exits 1 when ' +
      `the folder holds no build. ${STOPPING}`,
    )
    .action(async () => {
      const { runServer } = await import('../server/main.ts');
      finish(await runServer({ build: false }));
    });

  program.command('fleet')
    .summary('replicas of geoshelf serve behind nginx, with rolling restarts')
    .description(
      'Runs N replicas of geoshelf serve on the ports after --port, sharing one GEOSHELF_QUERY_KEYS, behind Debian\'s ' +
      'nginx in round robin, with docs/nginx.conf (the configuration to copy). It builds first unless --no-build. ' +
      'SIGHUP restarts the replicas one at a time; SIGINT or SIGTERM stops nginx, then the replicas, gracefully.',
    )
    .option('--replicas <n>', 'how many replicas', parseWholeNumber(1, 64), 2)
    .option('--port <n>', 'the port nginx listens on; replica i listens on port + i', parseWholeNumber(1, 65535), 8080)
    .option('--no-build', 'serve the tree as it is, without building')
    .action(async (options: { replicas: number; port: number; build: boolean }, command: Command) => {
      if (options.port + options.replicas > 65535) failUsage(command, '--port must leave room for the replicas\' ports after it (port + replicas ≤ 65535)');
      const { runFleet } = await import('../scripts/fleet.ts');
      finish(await runFleet(options));
    });

  program.command('cdn')
    .summary('nginx as a CDN in front of a published bucket, with a geoshelf server behind it')
    .description(
      'Runs Debian\'s nginx with docs/cdn-nginx.conf, the edge configuration to copy, in front of a tree published ' +
      'to a bucket (geoshelf publish), forwarding what the bucket cannot answer (queries, download-zip, API parameter ' +
      'combinations that were not prebuilt) to a geoshelf server. Build the tree with GEOSHELF_BASE_URL set to the ' +
      'edge\'s URL, so that its links point at the edge. SIGINT or SIGTERM stops nginx and removes its scratch folder.',
    )
    .option('--bucket-url <url>', 'the tree\'s HTTP address in its bucket, prefix included, read anonymously: http://127.0.0.1:9000/site/v1 (path style) or https://my-bucket.s3.eu-west-1.amazonaws.com/v1')
    .option('--origin <url>', 'the geoshelf server (geoshelf serve) for what the bucket cannot answer: http://127.0.0.1:3000')
    .option('--port <n>', 'the port the edge listens on', '8088')
    .option('--host <address>', 'the address it listens on (0.0.0.0 for every interface)', '127.0.0.1')
    .action(async (flags: CdnFlags, command: Command) => {
      let options;
      try {
        options = resolveCdnOptions(flags);
      } catch (error) {
        failUsage(command, (error as Error).message);
      }
      const { startCdn } = await import('../deploy/cdn.ts');
      finish(await startCdn(options));
    });
}
