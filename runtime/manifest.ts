import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { INTERNAL_DIR } from '../core/constants.ts';
import type { CatalogModel } from '../core/model.ts';
import { runAtOnce, type Sliced } from '../core/slices.ts';

/** One file in the manifest: content hash, size, type, and compressed sizes when siblings exist. */
export interface ManifestEntry {
  sha256: string;
  bytes: number;
  type: string;
  br?: number;
  gz?: number;
}

/**
 * Every public file of a tree with its content hash, in one object: the form a publish puts in a bucket as its
 * `manifest.json`, and the one the server and the tools read. A built tree keeps it in parts (`ManifestRoot`).
 */
export interface Manifest {
  format: 'geoshelf-manifest/1';
  settings: { base_url: string; storage_base_url: string };
  files: Record<string, ManifestEntry>;
}

/**
 * `dist/manifest.json` of a built tree: a small root naming the parts the files are listed in, so that a rebuild
 * reads and rewrites only the parts whose scopes it touched (issue 28). A part is `_geoshelf/manifest/<sha256>.json`,
 * named by the SHA-256 of its bytes, so the root and its parts always agree: a part is never rewritten in place,
 * and the parts of the previous root stay until the new root is in (generator/emit/write-tree.ts).
 */
export interface ManifestRoot {
  format: 'geoshelf-manifest/2';
  settings: Manifest['settings'];
  /** Code, settings and options the documents were rendered with: when it changes, every scope is rendered again. */
  fingerprint: string;
  parts: Record<string, PartRef>;
}

/** A part as the root names it: its file's hash and size, the hash of its scopes' inputs, and how many files it lists. */
export interface PartRef {
  sha256: string;
  bytes: number;
  inputs: string;
  files: number;
}

/** One part of the manifest: its render scopes, each with the hash of what it was rendered from and its files. */
export interface ManifestPart {
  scopes: Record<string, { hash: string; files: Record<string, ManifestEntry> }>;
}

/** Name of the model file under `dist/_geoshelf/`, which the server loads to compute answers. */
export const MODEL_FILE = 'model.json';

/** The internal model file: the settings documents were rendered with, and the resolved catalog. */
export interface ModelFile {
  settings: { baseUrl: string; storageBaseUrl: string };
  model: CatalogModel;
}

/** Key under `dist/` of the part file with these bytes' hash. */
export function partKey(sha256: string): string {
  return `${INTERNAL_DIR}/manifest/${sha256}.json`;
}

/** Raised when a part the root names is missing or not the bytes it names: the tree is not the one the root describes. */
export class PartUnreadable extends Error {}

function parseRoot(text: string): ManifestRoot | undefined {
  try {
    const root = JSON.parse(text) as ManifestRoot;
    return root.format === 'geoshelf-manifest/2' && root.parts && typeof root.parts === 'object' ? root : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads the root of a tree's manifest, or undefined when there is none, it is unreadable, or a part it names is
 * missing or not of the size it names: a tree that cannot be compared with. A part's bytes are checked against
 * its hash when it is read (the build reads the parts it touches; the server, every part).
 */
export async function readManifestRoot(distDir: string): Promise<ManifestRoot | undefined> {
  const root = await readFile(join(distDir, 'manifest.json'), 'utf8').then(parseRoot, () => undefined);
  if (!root) return undefined;
  const sizes = await Promise.all(Object.values(root.parts).map((part) => stat(join(distDir, partKey(part.sha256))).then((found) => found.size === part.bytes, () => false)));
  return sizes.every(Boolean) ? root : undefined;
}

/** Reads one part of a tree's manifest, checked against its hash; throws `PartUnreadable` when it is not there as named. */
export function readManifestPart(distDir: string, sha256: string): ManifestPart {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(distDir, partKey(sha256)));
  } catch {
    throw new PartUnreadable(`${partKey(sha256)} is missing`);
  }
  if (hash('sha256', bytes, 'hex') !== sha256) throw new PartUnreadable(`${partKey(sha256)} does not hold the bytes its name says`);
  return JSON.parse(bytes.toString('utf8')) as ManifestPart;
}

/** A whole manifest, with its parts by hash, which a later load takes over where its root names them again. */
export interface LoadedManifest {
  manifest: Manifest;
  parts: Map<string, ManifestPart>;
}

