/**
 * Whether a build has anything to do. A build is a function of its inputs: the code and the web app's sources, the
 * settings, and the files under the catalog and data folders. Each build that succeeds stores a digest of them
 * (the files by path, size and mtime, as make and ninja compare them) in the cache folder, with the hash of the
 * `manifest.json` it wrote. A later build whose inputs give the same digest, over a tree that still holds that
 * manifest whole, would write the same bytes, so it writes nothing and loads nothing: at 10,000 datasets a build
 * with nothing changed read every record and hashed every dataset, 2.7 s before it found no change.
 *
 * A catalog that reads remote objects is never skipped, since they change with no trace here; nor is `--full`.
 */
import { createHash, hash } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Config } from '../runtime/config.ts';
import { readManifestRoot } from '../runtime/manifest.ts';
import { readModelRoot } from '../runtime/model-file.ts';
import type { ListedFiles } from './load/read-records.ts';

/** What the last build that succeeded left, to tell the next one whether it has anything to do. */
export interface BuildStamp {
  format: 'geoshelf-build-stamp/1';
  /** The digest of the inputs the build started from. */
  inputs: string;
  /** SHA-256 of the `manifest.json` it wrote. */
  manifest: string;
  /** Whether its catalog read remote objects: such a build is never skipped. */
  remote: boolean;
  /** What it reported, said again by a build that is skipped. */
  documents: number;
  warnings: string[];
  twins: number;
}

const STAMP_FILE = 'build-stamp.json';

/**
 * The digest of a build's inputs, taken before it reads any of them, so that an edit made during the build is one
 * the next build sees. Files are stat'ed one after another: at 100,000 record files that took 0.6–0.7 s, against
 * 1.1–1.9 s for batches of 256 promises.
 */
export async function digestInputs(config: Config, options: { code: string; site: string; skipStac?: boolean }): Promise<InputDigest> {
  const digest = createHash('sha256');
  digest.update(JSON.stringify({ code: options.code, site: options.site, skipStac: options.skipStac ?? false, config }));
  const catalogFiles: ListedFiles = new Map();
  let dataFiles = new Set<string>();
  for (const folder of [config.catalogDir, config.dataDir]) {
    const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
    const paths = entries.filter((entry) => entry.isFile()).map((entry) => relative(folder, join(entry.parentPath, entry.name)).split(sep).join('/')).sort();
    digest.update(`\0${folder}\0`);
    if (folder === config.dataDir) dataFiles = new Set(paths);
    for (const path of paths) {
      const found = statSync(join(folder, path), { throwIfNoEntry: false });
      digest.update(`${path}\0${found?.size}\0${found?.mtimeMs}\n`);
      if (found && folder === config.catalogDir) catalogFiles.set(path, { size: found.size, mtimeMs: found.mtimeMs });
    }
  }
  return { inputs: digest.digest('hex'), catalogFiles, dataFiles };
}

/** The digest of a build's inputs, and the folders' files as it found them, which the build reads from. */
export interface InputDigest {
  inputs: string;
  catalogFiles: ListedFiles;
  /** The data folder's files, by path relative to it with `/`. */
  dataFiles: Set<string>;
}

/**
 * The stamp of the last build when these inputs are the ones it was made from and the tree is still the one it
 * wrote (its manifest's bytes, every manifest and model part there at its size); undefined otherwise.
 */
export async function readCurrentStamp(config: Config, inputs: string): Promise<BuildStamp | undefined> {
  const stamp = await readFile(join(config.cacheDir, STAMP_FILE), 'utf8').then((text) => JSON.parse(text) as BuildStamp, () => undefined);
  if (stamp?.format !== 'geoshelf-build-stamp/1' || stamp.inputs !== inputs || stamp.remote) return undefined;
  const manifest = await readFile(join(config.distDir, 'manifest.json')).catch(() => undefined);
  if (!manifest || hash('sha256', manifest, 'hex') !== stamp.manifest) return undefined;
  return (await readManifestRoot(config.distDir)) && readModelRoot(config.distDir) ? stamp : undefined;
}

/** Stores the stamp of a build that succeeded. */
export async function writeStamp(config: Config, stamp: Omit<BuildStamp, 'format' | 'manifest'>): Promise<void> {
  const manifest = hash('sha256', await readFile(join(config.distDir, 'manifest.json')), 'hex');
  await mkdir(config.cacheDir, { recursive: true });
  const temporary = join(config.cacheDir, `${STAMP_FILE}.tmp-${process.pid}`);
  await writeFile(temporary, JSON.stringify({ format: 'geoshelf-build-stamp/1', ...stamp, manifest } satisfies BuildStamp));
  await rename(temporary, join(config.cacheDir, STAMP_FILE));
}
