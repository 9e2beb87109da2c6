import { cp, rm } from 'node:fs/promises';
import { publish } from '../../deploy/publish.ts';
import { buildCatalog } from '../../generator/build.ts';
import { readManifest, type Manifest } from '../../runtime/manifest.ts';
import type { Config } from '../../runtime/config.ts';
import { startBucket, type TestBucket } from './bucket.ts';
import { makeTestConfig } from './catalog.ts';
import { childEnvironment, runScript, type WatchedProcess } from './processes.ts';
import { sampleConfig } from './sample.ts';
import { findFreePort } from './web-app.ts';

/** The prefix the site is published under. */
export const CDN_PREFIX = 'site/v1';

/** The sample published to s3rver, served through `npm run cdn`, with a geoshelf server as its origin. */
export interface CdnSite {
  /** The edge's URL, the build's base_url: `http://127.0.0.1:<port>`. */
  url: string;
  /** The origin's URL (the geoshelf server). */
  originUrl: string;
  /** The bucket's HTTP address with the prefix, as given to --bucket-url. */
  bucketUrl: string;
  config: Config & { root: string };
  manifest: Manifest;
  bucket: TestBucket;
  cdn: WatchedProcess;
  origin: WatchedProcess;
  /** Seconds the build, the publish and the start of both processes took. */
  timings: { build: number; publish: number; start: number };
  /** Stops the origin (SIGTERM) and waits until it has exited. */
  stopOrigin: () => Promise<void>;
  close: () => Promise<void>;
}

const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10;

/**
 * Builds the sample for a free port (its links and data URLs point at the edge), publishes it with the data files
 * into a fresh s3rver bucket, starts `npm run serve` as the origin and `npm run cdn` in front of both.
 */
export async function startCdnSite(): Promise<CdnSite> {
  let started = performance.now();
  const port = await findFreePort();
  let originPort = await findFreePort();
  while (originPort === port) originPort = await findFreePort();
  const url = `http://127.0.0.1:${port}`;
  const config = await makeTestConfig({ baseUrl: url });
  // The sample's enrichment cache (file metadata, twins' stamps) spares the build most of its work.
  await cp(sampleConfig().cacheDir, config.cacheDir, { recursive: true });
  await buildCatalog({ config });
  const build = seconds(started);
  started = performance.now();
  const bucket = await startBucket();
  await publish({ distDir: config.distDir, dataDir: config.dataDir, target: `s3://${bucket.bucket}/${CDN_PREFIX}`, cacheMaxAge: 300, env: bucket.env, log: () => {} });
  const published = seconds(started);
  started = performance.now();
  const originUrl = `http://127.0.0.1:${originPort}`;
  const env = childEnvironment(config, { HOST: '127.0.0.1', PORT: String(originPort), GEOSHELF_QUERY_SPARE_WORKERS: '0' });
  const origin = runScript(['server/main.ts', '--no-build'], env);
  const bucketUrl = `${bucket.endpoint}/${bucket.bucket}/${CDN_PREFIX}`;
  const cdn = runScript(['deploy/cdn.ts', '--bucket-url', bucketUrl, '--origin', originUrl, '--port', String(port)], process.env);
  await Promise.all([origin.waitFor(/is serving/, 60_000), cdn.waitFor(/cdn ready/, 30_000)]);
  return {
    url, originUrl, bucketUrl, config, bucket, cdn, origin,
    manifest: (await readManifest(config.distDir))!,
    timings: { build, publish: published, start: seconds(started) },
    stopOrigin: async () => {
      if (origin.child.exitCode === null) origin.child.kill('SIGTERM');
      await origin.exitCode();
    },
    close: async () => {
      for (const child of [cdn.child, origin.child]) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await Promise.all([cdn.exitCode(), origin.exitCode()]);
      await bucket.stop();
      await rm(config.root, { recursive: true, force: true });
    },
  };
}
