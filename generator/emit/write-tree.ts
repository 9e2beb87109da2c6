import { hash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { COMPRESS_MIN_BYTES, INTERNAL_DIR } from '../../core/constants.ts';
import { serializeManifest, type Manifest, type ManifestEntry } from '../../runtime/manifest.ts';
import type { TreeFile } from '../../core/static-files.ts';
import { compressBody, type CompressResult } from './compress.ts';
import { CompressPool } from './compress-pool.ts';

/** What a write changed, for progress output and tests. */
export interface WriteReport {
  mode: 'full' | 'incremental';
  written: string[];
  removed: string[];
  unchanged: number;
}

/** Options of `writeTree`. */
export interface WriteTreeOptions {
  distDir: string;
  settings: Manifest['settings'];
  /** Files under `_geoshelf/` that the server reads; written every time, never in the manifest. */
  internal: TreeFile[];
  /** Keys of files that were not rendered again because their inputs did not change; kept as they are. */
  reusedKeys?: string[];
  threads: number;
  brotliQuality: number;
  gzipLevel: number;
  /** The manifest of the tree in `distDir`; absent for a full build into a fresh folder. */
  previous: Manifest | undefined;
  log?: (line: string) => void;
}

/**
 * Writes the static tree so that readers never see a half-built one:
 * - with no usable previous tree, everything goes into a fresh folder that then replaces `distDir` by rename;
 * - otherwise only changed files are written, first into a staging folder, then renamed into place, with the
 *   manifest renamed last and removed files deleted after it. Nothing in `distDir` is touched before every
 *   changed file has been written in full, so a failure leaves the previous tree as it was.
 * Every file is compressed first, on every core, then written by this thread alone: on this machine, writing
 * while compressing made file creation three times slower (the kernel's file-system work competes for the cores),
 * and parallel writers were slower than one.
 */
export async function writeTree(files: TreeFile[], options: WriteTreeOptions): Promise<WriteReport> {
  const { previous } = options;
  const entries: Record<string, ManifestEntry> = {};
  for (const key of options.reusedKeys ?? []) {
    const old = previous?.files[key];
    if (!old) throw new Error(`${key} was reused but is not in the previous manifest`);
    entries[key] = old;
  }
  const changed: TreeFile[] = [];
  for (const file of files) {
    const sha256 = hash('sha256', file.body, 'hex');
    const old = previous?.files[file.key];
    if (old && old.sha256 === sha256 && old.type === file.type) {
      entries[file.key] = old;
      continue;
    }
    entries[file.key] = { sha256, bytes: file.body.length, type: file.type };
    changed.push(file);
  }
  const removed = previous ? Object.keys(previous.files).filter((key) => !(key in entries)) : [];
  const staging = `${options.distDir}.staging-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  try {
    await writeFiles(staging, changed, entries, options);
    await mkdir(join(staging, INTERNAL_DIR), { recursive: true });
    for (const file of options.internal) await writeFile(join(staging, INTERNAL_DIR, file.key), file.body);
    const manifest: Manifest = { format: 'geoshelf-manifest/1', settings: options.settings, files: entries };
    await writeFile(join(staging, 'manifest.json'), serializeManifest(manifest));
    if (previous) await applyStaged(staging, options.distDir, changed, removed, previous);
    else await swapIn(staging, options.distDir);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return { mode: previous ? 'incremental' : 'full', written: changed.map((file) => file.key), removed, unchanged: Object.keys(entries).length - changed.length };
}

async function writeFiles(root: string, files: TreeFile[], entries: Record<string, ManifestEntry>, options: WriteTreeOptions): Promise<void> {
  const { log } = options;
  // Files with the same bytes (a STAC Item under its canonical path and its version's) are compressed once.
  const distinct = new Map<string, TreeFile>();
  for (const file of files) {
    if (file.body.length >= COMPRESS_MIN_BYTES && !distinct.has(entries[file.key]!.sha256)) distinct.set(entries[file.key]!.sha256, file);
  }
  const large = [...distinct.values()];
  const started = performance.now();
  const compressed = await compressAll(large, options);
  if (large.length > 0) log?.(`compressed ${large.length} documents in ${Math.round(performance.now() - started)} ms`);
  const results = compressed.flat();
  const byHash = new Map(large.map((file, index) => [entries[file.key]!.sha256, results[index]!]));
  const made = new Set<string>();
  const write = (key: string, bytes: Uint8Array) => {
    const path = join(root, key);
    const directory = dirname(path);
    if (!made.has(directory)) {
      mkdirSync(directory, { recursive: true });
      made.add(directory);
    }
    writeFileSync(path, bytes);
  };
  let reported = performance.now();
  files.forEach((file, done) => {
    write(file.key, file.body);
    const sibling = file.body.length >= COMPRESS_MIN_BYTES ? byHash.get(entries[file.key]!.sha256) : undefined;
    if (sibling) {
      write(`${file.key}.br`, sibling.br);
      write(`${file.key}.gz`, sibling.gz);
      Object.assign(entries[file.key]!, { br: sibling.br.length, gz: sibling.gz.length });
    }
    if (log && performance.now() - reported > 2000) {
      reported = performance.now();
      log(`written ${done} of ${files.length} documents`);
    }
  });
}

/** Worth starting compression threads for; fewer files are compressed right here (an edit usually touches a few). */
const POOL_THRESHOLD = 200;

async function compressAll(files: TreeFile[], options: WriteTreeOptions): Promise<CompressResult[][]> {
  const settings = { brotliQuality: options.brotliQuality, gzipLevel: options.gzipLevel };
  if (files.length < POOL_THRESHOLD) return [files.map((file) => compressBody(file.body, settings))];
  const pool = new CompressPool({ threads: options.threads, ...settings });
  try {
    return await Promise.all(pool.compressInBatches(files).map((batch) => batch.results));
  } finally {
    await pool.close();
  }
}

async function swapIn(staging: string, distDir: string): Promise<void> {
  const old = `${distDir}.old-${process.pid}`;
  const exists = await stat(distDir).then(() => true, () => false);
  if (exists) await rename(distDir, old);
  await rename(staging, distDir);
  if (exists) await rm(old, { recursive: true, force: true });
}

async function applyStaged(staging: string, distDir: string, changed: TreeFile[], removed: string[], previous: Manifest): Promise<void> {
  const made = new Set<string>();
  const move = async (key: string) => {
    const target = join(distDir, key);
    const directory = dirname(target);
    if (!made.has(directory)) {
      await mkdir(directory, { recursive: true });
      made.add(directory);
    }
    await rename(join(staging, key), target);
  };
  for (const file of changed) {
    await move(file.key);
    const compressed = file.body.length >= COMPRESS_MIN_BYTES;
    for (const suffix of ['.br', '.gz']) {
      if (compressed) await move(file.key + suffix);
      else await rm(join(distDir, file.key + suffix), { force: true });
    }
  }
  await rename(join(distDir, INTERNAL_DIR), join(staging, `${INTERNAL_DIR}.old`)).catch(() => undefined);
  await rename(join(staging, INTERNAL_DIR), join(distDir, INTERNAL_DIR));
  await rename(join(staging, 'manifest.json'), join(distDir, 'manifest.json'));
  for (const key of removed) {
    await rm(join(distDir, key), { force: true });
    if (previous.files[key]?.br !== undefined) {
      await rm(join(distDir, `${key}.br`), { force: true });
      await rm(join(distDir, `${key}.gz`), { force: true });
    }
  }
}
