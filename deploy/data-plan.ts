/**
 * What a data publish (`npm run publish -- --data`) uploads and deletes: the files of the data folder diffed against
 * the data manifest already in the bucket. Pure, so the plan can be printed (`--dry-run`) and tested without a bucket.
 */
import type { ManifestEntry } from '../runtime/manifest.ts';
import type { PublishObject } from './publish-plan.ts';
import { PublishError } from './published-tree.ts';

/**
 * Key of the state object, relative to the prefix. A data publish skips every name beginning with `.`, so no data
 * file can ever be stored under this key.
 */
export const DATA_MANIFEST_KEY = '.geoshelf/data-manifest.json';

/** The data manifest: every object a data publish wrote under the prefix and has not deleted since. */
export interface DataManifest {
  format: 'geoshelf-data-manifest/1';
  /** By key, which is the file's `/`-separated path in the data folder. */
  files: Record<string, ManifestEntry>;
}

/** What a data publish does, in order: put `upload`, delete `remove`, then put `manifest`. */
export interface DataPlan {
  upload: PublishObject[];
  remove: string[];
  /** Keys the previous manifest lists that the folder no longer has, left in the bucket and in the manifest. */
  kept: string[];
  unchanged: number;
  manifest: DataManifest;
}

/** How to plan: the `Cache-Control` max-age, and the flags `--all` and `--delete`. */
export interface DataPlanOptions {
  maxAge: number;
  /** Upload every file of the folder, changed or not. */
  all?: boolean;
  /** Delete the objects of files the folder no longer has; without it they stay, listed, for a later `--delete`. */
  delete?: boolean;
}

/**
 * Diffs the data folder's files against the previous data manifest (none on a first publish). A file whose size,
 * SHA-256 or media type changed, or that is new, is uploaded. A key the folder no longer has is deleted only with
 * `delete`; otherwise it stays listed, so that a later publish with `--delete` still knows geoshelf wrote it.
 * @example planDataPublish({ 'a.parquet': entry }, undefined, { maxAge: 300 }).upload // [{ key: 'a.parquet', … }]
 */
export function planDataPublish(files: Record<string, ManifestEntry>, previous: DataManifest | undefined, options: DataPlanOptions): DataPlan {
  const before = previous?.files ?? {};
  const upload: PublishObject[] = [];
  let unchanged = 0;
  for (const key of Object.keys(files).sort()) {
    const entry = files[key]!;
    const old = Object.hasOwn(before, key) ? before[key] : undefined;
    if (old && !options.all && old.sha256 === entry.sha256 && old.bytes === entry.bytes && old.type === entry.type) {
      unchanged++;
      continue;
    }
    upload.push({ key, entry: key, path: key, from: 'data', bytes: entry.bytes, contentType: entry.type, cacheControl: `public, max-age=${options.maxAge}`, sha256: entry.sha256 });
  }
  // A key that is not a data path (edited by hand, say) is never deleted: no data publish could have written it.
  const gone = Object.keys(before).filter((key) => !Object.hasOwn(files, key) && isDataPath(key)).sort();
  const next: Record<string, ManifestEntry> = Object.create(null) as Record<string, ManifestEntry>;
  if (!options.delete) for (const key of gone) next[key] = before[key]!;
  for (const key of Object.keys(files)) next[key] = files[key]!;
  return {
    upload, unchanged,
    remove: options.delete ? gone : [],
    kept: options.delete ? [] : gone,
    manifest: { format: 'geoshelf-data-manifest/1', files: next },
  };
}

/** Whether a key could be a file of a data folder: `/`-separated names, none empty and none beginning with `.`. */
export function isDataPath(key: string): boolean {
  return key.split('/').every((name) => name !== '' && !name.startsWith('.'));
}

/** Serialises a data manifest with sorted keys, one file per line, so an unchanged folder gives the same bytes. */
export function serializeDataManifest(manifest: DataManifest): string {
  const lines = Object.keys(manifest.files).sort().map((key) => `    ${JSON.stringify(key)}: ${JSON.stringify(manifest.files[key])}`);
  return `{\n  "format": ${JSON.stringify(manifest.format)},\n  "files": {\n${lines.join(',\n')}\n  }\n}\n`;
}

/** The bucket's data manifest, which must be geoshelf's: anything else under that key is not ours to overwrite. */
export function parseDataManifest(bytes: Uint8Array, where: string): DataManifest {
  try {
    const manifest = JSON.parse(new TextDecoder().decode(bytes)) as DataManifest;
    if (manifest.format === 'geoshelf-data-manifest/1' && manifest.files && typeof manifest.files === 'object' && !Array.isArray(manifest.files)) return manifest;
  } catch {
    // Reported below, as for a manifest of another format.
  }
  throw new PublishError(`${where}/${DATA_MANIFEST_KEY} is not a geoshelf data manifest: refusing to publish over something else (use another prefix)`);
}
