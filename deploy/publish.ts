/**
 * `npm run publish -- s3://BUCKET[/PREFIX]`: puts the built tree into an S3-compatible bucket, uploading only what
 * changed since the manifest already there. New and changed objects go first, then `manifest.json`, then the
 * deletions, so a reader never sees a manifest that names a missing object; a publish that stops half way leaves
 * the old manifest, and a marker that makes the next run finish its work.
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
import { ObjectStore, parseTarget } from './object-store.ts';
import { invalidationsOf, MANIFEST_KEY, objectsOfEntry, planPublish, type PublishObject, type PublishPlan } from './publish-plan.ts';
import { PublishError, readPublishedTree } from './published-tree.ts';

/** Written when a publish starts changing the bucket and removed when it ends: its presence means one stopped half way. */
export const MARKER_KEY = '_geoshelf/publishing.json';
const DEFAULT_CONCURRENCY = 8;
const PROGRESS_EVERY_MS = 1000;

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
    await uploadAll(store, plan.upload, options, log);
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

/** Uploads objects `concurrency` at a time, printing a progress line at most once a second. */
async function uploadAll(store: ObjectStore, objects: PublishObject[], options: PublishOptions, log: (line: string) => void): Promise<void> {
  const total = sumBytes(objects);
  let done = 0;
  let doneBytes = 0;
  let lastReport = performance.now();
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < objects.length && !failed) {
      const object = objects[next++]!;
      await store.put({
        key: object.key, file: join(object.from === 'dist' ? options.distDir : options.dataDir, object.path), bytes: object.bytes,
        contentType: object.contentType, cacheControl: object.cacheControl, metadata: { sha256: object.sha256 },
        ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
      }).catch((error: unknown) => {
        // The other workers finish the object they hold and take no more, so the command ends with this error.
        failed = true;
        throw error;
      });
      done++;
      doneBytes += object.bytes;
      if (performance.now() - lastReport >= PROGRESS_EVERY_MS || done === objects.length) {
        lastReport = performance.now();
        log(`uploaded ${done} of ${objects.length} objects (${formatBytes(doneBytes)} of ${formatBytes(total)})`);
      }
    }
  };
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
  await Promise.all(Array.from({ length: Math.min(concurrency, objects.length) }, worker));
}

function sumBytes(objects: PublishObject[]): number {
  return objects.reduce((sum, object) => sum + object.bytes, 0);
}

/** Bytes in B, kB or MB, for progress lines. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  return bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

const USAGE = `Usage: npm run publish -- s3://BUCKET[/PREFIX] [--dry-run] [--invalidations FILE] [--all] [--concurrency N]

Publishes the built tree (GEOSHELF_DIST_DIR) to an S3-compatible bucket, uploading only what changed since the
manifest.json already there; with the default GEOSHELF_STORAGE_BASE_URL, the data files go under data/.
Credentials and endpoint: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (default us-east-1),
AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (a custom endpoint uses path-style addressing).

  --dry-run              print what would be uploaded, deleted and purged; change nothing
  --invalidations FILE   write the URL paths a CDN must purge, as a JSON array
  --all                  upload every object, changed or not
  --concurrency N        objects uploaded at once (default ${DEFAULT_CONCURRENCY})`;

/** Runs the command line; resolves with the exit code. */
export async function runPublishCli(argv: string[]): Promise<number> {
  let values: { 'dry-run'?: boolean; invalidations?: string; all?: boolean; concurrency?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { 'dry-run': { type: 'boolean' }, invalidations: { type: 'string' }, all: { type: 'boolean' }, concurrency: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (error) {
    console.error(`publish: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) return console.log(USAGE), 0;
  const concurrency = values.concurrency === undefined ? DEFAULT_CONCURRENCY : Number(values.concurrency);
  if (positionals.length !== 1 || !Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    console.error(`publish: ${positionals.length !== 1 ? 'give one target, s3://BUCKET[/PREFIX]' : '--concurrency must be a whole number from 1 to 64'}\n\n${USAGE}`);
    return 2;
  }
  try {
    const config = loadConfig();
    const summary = await publish({
      distDir: config.distDir, dataDir: config.dataDir, cacheDir: config.cacheDir, cacheMaxAge: config.cacheMaxAge, target: positionals[0]!, concurrency,
      dryRun: values['dry-run'] ?? false, all: values.all ?? false, ...(values.invalidations ? { invalidations: values.invalidations } : {}),
    });
    const verb = summary.dryRun ? 'would upload' : 'uploaded';
    console.log(`${summary.dryRun ? 'Dry run: ' : ''}${verb} ${summary.uploaded} objects (${formatBytes(summary.uploadedBytes)}), ${summary.dryRun ? 'would delete' : 'deleted'} ${summary.deleted}, ${summary.unchanged} unchanged, ${summary.invalidations.length} URLs to purge, in ${summary.seconds.toFixed(1)} s`);
    return 0;
  } catch (error) {
    if (error instanceof PublishError) console.error(`publish: ${error.message}`);
    else console.error(`publish: ${(error as Error)?.message ?? String(error)}`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await runPublishCli(process.argv.slice(2));
