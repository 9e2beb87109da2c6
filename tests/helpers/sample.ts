import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { Config } from '../../runtime/config.ts';
import { readManifestSync, type Manifest } from '../../runtime/manifest.ts';
import { createServer, type GeoshelfServer } from '../../server/app.ts';

/** Settings of the sample catalog the global setup built. */
export function sampleConfig(): Config & { root: string } {
  return JSON.parse(inject('sampleConfig')) as Config & { root: string };
}

/** The manifest of the sample build. */
export function sampleManifest(): Manifest {
  return readManifestSync(sampleConfig().distDir)!;
}

/** A server over the sample build, serving data files too. */
export function sampleServer(): GeoshelfServer {
  return createServer({ config: sampleConfig(), serveData: true });
}

/** Reads a file of the sample build as JSON. */
export async function readSampleJson<T = unknown>(key: string): Promise<T> {
  return JSON.parse(await readFile(join(sampleConfig().distDir, key), 'utf8')) as T;
}

/** GETs a path through the server's fetch handler, with optional headers. */
export function get(server: GeoshelfServer, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return Promise.resolve(server.fetch(new Request(`http://localhost${path}`, { headers })));
}
