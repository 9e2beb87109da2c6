/**
 * The manifest a publish puts in the bucket: the built tree's `manifest.json`, plus the catalog's local data files
 * under `data/` when the documents link them there (`GEOSHELF_STORAGE_BASE_URL` left at `{base_url}/data`).
 */
import { stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { CatalogModel } from '../core/model.ts';
import { MODEL_FILE, readManifest, type Manifest, type ManifestEntry } from '../runtime/manifest.ts';
import { readModel } from '../runtime/model-file.ts';
import { dataFileType, hashFile, listSourceFiles } from '../runtime/source-files.ts';
import { DataCache } from '../generator/enrich/data-cache.ts';
import { DATA_FACTS_VERSION } from '../generator/enrich/inspect-data-file.ts';
import { DATA_PREFIX } from './publish-plan.ts';

/** The manifest to publish, and a line saying whether and why data files are in it. */
export interface PublishedTree {
  manifest: Manifest;
  dataNote: string;
}

/** Raised for a tree that cannot be published; the message is one line a user can act on. */
export class PublishError extends Error {}

/**
 * Reads the built tree and, when the documents link data files at `{base_url}/data`, hashes the files of every
 * source in the local data folder (a shapefile with its sidecars, every file of a `.gdb`). The build's hash memo in
 * `cacheDir` gives the hash of a file whose path, size and mtime it knows, as it does for the build itself.
 */
export async function readPublishedTree(distDir: string, dataDir: string, cacheDir?: string): Promise<PublishedTree> {
  const manifest = await readManifest(distDir);
  if (!manifest) throw new PublishError(`${distDir} holds no built tree (no readable manifest.json): run npm run build first.`);
  const { base_url: baseUrl, storage_base_url: storageBaseUrl } = manifest.settings;
  if (storageBaseUrl !== `${baseUrl}/data`) {
    return { manifest, dataNote: `data files not published: the documents link them at ${storageBaseUrl}, outside this tree` };
  }
  const model = readBuiltModel(distDir);
  const paths = new Set<string>();
  for (const collection of model.collections) for (const dataset of collection.datasets) for (const file of dataset.files) for (const format of file.formats) for (const source of format.sources) {
    if (source.location.type !== 'file' || !source.url?.startsWith(`${storageBaseUrl}/`)) continue;
    for (const part of listSourceFiles(dataDir, source.location.path)) paths.add(relative(dataDir, part.path).split(sep).join('/'));
  }
  const files: Record<string, ManifestEntry> = Object.assign(Object.create(null) as Record<string, ManifestEntry>, manifest.files);
  const data = await describeDataFiles(dataDir, [...paths].sort(), cacheDir);
  for (const path of Object.keys(data)) files[DATA_PREFIX + path] = data[path]!;
  return { manifest: { ...manifest, files }, dataNote: `${paths.size} data files under ${DATA_PREFIX}, linked at ${storageBaseUrl}` };
}

/**
 * The manifest entries of data files, by their `/`-separated paths in the data folder: SHA-256, size and media type.
 * The build's hash memo in `cacheDir` gives the hash of a file whose path, size and mtime it knows, so a publish
 * reads again only the files the build has not seen as they are.
 */
export async function describeDataFiles(dataDir: string, paths: string[], cacheDir?: string): Promise<Record<string, ManifestEntry>> {
  const files = Object.create(null) as Record<string, ManifestEntry>;
  // Read only: the memo is the build's, and a publish never writes it.
  const memo = cacheDir ? await DataCache.open(cacheDir, 'data-facts.json', DATA_FACTS_VERSION) : undefined;
  for (const path of paths) {
    const absolute = join(dataDir, path);
    const sha256 = memo ? await memo.contentHash(absolute) : await hashFile(absolute);
    files[path] = { sha256, bytes: (await stat(absolute)).size, type: dataFileType(path) };
  }
  return files;
}

function readBuiltModel(distDir: string): CatalogModel {
  try {
    return readModel(distDir).file.model;
  } catch {
    throw new PublishError(`${distDir} has no readable _geoshelf/${MODEL_FILE}: run npm run build again.`);
  }
}
