import { hash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { COMPRESS_MIN_BYTES, INTERNAL_DIR, PARQUET_TYPE } from '../../core/constants.ts';
import { partKey, serializePart, serializeRoot, type Manifest, type ManifestEntry, type ManifestPart, type ManifestRoot } from '../../runtime/manifest.ts';
import type { RenderedTree } from './render-tree.ts';
import type { TreeFile } from '../../core/static-files.ts';
import { WritePool } from './write-pool.ts';
import { createWriter, type WriteJob, type WrittenSizes } from './write-jobs.ts';
import { BuildError } from '../errors.ts';

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
  /** Files under `_geoshelf/` that the server reads, by key under it; never in the manifest. */
  internal: TreeFile[];
  /** Files under `_geoshelf/` to delete once the new manifest is in, by key under it (an incremental write only). */
  internalRemoved?: string[];
  threads: number;
  brotliQuality: number;
  gzipLevel: number;
  /** Whether the parts were planned against the tree in `distDir`; false writes a fresh tree and swaps it in. */
  incremental: boolean;
  log?: (line: string) => void;
}

/** What `writeTree` needs of a rendered tree. */
export type TreeToWrite = Pick<RenderedTree, 'files' | 'parts' | 'dropped' | 'fingerprint'>;

/**
 * Writes the static tree so that a build that fails or is killed never leaves a broken one:
 * - with no usable previous tree, everything goes into a fresh folder that then replaces `distDir` by rename;
 * - otherwise only changed files are written, first into a staging folder beside `distDir`, then renamed into
 *   place (`applyJournal`), with the manifest renamed last and removed files deleted after it. Nothing in
 *   `distDir` is touched before every changed file has been written in full, so a failure while writing (a full
 *   disk: `DiskFull`) leaves the previous tree as it was, and the staging folder is removed.
 * Only the manifest parts that were planned again are read and written (`renderTree`); a part kept whole stays as
 * it is on disk, under the same name.
 * Files are compressed and written by worker threads, one per core, each writing the files it has compressed: a
 * thread waiting on the disk leaves its core to one that compresses. A few files (an edit) are written right here.
 */
