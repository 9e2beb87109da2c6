import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CatalogModel } from '../core/model.ts';

/** One file in the manifest: content hash, size, type, and compressed sizes when siblings exist. */
export interface ManifestEntry {
  sha256: string;
  bytes: number;
  type: string;
  br?: number;
  gz?: number;
}

/** `dist/manifest.json`: every public file of the tree with its content hash. */
export interface Manifest {
  format: 'geoshelf-manifest/1';
  settings: { base_url: string; storage_base_url: string };
  files: Record<string, ManifestEntry>;
}

/** Name of the model file under `dist/_geoshelf/`, which the server loads to compute answers. */
export const MODEL_FILE = 'model.json';

/** The internal model file: the settings documents were rendered with, and the resolved catalog. */
export interface ModelFile {
  settings: { baseUrl: string; storageBaseUrl: string };
  model: CatalogModel;
}

function parseManifest(text: string): Manifest | undefined {
  try {
    const manifest = JSON.parse(text) as Manifest;
    return manifest.format === 'geoshelf-manifest/1' ? manifest : undefined;
  } catch {
    return undefined;
  }
}

/** Reads the manifest of a tree, or undefined when there is none or it is unreadable. */
export async function readManifest(distDir: string): Promise<Manifest | undefined> {
  return readFile(join(distDir, 'manifest.json'), 'utf8').then(parseManifest, () => undefined);
}

/** Reads the manifest of a tree synchronously, for server start-up. */
export function readManifestSync(distDir: string): Manifest | undefined {
  try {
    return parseManifest(readFileSync(join(distDir, 'manifest.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

/** Serialises a manifest with sorted keys, one file per line, so two builds can be diffed. */
export function serializeManifest(manifest: Manifest): string {
  const keys = Object.keys(manifest.files).sort();
  const lines = keys.map((key) => `    ${JSON.stringify(key)}: ${JSON.stringify(manifest.files[key])}`);
  return `{\n  "format": ${JSON.stringify(manifest.format)},\n  "settings": ${JSON.stringify(manifest.settings)},\n  "files": {\n${lines.join(',\n')}\n  }\n}\n`;
}
