/**
 * `npm run publish -- --data s3://BUCKET[/PREFIX]`: puts the data folder into a bucket, so that a storage location
 * with `backend_type: s3` can point at it; a source's `path` is its key under the prefix. Changed and new files go
 * first, then the deletions asked for with `--delete`, then the data manifest: a publish that stops half way leaves
 * the previous manifest, and the next run uploads again whatever it had not yet recorded.
 *
 * @example npm run publish -- --data s3://geodata/v1 --dry-run
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DATA_MANIFEST_KEY, parseDataManifest, planDataPublish, serializeDataManifest } from './data-plan.ts';
import { ObjectStore, parseTarget } from './object-store.ts';
import { MANIFEST_KEY } from './publish-plan.ts';
import { describeDataFiles, PublishError } from './published-tree.ts';
import { sumBytes, uploadAll } from './upload.ts';

/** What to publish where. */
export interface DataPublishOptions {
  /** The data folder (GEOSHELF_DATA_DIR). */
  dataDir: string;
  /** `s3://bucket/prefix`. */
  target: string;
  /** Seconds in the `Cache-Control` max-age of every object (GEOSHELF_CACHE_MAX_AGE). */
  cacheMaxAge: number;
  /** The build's cache folder (GEOSHELF_CACHE_DIR), whose memo of data-file hashes spares hashing them again. */
  cacheDir?: string;
  dryRun?: boolean;
  /** Upload every file, not only the changed ones (after a change of GEOSHELF_CACHE_MAX_AGE, for example). */
  all?: boolean;
  /** Delete the objects of files the folder no longer has (only those a data manifest lists). */
  delete?: boolean;
  concurrency?: number;
  /** Where AWS_* variables are read from; the process's environment by default. */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

/** What a data publish did (or, with `dryRun`, would do). */
export interface DataPublishSummary {
  uploaded: number;
  uploadedBytes: number;
  deleted: number;
  unchanged: number;
  /** Objects of files gone from the folder that stay in the bucket, for want of `--delete`. */
  kept: number;
  seconds: number;
  dryRun: boolean;
}

/** Publishes the data folder; throws a `PublishError` with a one-line message when it cannot. */
export async function publishData(options: DataPublishOptions): Promise<DataPublishSummary> {
  const started = performance.now();
  const log = options.log ?? ((line: string) => console.log(line));
  const store = new ObjectStore(parseTarget(options.target), options.env);
  const paths = await listDataFolder(options.dataDir, store.name);
  const [files, previousBytes] = await Promise.all([describeDataFiles(options.dataDir, paths, options.cacheDir), store.get(DATA_MANIFEST_KEY)]);
  const previous = previousBytes && parseDataManifest(previousBytes, store.name);
  if (!previous) await refuseSitePrefix(store);
  const plan = planDataPublish(files, previous, { maxAge: options.cacheMaxAge, all: options.all ?? false, delete: options.delete ?? false });
  const manifestBytes = new TextEncoder().encode(serializeDataManifest(plan.manifest));
  const manifestChanged = !previousBytes || Buffer.compare(Buffer.from(previousBytes), Buffer.from(manifestBytes)) !== 0;
  const summary = (dryRun: boolean): DataPublishSummary => ({
    uploaded: plan.upload.length, uploadedBytes: sumBytes(plan.upload), deleted: plan.remove.length, unchanged: plan.unchanged, kept: plan.kept.length,
    seconds: (performance.now() - started) / 1000, dryRun,
  });

  log(`${store.name}: ${paths.length} files in the data folder ${options.dataDir}`);
  if (plan.kept.length > 0) log(`${plan.kept.length} objects listed in ${DATA_MANIFEST_KEY} are no longer in the data folder: kept in the bucket (publish with --delete to remove them)`);
  if (options.dryRun) {
    for (const object of plan.upload) log(`upload ${object.key} (${object.bytes} bytes)`);
    for (const key of plan.remove) log(`delete ${key}`);
    if (manifestChanged) log(`upload ${DATA_MANIFEST_KEY}`);
    return summary(true);
  }
  await uploadAll(store, plan.upload, { fileOf: (object) => join(options.dataDir, object.path), concurrency: options.concurrency, log });
  // Deleted before the manifest that stops listing them: a run stopped in between leaves them listed, never lost.
  await store.remove(plan.remove);
  if (manifestChanged) await store.putBytes(DATA_MANIFEST_KEY, manifestBytes, 'application/json', 'no-store');
  return summary(false);
}

/**
 * Every file of the data folder as a `/`-separated relative path, sorted. Names beginning with `.` (files and
 * folders) are skipped: they are a system's or a tool's, not data, and the data manifest lives under one.
 * Symbolic links are followed, a folder's only when it is not one of its own ancestors.
 */
export async function listDataFolder(dataDir: string, where: string): Promise<string[]> {
  const info = await stat(dataDir).catch(() => undefined);
  if (!info?.isDirectory()) throw new PublishError(`cannot publish the data folder ${dataDir} to ${where}: ${info ? 'it is not a folder' : 'it does not exist'} (GEOSHELF_DATA_DIR)`);
  const paths: string[] = [];
  const visit = async (folder: string, prefix: string, ancestors: string[]): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const path = join(folder, entry.name);
      const kind = entry.isSymbolicLink() ? await stat(path).catch(() => undefined) : entry;
      if (kind?.isFile()) paths.push(prefix + entry.name);
      else if (kind?.isDirectory()) {
        const real = await realpath(path);
        if (!ancestors.includes(real)) await visit(path, `${prefix}${entry.name}/`, [...ancestors, real]);
      }
    }
  };
  await visit(dataDir, '', [await realpath(dataDir)]);
  if (paths.length === 0) throw new PublishError(`cannot publish the data folder ${dataDir} to ${where}: it holds no files (names beginning with a dot are skipped)`);
  return paths.sort();
}

/** A site publish removes, after a stopped run, every key its tree does not list: data there would not survive it. */
async function refuseSitePrefix(store: ObjectStore): Promise<void> {
  const bytes = await store.get(MANIFEST_KEY);
  if (!bytes) return;
  const format = (() => {
    try {
      return (JSON.parse(new TextDecoder().decode(bytes)) as { format?: unknown }).format;
    } catch {
      return undefined;
    }
  })();
  if (format === 'geoshelf-manifest/1') throw new PublishError(`${store.name} holds a published geoshelf site (${MANIFEST_KEY}): publish the data to a prefix of its own`);
}
