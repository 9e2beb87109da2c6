import { mkdir, mkdtemp, readdir, readFile, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
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

/** A new folder of links to every file of the sample's data folder: a test may take one away without touching the real one. */
export async function linkSampleData(): Promise<string> {
  const source = sampleConfig().dataDir;
  const folder = await mkdtemp(join(tmpdir(), 'geoshelf-linked-data-'));
  for (const entry of await readdir(source, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const target = join(folder, relative(source, join(entry.parentPath, entry.name)));
    await mkdir(dirname(target), { recursive: true });
    await symlink(join(entry.parentPath, entry.name), target);
  }
  return folder;
}
