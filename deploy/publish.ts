/**
 * `npm run publish -- s3://BUCKET[/PREFIX]`: puts the built tree into an S3-compatible bucket, uploading only what
 * changed since the manifest already there. New and changed objects go first, then `manifest.json`, then the
 * deletions, so a reader never sees a manifest that names a missing object; a publish that stops half way leaves
 * the old manifest, and a marker that makes the next run finish its work.
 *
 * `--data` publishes the data folder instead (deploy/publish-data.ts). `geoshelf publish` (cli/publish-command.ts)
 * reads the command line; `node deploy/publish.ts` runs `geoshelf publish`.
 *
 * @example npm run publish -- s3://geoshelf-site/v1 --invalidations purge.json
 * @example AWS_ENDPOINT_URL=http://127.0.0.1:9000 npm run publish -- s3://site --dry-run
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runAsGeoshelf } from '../cli/run-as-geoshelf.ts';
import { serializeManifest, type Manifest } from '../runtime/manifest.ts';
import { ObjectStore, parseTarget } from './object-store.ts';
import { invalidationsOf, MANIFEST_KEY, objectsOfEntry, planPublish, type PublishPlan } from './publish-plan.ts';
import { PublishError, readPublishedTree } from './published-tree.ts';
import { sumBytes, uploadAll } from './upload.ts';

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

if (import.meta.main) runAsGeoshelf(['publish']);
