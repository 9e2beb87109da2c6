import { hash } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { COMPRESS_MIN_BYTES, INTERNAL_DIR } from '../../core/constants.ts';
import { readManifest, serializeManifest, type Manifest, type ManifestEntry } from '../../core/manifest.ts';
import type { TreeFile } from '../../core/static-files.ts';
import { WritePool } from './write-pool.ts';

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
  threads: number;
  brotliQuality: number;
  gzipLevel: number;
  /** Ignore the previous tree and write everything into a fresh one. */
  full?: boolean;
}

/**
 * Writes the static tree so that readers never see a half-built one:
 * - with no usable previous tree, everything goes into a fresh folder that then replaces `distDir` by rename;
 * - otherwise only changed files are written, first into a staging folder, then renamed into place, with the
 *   manifest renamed last and removed files deleted after it. Nothing in `distDir` is touched before every
 *   changed file has been written in full, so a failure leaves the previous tree as it was.
 */
export async function writeTree(files: TreeFile[], options: WriteTreeOptions): Promise<WriteReport> {
  const previous = options.full ? undefined : await readManifest(options.distDir);
  const entries: Record<string, ManifestEntry> = {};
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
  const manifest: Manifest = { format: 'geoshelf-manifest/1', settings: options.settings, files: sortKeys(entries) };
  const staging = `${options.distDir}.staging-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  const pool = new WritePool({ threads: options.threads, minBytes: COMPRESS_MIN_BYTES, brotliQuality: options.brotliQuality, gzipLevel: options.gzipLevel });
  try {
    const written = await pool.writeAll(staging, changed);
    await mkdir(join(staging, INTERNAL_DIR), { recursive: true });
    for (const file of options.internal) await writeFile(join(staging, INTERNAL_DIR, file.key), file.body);
    for (const file of changed) {
      const result = written.get(file.key);
      if (result?.br !== undefined) Object.assign(entries[file.key]!, { br: result.br, gz: result.gz });
    }
    await writeFile(join(staging, 'manifest.json'), serializeManifest(manifest));
    if (previous) await applyStaged(staging, options.distDir, changed, removed, previous);
    else await swapIn(staging, options.distDir);
  } finally {
    await pool.close();
    await rm(staging, { recursive: true, force: true });
  }
  return { mode: previous ? 'incremental' : 'full', written: changed.map((file) => file.key), removed, unchanged: files.length - changed.length };
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

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