export async function writeTree(tree: TreeToWrite, options: WriteTreeOptions): Promise<WriteReport> {
  // The files the planned and dropped parts listed before: what the new files are compared with, and may remove.
  const previous = new Map<string, ManifestEntry>();
  const remember = (part: ManifestPart) => {
    for (const scope of Object.values(part.scopes)) for (const [key, entry] of Object.entries(scope.files)) previous.set(key, entry);
  };
  for (const plan of tree.parts.values()) if (!('kept' in plan) && plan.previous) remember(plan.previous);
  for (const { part } of tree.dropped.values()) remember(part);

  const entries = new Map<string, ManifestEntry>();
  const changed: TreeFile[] = [];
  for (const file of tree.files) {
    const sha256 = hash('sha256', file.body, 'hex');
    const old = previous.get(file.key);
    if (old && old.sha256 === sha256 && old.type === file.type) {
      entries.set(file.key, old);
      continue;
    }
    entries.set(file.key, { sha256, bytes: file.body.length, type: file.type });
    changed.push(file);
  }
  const staging = `${options.distDir}.${STAGING}-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  let committed = false;
  try {
    await writeFiles(staging, changed, entries, options);
    const { root, parts, listed } = assembleParts(tree, entries, options.settings);
    const removed = [...previous.keys()].filter((key) => !listed.has(key));
    // In the order they are moved into place: parts before the roots that name them.
    const internal = [...parts.written, ...options.internal.map((file) => ({ ...file, key: `${INTERNAL_DIR}/${file.key}` }))];
    for (const file of internal) {
      await mkdir(dirname(join(staging, file.key)), { recursive: true });
      await writeFile(join(staging, file.key), file.body);
    }
    await writeFile(join(staging, 'manifest.json'), serializeRoot(root));
    if (options.incremental) {
      const journal = planApply(changed, removed, previous);
      journal.moves.push(...internal.map((file) => file.key));
      journal.deletes.push(...parts.replaced.map(partKey), ...(options.internalRemoved ?? []).map((key) => `${INTERNAL_DIR}/${key}`));
      await makeFolders(options.distDir, journal.moves);
      await writeJournal(staging, journal);
      committed = true;
      await applyJournal(staging, options.distDir, journal);
    } else await swapIn(staging, options.distDir);
    const total = Object.values(root.parts).reduce((sum, part) => sum + part.files, 0);
    return { mode: options.incremental ? 'incremental' : 'full', written: changed.map((file) => file.key), removed, unchanged: total - changed.length };
  } catch (error) {
    if (!committed && isDiskFull(error)) throw diskFull(options.distDir);
    throw error;
  } finally {
    // A journal whose renames failed part way stays, so the next build finishes them (recoverTree).
    if (!committed || !(await exists(join(staging, JOURNAL)))) await rm(staging, { recursive: true, force: true });
  }
}

/**
 * The new root and the parts planned again: each part's files are its kept scopes' entries and the entries of the
 * files rendered now. Returns the part files to write (those whose bytes changed), the part files they replace
 * (by hash), and every key the planned parts list.
 */
function assembleParts(tree: TreeToWrite, entries: Map<string, ManifestEntry>, settings: Manifest['settings']) {
  const root: ManifestRoot = { format: 'geoshelf-manifest/2', settings, fingerprint: tree.fingerprint, parts: {} };
  const written: TreeFile[] = [];
  const superseded = [...tree.dropped.values()].map((dropped) => dropped.sha256);
  const listed = new Set<string>();
  for (const [name, plan] of tree.parts) {
    if ('kept' in plan) {
      root.parts[name] = plan.kept;
      continue;
    }
    const part: ManifestPart = { scopes: {} };
    let count = 0;
    for (const [scope, rendered] of plan.scopes) {
      const files = rendered.kept ?? Object.fromEntries(rendered.keys.map((key) => [key, entries.get(key)!]));
      for (const key of Object.keys(files)) listed.add(key);
      count += Object.keys(files).length;
      part.scopes[scope] = { hash: rendered.hash, files };
    }
    const body = Buffer.from(serializePart(part));
    const sha256 = hash('sha256', body, 'hex');
    root.parts[name] = { sha256, bytes: body.length, inputs: plan.inputs, files: count };
    if (sha256 === plan.previousSha256) continue;
    written.push({ key: partKey(sha256), body, type: 'application/json' });
    if (plan.previousSha256) superseded.push(plan.previousSha256);
  }
  // A part file is named by its bytes: one the new root still names is not deleted, whichever part named it before.
  const named = new Set(Object.values(root.parts).map((part) => part.sha256));
  return { root, parts: { written, replaced: [...new Set(superseded)].filter((sha256) => !named.has(sha256)) }, listed };
}

/** Parquet's own compression leaves nothing for brotli or gzip to take: such files get no siblings. */
const PRECOMPRESSED_TYPES = new Set([PARQUET_TYPE]);

/** Whether a file gets `.br` and `.gz` siblings: large enough, and not compressed already. */
function hasSiblings(file: TreeFile): boolean {
  return file.body.length >= COMPRESS_MIN_BYTES && !PRECOMPRESSED_TYPES.has(file.type);
}

async function writeFiles(root: string, files: TreeFile[], entries: Map<string, ManifestEntry>, options: WriteTreeOptions): Promise<void> {
  const { log } = options;
  // Files with the same bytes (a STAC Item under its canonical path and its version's) are compressed once.
  const jobs: WriteJob[] = [];
  const keysOf = new Map<WriteJob, string[]>();
  const bySha256 = new Map<string, WriteJob>();
  for (const file of files) {
    const compress = hasSiblings(file);
    const sha256 = entries.get(file.key)!.sha256;
    let job = compress ? bySha256.get(sha256) : undefined;
    if (!job) {
      job = { body: file.body, paths: [], compress };
      jobs.push(job);
      keysOf.set(job, []);
      if (compress) bySha256.set(sha256, job);
    }
    job.paths.push(join(root, file.key));
    keysOf.get(job)!.push(file.key);
  }
  const settings = { brotliQuality: options.brotliQuality, gzipLevel: options.gzipLevel };
  const record = (job: WriteJob, sizes: WrittenSizes) => {
    if (sizes) for (const key of keysOf.get(job)!) Object.assign(entries.get(key)!, sizes);
  };
  const started = performance.now();
  if (jobs.length < POOL_THRESHOLD) {
    const write = createWriter();
    for (const job of jobs) record(job, write(job, settings));
    return;
  }
  const pool = new WritePool({ threads: options.threads, ...settings });
  let written = 0;
  let reported = performance.now();
  try {
    await Promise.all(pool.writeInBatches(jobs).map(async (batch) => {
      const sizes = await batch.sizes;
      batch.jobs.forEach((job, index) => record(job, sizes[index]!));
      written += batch.jobs.reduce((sum, job) => sum + job.paths.length, 0);
      if (log && performance.now() - reported > 2000) {
        reported = performance.now();
        log(`written ${written} of ${files.length} documents`);
      }
    }));
  } finally {
    await pool.close();
  }
  log?.(`compressed and wrote ${files.length} documents in ${Math.round(performance.now() - started)} ms`);
}

/** Worth starting writer threads for; fewer files are written right here (an edit usually touches a few). */
export const POOL_THRESHOLD = 200;

/** Suffixes of the folders a build leaves beside `dist/` while it runs: `${dist}.staging-<pid>`, `${dist}.old-<pid>`. */
const STAGING = 'staging';
const OLD = 'old';
/** The list of renames of an incremental build, written into its staging folder once every file is there. */
export const JOURNAL = '.geoshelf-apply.json';

/**
 * What applying a staged incremental build does, written down before the first rename so that a build killed
 * among the renames can be finished by the next one: the paths to move from the staging folder into `dist/`,
 * and the paths to delete once the new manifest is in place.
 */
interface ApplyJournal {
  moves: string[];
  deletes: string[];
}

function planApply(changed: TreeFile[], removed: string[], previous: Map<string, ManifestEntry>): ApplyJournal {
  const moves: string[] = [];
  const deletes: string[] = [];
  for (const file of changed) {
    moves.push(file.key);
    const siblings = [`${file.key}.br`, `${file.key}.gz`];
    // A file that shrank below the compression threshold leaves siblings of its old bytes behind: delete them.
    (hasSiblings(file) ? moves : deletes).push(...siblings);
  }
  for (const key of removed) {
    deletes.push(key);
    if (previous.get(key)?.br !== undefined) deletes.push(`${key}.br`, `${key}.gz`);
  }
  return { moves, deletes };
}

/** Makes the folders the moves land in, before the journal: the renames then need no new space. */
async function makeFolders(distDir: string, paths: string[]): Promise<void> {
  for (const folder of new Set(paths.map((path) => dirname(join(distDir, path))))) await mkdir(folder, { recursive: true });
}

/** Writes the journal by rename, so that it is either whole or absent. */
async function writeJournal(staging: string, journal: ApplyJournal): Promise<void> {
  await writeFile(join(staging, `${JOURNAL}.part`), JSON.stringify(journal));
  await rename(join(staging, `${JOURNAL}.part`), join(staging, JOURNAL));
}

async function readJournal(staging: string): Promise<ApplyJournal | undefined> {
  try {
    return JSON.parse(await readFile(join(staging, JOURNAL), 'utf8')) as ApplyJournal;
  } catch {
    return undefined;
  }
}

/**
 * Moves a staged build into `dist/`: the changed files, then the server's internal files, then the manifest, then
 * the deletions. Every step can run again after a kill (a file already moved is skipped), so the next build
 * finishes what a killed one began.
 *
 * Between the first rename and the manifest, `dist/` holds some new files under the old manifest; copying the
 * unchanged files into a fresh folder to swap in whole would avoid that, but costs far more than the 3 s an
 * incremental build may take on a large tree (README, "Decisions that differ from DESIGN.md"). So readers are
 * protected the other way: the server's static store serves a file only when its bytes match the manifest it
 * loaded (server/static-store.ts), and computes the /api answers of files that do not from its model, which
 * changes with the manifest.
 */
async function applyJournal(staging: string, distDir: string, journal: ApplyJournal): Promise<void> {
  for (const path of journal.moves) {
    if (await exists(join(staging, path))) await rename(join(staging, path), join(distDir, path));
  }
  if (await exists(join(staging, 'manifest.json'))) await rename(join(staging, 'manifest.json'), join(distDir, 'manifest.json'));
  for (const path of journal.deletes) await rm(join(distDir, path), { force: true });
  await rm(join(staging, JOURNAL), { force: true });
}

/** Replaces `distDir` by the fresh tree in `staging`; if the second rename fails, the old tree goes back. */
async function swapIn(staging: string, distDir: string): Promise<void> {
  const old = `${distDir}.${OLD}-${process.pid}`;
  const hadTree = await exists(distDir);
  if (hadTree) await rename(distDir, old);
  try {
    await rename(staging, distDir);
  } catch (error) {
    if (hadTree) await rename(old, distDir);
    throw error;
  }
  if (hadTree) await rm(old, { recursive: true, force: true });
}

/**
 * Repairs what a build that was killed left beside `distDir`; run it before reading the previous manifest.
 * - `${dist}.old-<pid>`: a full build was killed between its two renames. With no `dist/`, it is the previous tree
 *   and goes back; otherwise it is the replaced one and is deleted.
 * - `${dist}.staging-<pid>` with a journal: an incremental build was killed among its renames, and they are
 *   finished, so `dist/` and its manifest agree again. Without a journal, it was killed while writing, before it
 *   touched `dist/`, and the folder is deleted.
 * Folders of a build still running (its process is alive) are left alone.
 */
export async function recoverTree(distDir: string, log?: (line: string) => void): Promise<void> {
  const parent = dirname(distDir);
  const leftovers = (await readdir(parent).catch(() => []))
    .map((name) => ({ name, match: /^(.*)\.(staging|old)-(\d+)$/.exec(name) }))
    .filter(({ match }) => match?.[1] === basename(distDir) && !isOtherLiveProcess(Number(match[3])))
    // Old trees first: a staging folder is finished only into an existing dist/.
    .sort((a, b) => (a.match![2] === OLD ? 0 : 1) - (b.match![2] === OLD ? 0 : 1));
  for (const { name, match } of leftovers) {
    const path = join(parent, name);
    if (match![2] === OLD) {
      if (await exists(distDir)) await rm(path, { recursive: true, force: true });
      else await rename(path, distDir);
      continue;
    }
    const journal = await readJournal(path);
    if (journal && (await exists(distDir))) {
      log?.(`finishing the build that was stopped while it renamed files into ${distDir}`);
      await applyJournal(path, distDir, journal);
    }
    await rm(path, { recursive: true, force: true });
  }
}

function isOtherLiveProcess(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

function diskFull(distDir: string): BuildError {
  return new BuildError([{ code: 'DiskFull', source: distDir, path: '', message: 'no space was left on its disk to write the new files beside it, so it was left as it was' }]);
}
