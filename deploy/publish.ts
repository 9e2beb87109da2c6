/**
 * `npm run publish -- s3://BUCKET[/PREFIX]`: puts the built tree into an S3-compatible bucket, uploading only what
 * changed since the manifest already there. New and changed objects go first, then `manifest.json`, then the
 * deletions, so a reader never sees a manifest that names a missing object; a publish that stops half way leaves
 * the old manifest, and a marker that makes the next run finish its work.
 *
 * `--data` publishes the data folder instead (deploy/publish-data.ts).
 *
 * @example npm run publish -- s3://geoshelf-site/v1 --invalidations purge.json
 * @example AWS_ENDPOINT_URL=http://127.0.0.1:9000 npm run publish -- s3://site --dry-run
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../runtime/config.ts';
import { serializeManifest, type Manifest } from '../runtime/manifest.ts';
import { DATA_MANIFEST_KEY } from './data-plan.ts';
import { ObjectStore, parseTarget } from './object-store.ts';
import { publishData } from './publish-data.ts';
import { invalidationsOf, MANIFEST_KEY, objectsOfEntry, planPublish, type PublishPlan } from './publish-plan.ts';
import { PublishError, readPublishedTree } from './published-tree.ts';
import { DEFAULT_CONCURRENCY, formatBytes, sumBytes, uploadAll } from './upload.ts';

/** Written when a publish starts changing the bucket and removed when it ends: its presence means one stopped half way. */
export const MARKER_KEY = '_geoshelf/publishing.json';

