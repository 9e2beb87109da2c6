/**
 * What a publish uploads and deletes: the objects of a built tree, as keys with their headers, diffed against the
 * manifest already in the bucket. Pure, so the plan can be printed (`--dry-run`) and tested without a bucket.
 */
import { cacheControlOf } from '../core/static-files.ts';
import type { Manifest, ManifestEntry } from '../runtime/manifest.ts';

/** Key of the state object: the manifest of what the bucket holds, uploaded after the files it names. */
export const MANIFEST_KEY = 'manifest.json';

/** Keys under this prefix are data files, published when the documents link them at `{base_url}/data`. */
export const DATA_PREFIX = 'data/';

/** The two precompressed siblings a file of the tree may have, with their `Content-Encoding`. */
export const SIBLINGS = [
  { suffix: '.br', encoding: 'br', size: 'br' },
  { suffix: '.gz', encoding: 'gzip', size: 'gz' },
] as const;

/** One object to put: where its bytes are read from, and the headers it is stored with. */
export interface PublishObject {
  key: string;
  /** Key of the manifest entry it belongs to (itself, or the file a sibling compresses). */
  entry: string;
  /** Path of the bytes, relative to the tree or data folder named by `from`. */
  path: string;
  from: 'dist' | 'data';
  bytes: number;
  contentType: string;
  cacheControl: string;
  /** `br` or `gzip` for a precompressed sibling. */
  contentEncoding?: string;
  /** SHA-256 of the entry's uncompressed bytes, stored as user metadata so an edge can send the server's ETag. */
  sha256: string;
}

/** What a publish does, in order: put `upload`, then the manifest, then delete `remove`. */
export interface PublishPlan {
  upload: PublishObject[];
  remove: string[];
  unchanged: number;
  /** Manifest keys whose bytes changed, appeared or went away: the source of the CDN purge list. */
  changedEntries: string[];
}

/** Every object an entry is stored as: the file, then its siblings. */
export function objectsOfEntry(key: string, entry: ManifestEntry, maxAge: number): PublishObject[] {
  const from = key.startsWith(DATA_PREFIX) ? 'data' : 'dist';
  const path = from === 'data' ? key.slice(DATA_PREFIX.length) : key;
  const common = { entry: key, from, contentType: entry.type, cacheControl: cacheControlOf(key, maxAge), sha256: entry.sha256 } as const;
  const objects: PublishObject[] = [{ ...common, key, path, bytes: entry.bytes }];
  for (const sibling of SIBLINGS) {
    const bytes = entry[sibling.size];
    if (bytes !== undefined) objects.push({ ...common, key: key + sibling.suffix, path: path + sibling.suffix, bytes, contentEncoding: sibling.encoding });
  }
  return objects;
}

/** Whether an entry is stored the same way in both manifests: same bytes, type and siblings. */
function sameEntry(a: ManifestEntry, b: ManifestEntry): boolean {
  return a.sha256 === b.sha256 && a.type === b.type && a.bytes === b.bytes && a.br === b.br && a.gz === b.gz;
}

/**
 * Diffs the manifest to publish against the one in the bucket (none on a first publish, or `all` to put every
 * object again): new and changed entries are uploaded with their siblings, keys the new manifest dropped are
 * deleted (a sibling too, when its file no longer has one).
 */
export function planPublish(next: Manifest, previous: Manifest | undefined, options: { maxAge: number; all?: boolean }): PublishPlan {
  const upload: PublishObject[] = [];
  const changedEntries: string[] = [];
  let unchanged = 0;
  const before = previous?.files ?? {};
  for (const key of Object.keys(next.files).sort()) {
    const entry = next.files[key]!;
    const old = Object.hasOwn(before, key) ? before[key] : undefined;
    if (old && sameEntry(old, entry) && !options.all) {
      // Counted, not listed: at 10k datasets nearly all of the 600,000 objects are unchanged.
      unchanged += 1 + SIBLINGS.filter((sibling) => entry[sibling.size] !== undefined).length;
      continue;
    }
    upload.push(...objectsOfEntry(key, entry, options.maxAge));
    if (!old || old.sha256 !== entry.sha256 || old.type !== entry.type) changedEntries.push(key);
  }
  const remove: string[] = [];
  for (const key of Object.keys(before).sort()) {
    const entry = Object.hasOwn(next.files, key) ? next.files[key] : undefined;
    if (!entry) {
      changedEntries.push(key);
      remove.push(key);
    }
    // A sibling goes when its file goes or no longer has one (it shrank under the compression threshold).
    for (const sibling of SIBLINGS) if (before[key]![sibling.size] !== undefined && entry?.[sibling.size] === undefined) remove.push(key + sibling.suffix);
  }
  return { upload, remove, unchanged, changedEntries: changedEntries.sort() };
}

/**
 * The URL paths a CDN must purge when an entry's bytes change, from its key: the inverse of docs/static-tree.md's
 * "URL → file". A page is its folder with a trailing slash, an `/api` or other JSON document its clean URL, a
 * prebuilt slice its path with the canonical query, and any other file its own path.
 * @example urlsOfKey('collections/geonames/index.html') // ['/collections/geonames/']
 * @example urlsOfKey('api/collections/geonames/_query/offset=50.json') // ['/api/collections/geonames?offset=50']
 */
export function urlsOfKey(key: string): string[] {
  const encode = (path: string) => path.split('/').map(encodeURIComponent).join('/');
  if (key === 'index.html') return ['/'];
  if (key.endsWith('/index.html')) return [`/${encode(key.slice(0, -'index.html'.length))}`];
  const slice = /^(.*)\/_query\/(.+)\.json$/.exec(key);
  if (slice) return [`/${encode(slice[1]!)}?${slice[2]}`];
  if (key.endsWith('/index.json')) return [`/${encode(key.slice(0, -'/index.json'.length))}`];
  return [`/${encode(key)}`];
}

/** The purge list of a plan: every URL whose bytes changed, and the manifest's own, sorted and without repeats. */
export function invalidationsOf(plan: PublishPlan): string[] {
  if (plan.changedEntries.length === 0) return [];
  return [...new Set([...plan.changedEntries.flatMap(urlsOfKey), ...urlsOfKey(MANIFEST_KEY)])].sort();
}
