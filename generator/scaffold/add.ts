/**
 * `geoshelf add PATH…`: records for a steward's own data files, written from what the files say. Each data file
 * in the data folder that no source names yet becomes a dataset (one file record per layer of a GeoPackage or
 * File Geodatabase) in a collection, with its columns listed for description, its format and one source. The
 * formats it needs are added to `formats.yaml`, a storage location for the data folder to
 * `storage-locations.yaml` when there is none, and the collection's record when it is new. A record file that
 * exists is never written: running it again adds only what is new. Files in object storage (`s3://` prefixes,
 * `https://` URLs; `add-remote.ts`) are read once through the build's remote reader, and their sources name the
 * location of their bucket or server, added when the catalog has none.
 */
import { mkdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import type { Config } from '../../runtime/config.ts';
import { readRecordFiles } from '../load/read-records.ts';
import { parseRecords } from '../parse/parse-records.ts';
import { DataCache } from '../enrich/data-cache.ts';
import { DATA_FACTS_VERSION, openInspectionInstance, type DataFacts } from '../enrich/inspect-data-file.ts';
import type { WholeReader } from '../enrich/remote-whole.ts';
import type { StorageLocationRecord } from '../../schemas/records/storage-location-record.ts';
import { STORAGE_PLACEHOLDER } from '../model/storage-location-config.ts';
import { AddError, type AddResult } from './add-outcome.ts';
import { convertAll } from './convert-files.ts';
import { describeLayers, describeRemoteLayers, type ReadContext } from './describe-layers.ts';
import { findDataFiles, findRemoteFiles, groupByStem, stemOf } from './find-data-files.ts';
import { slugOf, uniqueSlug } from './slugs.ts';
import { appendRecords, ensureFormats, writeRecord } from './write-records.ts';

/** Whether a PATH given to `add` is in object storage (read by add-remote.ts, loaded only then: the S3 SDK is large). */
function isRemotePath(path: string): boolean {
  return /^(s3|https?):\/\//i.test(path);
}

/** What a description still to be written says; the build counts these as undescribed. */
export const TODO_DESCRIPTION = 'TODO: describe this column';

/** What to add, and where from. */
export interface AddOptions {
  config: Config;
  /**
   * Files or folders inside the data folder (absolute, or relative to the working directory), and objects or
   * prefixes in object storage (`s3://bucket/prefix`, or the `https://` URL of one file).
   */
  paths: string[];
  /** Slug of the collection the new datasets go in. */
  collection: string;
  /** Version of every new source; by default the date the file was last modified (YYYY-MM-DD). */
  version?: string;
  /**
   * Write a GeoParquet file beside each data file that is not GeoParquet (`geoshelf convert`), listed as the file's
   * GeoParquet source: so it is queried, mapped by its twin and in /features. A CSV is cataloged only this way; a
   * Parquet file without GeoParquet metadata is replaced by its conversion.
   */
  convert?: boolean;
  log?: (line: string) => void;
  /** Where the AWS variables are read from (the S3 endpoint and credentials); process.env by default. */
  env?: NodeJS.ProcessEnv;
}

/** Writes the records of every data file under `paths` that no source names yet. */
export async function addRecords(options: AddOptions): Promise<AddResult> {
  const { config } = options;
  const log = options.log ?? (() => undefined);
  const env = options.env ?? process.env;
  const result: AddResult = { written: [], skipped: [] };
  const remotePaths = options.paths.filter(isRemotePath);
  const localPaths = options.paths.filter((path) => !isRemotePath(path));
  const dataDir = localPaths.length === 0 ? config.dataDir : await realpath(config.dataDir).catch(() => {
    throw new AddError(`the data folder ${config.dataDir} does not exist (GEOSHELF_DATA_DIR): put the files in it, or point it at their folder`);
  });
  const found = localPaths.length === 0 ? [] : await findDataFiles(dataDir, localPaths, result, options.convert ?? false);
  // A steward starts from an empty folder, or from none.
  await mkdir(config.catalogDir, { recursive: true });
  const parsed = parseRecords(await readRecordFiles(config.catalogDir)).records;
  const locations = parsed.storageLocations.map(({ record }) => record);
  const remote = remotePaths.length === 0 ? { files: [], added: [] } : await findRemoteFiles(remotePaths, locations, env, result);
  found.push(...remote.files);
  // A source names a local file when it is in a location of the data folder (named, or left out as the default).
  const inDataFolder = new Set(locations.filter((location) => location.base_url.includes(STORAGE_PLACEHOLDER)).map((location) => location.slug));
  const defaultLocation = locations.length === 1 ? locations[0]!.slug : inDataFolder.size === 1 ? [...inDataFolder][0] : undefined;
  const keyOf = (location: string | undefined, path: string) => {
    const slug = location ?? defaultLocation;
    return `${slug === undefined || inDataFolder.has(slug) ? '' : slug}\u0000${path}`;
  };
  const sources = parsed.datasets.flatMap(({ record }) => record.files.flatMap((file) => file.formats.flatMap((format) => format.sources)));
  const named = new Set(sources.flatMap((source) => (source.path === undefined ? [] : [keyOf(source.storage_location, source.path)])));
  let fresh = found.filter((file) => {
    if (!named.has(keyOf(file.remote?.slug, file.path))) return true;
    result.skipped.push({ path: file.label, reason: 'a source names it already' });
    return false;
  });
  if (options.convert) fresh = await convertAll(fresh, dataDir, result, log);
  if (fresh.length === 0) return result;

  const newLocations = remote.added.filter((added) => fresh.some((file) => file.remote?.slug === added.slug));
  if (fresh.some((file) => !file.remote)) newLocations.push(...dataFolderLocation(locations, sources.some((source) => source.storage_location === undefined)));
  if (newLocations.length > 0) await appendRecords(config.catalogDir, 'storage-locations.yaml', newLocations, result);
  const formats = await ensureFormats(config.catalogDir, parsed.formats.map(({ record }) => record), [...fresh, ...fresh.flatMap((file) => [...(file.layerFiles?.values() ?? [])])], result);
  if (!parsed.collections.some(({ record }) => record.slug === options.collection)) {
    await writeRecord(config.catalogDir, `collections/${options.collection}.yaml`, { slug: options.collection, name: titleOf(options.collection), description: 'TODO: what this collection gathers and where it comes from.' }, result);
  }
  const taken = new Set(parsed.datasets.filter(({ record }) => record.collection === options.collection).map(({ record }) => record.slug));
  // The build's own cache: what is read here, the build after it does not read again.
  const cache = await DataCache.open<DataFacts>(config.cacheDir, 'data-facts.json', DATA_FACTS_VERSION);
  const usedPaths = new Set<string>(cache.paths());
  let instance: DuckDBInstance | undefined;
  const duckdb = async () => (instance ??= await openInspectionInstance());
  let reader: Promise<WholeReader> | undefined;
  const remoteReader = () => (reader ??= import('../enrich/remote-whole.ts').then(({ openWholeReader }) => openWholeReader({ cacheDir: config.cacheDir, duckdb, facts: { cache, used: new Set() } })));
  const context: ReadContext = { cache, usedPaths, dataDir, duckdb, scratchDir: config.cacheDir, remoteReader, env };
  try {
    for (const group of groupByStem(fresh)) {
      const stem = stemOf(group[0]!.path);
      const slug = uniqueSlug(slugOf(stem), taken);
      taken.add(slug);
      const files: Record<string, unknown>[] = [];
      for (const file of group) {
        let layers: { layer: string | null; columns: string[] }[];
        try {
          layers = file.remote ? await describeRemoteLayers(file, context) : await describeLayers(join(dataDir, file.path), file.formatType, context);
        } catch (error) {
          const message = (error as Error).message.split('\n')[0]!;
          result.skipped.push({ path: file.label, reason: message.startsWith('it cannot be read') ? message : `it cannot be read as ${file.formatType}: ${message}` });
          continue;
        }
        // A file in object storage names its location; one in the data folder is in the default location.
        const source = { version: options.version ?? file.modified.toISOString().slice(0, 10), path: file.path, ...(file.remote ? { storage_location: file.remote.slug } : {}) };
        const format = { format: formats.get(file.formatType)!, sources: [source] };
        for (const { layer, columns } of layers) {
          // The formats of one file (same folder and name) are one file record; each layer of a GeoPackage is one of its own.
          const same = layer === null ? files.find((entry) => entry.layer_name === undefined) : undefined;
          if (same) {
            (same.formats as unknown[]).push(format);
            for (const column of columns) (same.columns as Record<string, string>)[column] = TODO_DESCRIPTION;
            continue;
          }
          // A layer converted to GeoParquet is the same file record's GeoParquet format.
          const converted = layer === null ? undefined : file.layerFiles?.get(layer);
          const convertedFormat = converted && { format: formats.get('geoparquet')!, sources: [{ ...source, path: converted.path }] };
          files.push({
            slug: layer === null ? slug : slugOf(layer), name: titleOf(layer ?? stem), ...(layer === null ? {} : { layer_name: layer }),
            columns: todoColumns(columns), formats: convertedFormat ? [convertedFormat, format] : [format],
          });
        }
      }
      if (files.length === 0) continue;
      const record = { slug, collection: options.collection, name: titleOf(stem), description: 'TODO: what this dataset holds, where it comes from, and what it is good for.', files };
      await writeRecord(config.catalogDir, `datasets/${options.collection}/${slug}.yaml`, record, result);
      log(`${group.map((file) => file.label).join(', ')}: dataset "${slug}" with ${files.length} file${files.length === 1 ? '' : 's'}`);
    }
    await cache.save(new Set(cache.keys()), usedPaths);
    await (await reader)?.save(true);
  } finally {
    instance?.closeSync();
  }
  return result;
}

/**
 * The location to add for the data folder, when the catalog has none: sources in the data folder then leave
 * `storage_location` out, as it is the only one for the data folder (the build's default).
 */
function dataFolderLocation(locations: StorageLocationRecord[], someLeaveItOut: boolean): StorageLocationRecord[] {
  const local = locations.filter((location) => location.base_url.includes(STORAGE_PLACEHOLDER));
  if (local.length === 1) return [];
  if (local.length > 1) throw new AddError(`storage-locations.yaml has ${local.length} locations for the data folder (base_url "${STORAGE_PLACEHOLDER}…"): sources must name theirs, so add cannot choose`);
  // The sources that leave it out are in the only location, a bucket; a location for the data folder would take them.
  if (locations.length === 1 && someLeaveItOut) {
    throw new AddError(`the sources that leave out storage_location are in "${locations[0]!.slug}", the catalog's only location; give them storage_location: ${locations[0]!.slug}, then add files of the data folder`);
  }
  const slug = uniqueSlug('data', new Set(locations.map((location) => location.slug)));
  return [{ slug, name: 'Data folder', backend_type: 'http', description: 'The data folder (GEOSHELF_DATA_DIR), served under /data; in production, the address set in GEOSHELF_STORAGE_BASE_URL.', base_url: STORAGE_PLACEHOLDER }];
}

/** Each column with the placeholder description, keyed by the data's column names: no prototype, so any name is only itself. */
function todoColumns(columns: string[]): Record<string, string> {
  const described = Object.create(null) as Record<string, string>;
  for (const column of columns) described[column] = TODO_DESCRIPTION;
  return described;
}

/** A name from a file name: `roads_2024` → `Roads 2024`. */
function titleOf(name: string): string {
  const words = name.replace(/[_-]+/g, ' ').replace(/\s+/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : name;
}