/**
 * The whole manifest of a root: every part read and their files put together. Parts whose hash is in `reuse` (a
 * previous load's) are taken as they are, not read again: a server reload after an edit reads the parts it touched.
 */
export function assembleManifest(distDir: string, root: ManifestRoot, reuse?: Map<string, ManifestPart>): LoadedManifest {
  return runAtOnce(assembleManifestSlices(distDir, root, reuse));
}

/** `assembleManifest`, pausing after each part. */
function* assembleManifestSlices(distDir: string, root: ManifestRoot, reuse?: Map<string, ManifestPart>): Sliced<LoadedManifest> {
  const files = Object.create(null) as Record<string, ManifestEntry>;
  const parts = new Map<string, ManifestPart>();
  for (const name of Object.keys(root.parts).sort()) {
    const { sha256 } = root.parts[name]!;
    const part = reuse?.get(sha256) ?? readManifestPart(distDir, sha256);
    parts.set(sha256, part);
    for (const scope of Object.values(part.scopes)) Object.assign(files, scope.files);
    yield;
  }
  return { manifest: { format: 'geoshelf-manifest/1', settings: root.settings, files }, parts };
}

/** Loads the whole manifest of a tree for the server, taking over the parts of `reuse`; undefined when it cannot be read whole. */
export function loadManifestSync(distDir: string, reuse?: Map<string, ManifestPart>): LoadedManifest | undefined {
  return runAtOnce(loadManifestSlices(distDir, reuse));
}

/** `loadManifestSync`, pausing after each part. */
export function* loadManifestSlices(distDir: string, reuse?: Map<string, ManifestPart>): Sliced<LoadedManifest | undefined> {
  let text: string;
  try {
    text = readFileSync(join(distDir, 'manifest.json'), 'utf8');
  } catch {
    return undefined;
  }
  const root = parseRoot(text);
  try {
    return root && (yield* assembleManifestSlices(distDir, root, reuse));
  } catch {
    return undefined;
  }
}

/** Reads the whole manifest of a tree, or undefined when there is none or a part of it is unreadable. */
export async function readManifest(distDir: string): Promise<Manifest | undefined> {
  const root = await readManifestRoot(distDir);
  try {
    return root && assembleManifest(distDir, root).manifest;
  } catch {
    return undefined;
  }
}

/** Reads the whole manifest of a tree synchronously. */
export function readManifestSync(distDir: string): Manifest | undefined {
  return loadManifestSync(distDir)?.manifest;
}

/** Serialises a whole manifest with sorted keys, one file per line, so two of them can be diffed. */
export function serializeManifest(manifest: Manifest): string {
  const keys = Object.keys(manifest.files).sort();
  const lines = keys.map((key) => `    ${JSON.stringify(key)}: ${JSON.stringify(manifest.files[key])}`);
  return `{\n  "format": ${JSON.stringify(manifest.format)},\n  "settings": ${JSON.stringify(manifest.settings)},\n  "files": {\n${lines.join(',\n')}\n  }\n}\n`;
}

/** Serialises a root with its parts in name order, one per line. */
export function serializeRoot(root: ManifestRoot): string {
  const lines = Object.keys(root.parts).sort().map((name) => `    ${JSON.stringify(name)}: ${JSON.stringify(root.parts[name])}`);
  return `{\n  "format": ${JSON.stringify(root.format)},\n  "settings": ${JSON.stringify(root.settings)},\n  "fingerprint": ${JSON.stringify(root.fingerprint)},\n  "parts": {\n${lines.join(',\n')}\n  }\n}\n`;
}

/** Serialises a part with its scopes and their files in key order, one file per line: equal parts give equal bytes. */
export function serializePart(part: ManifestPart): string {
  const scopes = Object.keys(part.scopes).sort().map((name) => {
    const { hash: inputs, files } = part.scopes[name]!;
    const lines = Object.keys(files).sort().map((key) => `      ${JSON.stringify(key)}: ${JSON.stringify(files[key])}`);
    return `    ${JSON.stringify(name)}: {"hash": ${JSON.stringify(inputs)}, "files": {\n${lines.join(',\n')}\n    }}`;
  });
  return `{\n  "scopes": {\n${scopes.join(',\n')}\n  }\n}\n`;
}