/** What to publish where. */
export interface PublishOptions {
  distDir: string;
  dataDir: string;
  /** `s3://bucket/prefix`. */
  target: string;
  /** Seconds in the `Cache-Control` max-age of documents (GEOSHELF_CACHE_MAX_AGE). */
  cacheMaxAge: number;
  /** The build's cache folder (GEOSHELF_CACHE_DIR), whose memo of data-file hashes spares hashing them again. */
  cacheDir?: string;
  dryRun?: boolean;
  /** Upload every object, not only the changed ones (after a change of GEOSHELF_CACHE_MAX_AGE, for example). */
  all?: boolean;
  /** File to write the CDN purge list to, as a JSON array of URL paths. */
  invalidations?: string;
  concurrency?: number;
  /** Where AWS_* variables are read from; the process's environment by default. */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

/** What a publish did (or, with `dryRun`, would do). */
export interface PublishSummary {
  uploaded: number;
  uploadedBytes: number;
  deleted: number;
  unchanged: number;
  seconds: number;
  invalidations: string[];
  dryRun: boolean;
}

/** What the marker holds: the purge list of the publish that wrote it, so a rerun still hands it to the CDN. */
interface Marker {
  started: string;
  invalidations: string[];
}

/** Publishes the tree; throws a `PublishError` with a one-line message when it cannot. */
export async function publish(options: PublishOptions): Promise<PublishSummary> {
  const started = performance.now();
  const log = options.log ?? ((line: string) => console.log(line));
  const store = new ObjectStore(parseTarget(options.target), options.env);
  // The bucket's state is fetched while the local tree is read: at 10k datasets each side is tens of MB of JSON.
  const [tree, previousBytes, markerBytes] = await Promise.all([readPublishedTree(options.distDir, options.dataDir, options.cacheDir), store.get(MANIFEST_KEY), store.get(MARKER_KEY)]);
  const previous = previousBytes && parsePublishedManifest(previousBytes, store.name);
  const marker = markerBytes && parseMarker(markerBytes);
  if (!previous && !marker && (await store.list(1)).length > 0) {
    throw new PublishError(`${store.name} holds objects but no geoshelf manifest.json: refusing to publish over something else (use an empty prefix)`);
  }
  const plan = planPublish(tree.manifest, previous, { maxAge: options.cacheMaxAge, all: options.all ?? false });
  if (marker) {
    log(`${store.name}: an earlier publish stopped half way; this one finishes it (removes what the new tree does not list)`);
    plan.remove = await leftoverKeys(store, tree.manifest, plan, options.cacheMaxAge);
  }
  const manifestBytes = new TextEncoder().encode(serializeManifest(tree.manifest));
  const manifestChanged = !previousBytes || Buffer.compare(Buffer.from(previousBytes), Buffer.from(manifestBytes)) !== 0;
  const invalidations = [...new Set([...(marker?.invalidations ?? []), ...invalidationsOf(plan)])].sort();
  const summary = (uploaded: number, uploadedBytes: number, deleted: number, dryRun: boolean): PublishSummary => ({
    uploaded, uploadedBytes, deleted, unchanged: plan.unchanged, seconds: (performance.now() - started) / 1000, invalidations, dryRun,
  });

  log(`${store.name}: ${tree.dataNote}`);
  if (options.dryRun) {
    for (const object of plan.upload) log(`upload ${object.key} (${object.bytes} bytes${object.contentEncoding ? `, ${object.contentEncoding}` : ''})`);
    if (manifestChanged) log(`upload ${MANIFEST_KEY}`);
    for (const key of plan.remove) log(`delete ${key}`);
    for (const url of invalidations) log(`purge ${url}`);
    return summary(plan.upload.length, sumBytes(plan.upload), plan.remove.length, true);
  }
  if (plan.upload.length > 0 || plan.remove.length > 0 || manifestChanged || marker) {
    const body: Marker = { started: new Date().toISOString(), invalidations };
    await store.putBytes(MARKER_KEY, new TextEncoder().encode(JSON.stringify(body)), 'application/json', 'no-store');
    await uploadAll(store, plan.upload, { fileOf: (object) => join(object.from === 'dist' ? options.distDir : options.dataDir, object.path), concurrency: options.concurrency, log });
    await store.putBytes(MANIFEST_KEY, manifestBytes, 'application/json', `public, max-age=${options.cacheMaxAge}`, { sha256: createHash('sha256').update(manifestBytes).digest('hex') });
    await store.remove(plan.remove);
    await store.remove([MARKER_KEY]);
  }
  if (options.invalidations) await writeFile(options.invalidations, `${JSON.stringify(invalidations, null, 1)}\n`);
  return summary(plan.upload.length, sumBytes(plan.upload), plan.remove.length, false);
}

/** The bucket's manifest, which must be geoshelf's: anything else means the prefix belongs to something else. */
function parsePublishedManifest(bytes: Uint8Array, where: string): Manifest {
  try {
    const manifest = JSON.parse(new TextDecoder().decode(bytes)) as Manifest;
    if (manifest.format === 'geoshelf-manifest/1' && manifest.files && typeof manifest.files === 'object') return manifest;
  } catch {
    // Reported below, as for a manifest of another format.
  }
  throw new PublishError(`${where}/${MANIFEST_KEY} is not a geoshelf manifest: refusing to publish over something else (use another prefix)`);
}

function parseMarker(bytes: Uint8Array): Marker {
  try {
    const marker = JSON.parse(new TextDecoder().decode(bytes)) as Marker;
    return { started: String(marker.started), invalidations: Array.isArray(marker.invalidations) ? marker.invalidations.filter((url) => typeof url === 'string') : [] };
  } catch {
    return { started: '', invalidations: [] };
  }
}

/** After an interrupted publish: every key under the prefix that the new tree does not store. */
async function leftoverKeys(store: ObjectStore, manifest: Manifest, plan: PublishPlan, maxAge: number): Promise<string[]> {
  const wanted = new Set([MANIFEST_KEY, MARKER_KEY]);
  for (const key of Object.keys(manifest.files)) for (const object of objectsOfEntry(key, manifest.files[key]!, maxAge)) wanted.add(object.key);
  const leftovers = (await store.list()).filter((key) => !wanted.has(key));
  return [...new Set([...plan.remove, ...leftovers])].sort();
}

const USAGE = `Usage: npm run publish -- s3://BUCKET[/PREFIX] [--dry-run] [--invalidations FILE] [--all] [--concurrency N]
       npm run publish -- --data s3://BUCKET[/PREFIX] [--dry-run] [--delete] [--all] [--concurrency N]

Publishes the built tree (GEOSHELF_DIST_DIR) to an S3-compatible bucket, uploading only what changed since the
manifest.json already there; with the default GEOSHELF_STORAGE_BASE_URL, the data files go under data/.
With --data, publishes the data folder (GEOSHELF_DATA_DIR) instead, for a storage location with backend_type s3:
each file under PREFIX/ at its path in the folder (names beginning with a dot are skipped), uploading only what
changed since PREFIX/${DATA_MANIFEST_KEY}.
Credentials and endpoint: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (default us-east-1),
AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (a custom endpoint uses path-style addressing).

  --data                 publish the data folder instead of the built tree
  --delete               with --data: delete the objects of files the folder no longer has (without it they stay)
  --dry-run              print what would be uploaded, deleted and purged; change nothing
  --invalidations FILE   write the URL paths a CDN must purge, as a JSON array (not with --data)
  --all                  upload every object, changed or not
  --concurrency N        objects uploaded at once (default ${DEFAULT_CONCURRENCY})`;

/** The flags of the command line, as parsed. */
interface PublishFlags {
  data?: boolean;
  delete?: boolean;
  'dry-run'?: boolean;
  invalidations?: string;
  all?: boolean;
  concurrency?: string;
  help?: boolean;
}

/** Runs the command line; resolves with the exit code. */
export async function runPublishCli(argv: string[]): Promise<number> {
  let values: PublishFlags;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv, allowPositionals: true,
      options: { data: { type: 'boolean' }, delete: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, invalidations: { type: 'string' }, all: { type: 'boolean' }, concurrency: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    console.error(`publish: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) return console.log(USAGE), 0;
  const concurrency = values.concurrency === undefined ? DEFAULT_CONCURRENCY : Number(values.concurrency);
  const misuse = usageError(values, positionals, concurrency);
  if (misuse) {
    console.error(`publish: ${misuse}\n\n${USAGE}`);
    return 2;
  }
  try {
    const config = loadConfig();
    const common = { dataDir: config.dataDir, cacheDir: config.cacheDir, cacheMaxAge: config.cacheMaxAge, target: positionals[0]!, concurrency, dryRun: values['dry-run'] ?? false, all: values.all ?? false };
    const [would, did] = common.dryRun ? ['would upload', 'would delete'] : ['uploaded', 'deleted'];
    if (values.data) {
      const summary = await publishData({ ...common, delete: values.delete ?? false });
      console.log(`${summary.dryRun ? 'Dry run: ' : ''}${would} ${summary.uploaded} objects (${formatBytes(summary.uploadedBytes)}), ${did} ${summary.deleted}, ${summary.unchanged} unchanged, ${summary.kept} kept (no longer in the folder), in ${summary.seconds.toFixed(1)} s`);
      return 0;
    }
    const summary = await publish({ ...common, distDir: config.distDir, ...(values.invalidations ? { invalidations: values.invalidations } : {}) });
    console.log(`${summary.dryRun ? 'Dry run: ' : ''}${would} ${summary.uploaded} objects (${formatBytes(summary.uploadedBytes)}), ${did} ${summary.deleted}, ${summary.unchanged} unchanged, ${summary.invalidations.length} URLs to purge, in ${summary.seconds.toFixed(1)} s`);
    return 0;
  } catch (error) {
    if (error instanceof PublishError) console.error(`publish: ${error.message}`);
    else console.error(`publish: ${(error as Error)?.message ?? String(error)}`);
    return 1;
  }
}

/** Why the arguments make no command, or undefined when they make one. */
function usageError(values: PublishFlags, positionals: string[], concurrency: number): string | undefined {
  if (positionals.length !== 1) return 'give one target, s3://BUCKET[/PREFIX]';
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) return '--concurrency must be a whole number from 1 to 64';
  if (values.delete && !values.data) return '--delete goes with --data (a site publish always deletes what the new tree no longer has)';
  // The URL of a data object is the storage location's base_url and the key, which only the catalog knows.
  if (values.data && values.invalidations) return '--invalidations goes with the site publish, not with --data';
  return undefined;
}

if (import.meta.main) process.exitCode = await runPublishCli(process.argv.slice(2));
