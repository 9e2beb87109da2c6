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
import { appendFile, mkdir, readdir, realpath, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, sep } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { DuckDBInstance } from '@duckdb/node-api';
import { stringify } from 'yaml';
import type { Config } from '../../runtime/config.ts';
import { readRecordFiles } from '../load/read-records.ts';
import { parseRecords } from '../parse/parse-records.ts';
import { DataCache } from '../enrich/data-cache.ts';
import { DATA_FACTS_VERSION, type DataFacts } from '../enrich/inspect-data-file.ts';
import { factsKey, INSPECTORS } from '../enrich/inspectors.ts';
import { measure } from '../enrich/enrich-sources.ts';
import { listGdalLayers } from '../enrich/inspect-gdal.ts';
import type { StorageLocationRecord } from '../../schemas/records/storage-location-record.ts';
import type { WholeReader } from '../enrich/remote-whole.ts';
import { MULTI_FILE } from '../enrich/inspectors.ts';
import type { RemoteLocation } from './add-remote.ts';
import { slugOf, uniqueSlug } from './slugs.ts';

/** Tables of text that `--convert` turns into GeoParquet (longitude/latitude or WKT columns). */
const CSV_EXTENSIONS = new Set(['.csv', '.tsv']);

/** Whether a PATH given to `add` is in object storage (read by add-remote.ts, loaded only then: the S3 SDK is large). */
function isRemotePath(path: string): boolean {
  return /^(s3|https?):\/\//i.test(path);
}

/** The `base_url` of a storage location that is the data folder. */
const STORAGE_PLACEHOLDER = '{storage_base_url}';

/** What a description still to be written says; the build counts these as undescribed. */
export const TODO_DESCRIPTION = 'TODO: describe this column';

/** The format each kind of data file is, by extension (a `.gdb` is a folder). */
const FORMAT_BY_EXTENSION: Record<string, string> = {
  '.parquet': 'geoparquet', '.geoparquet': 'geoparquet', '.geojson': 'geojson', '.shp': 'shapefile',
  '.gpkg': 'geopackage', '.gdb': 'file_geodatabase', '.pmtiles': 'pmtiles',
};

/** The format records `add` writes when `formats.yaml` lacks a format of the type. */
const FORMAT_RECORDS: Record<string, { slug: string; name: string; mime_type: string; description: string }> = {
  geoparquet: { slug: 'geoparquet', name: 'GeoParquet 1.1', mime_type: 'application/vnd.apache.parquet', description: 'Columnar Parquet with GeoParquet metadata, for analysis in DuckDB, GeoPandas, GDAL or QGIS.' },
  geojson: { slug: 'geojson', name: 'GeoJSON', mime_type: 'application/geo+json', description: 'RFC 7946 FeatureCollection, readable by almost every web map and GIS.' },
  shapefile: { slug: 'shapefile', name: 'ESRI Shapefile', mime_type: 'application/x-esri-shape', description: 'A .shp with its sidecars; download them together through the source\'s download_zip link.' },
  geopackage: { slug: 'geopackage', name: 'GeoPackage', mime_type: 'application/geopackage+sqlite3', description: 'OGC GeoPackage: one SQLite file that can hold several layers.' },
  file_geodatabase: { slug: 'file-geodatabase', name: 'Esri File Geodatabase', mime_type: 'application/x-filegdb', description: 'An Esri .gdb folder of one or more layers, downloaded as one archive.' },
  pmtiles: { slug: 'pmtiles', name: 'PMTiles v3', mime_type: 'application/vnd.pmtiles', description: 'Vector tiles in one archive that a web map reads from static hosting with range requests; geoshelf makes one beside each GeoParquet file.' },
};

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

/** What `add` did: the record files it wrote (relative to the catalog folder), and the data it left alone and why. */
export interface AddResult {
  written: string[];
  skipped: { path: string; reason: string }[];
}

/** Why `add` cannot run at all, in one line. */
export class AddError extends Error {
  override name = 'AddError';
}

/** One data file to describe. */
interface DataFile {
  /** Path inside the data folder or its storage location, `/`-separated: the source's `path`. */
  path: string;
  /** The storage location of a file in object storage; none for the data folder. */
  remote?: RemoteLocation;
  /** How messages name it: its path in the data folder, its `s3://` key or its URL. */
  label: string;
  formatType: string;
  modified: Date;
  /** With `--convert`, the GeoParquet file made of each layer of a GeoPackage or File Geodatabase. */
  layerFiles?: Map<string, DataFile>;
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
  const duckdb = async () => (instance ??= await (await import('@duckdb/node-api')).DuckDBInstance.create(':memory:', { threads: '2' }));
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
 * With `--convert`: a GeoParquet file beside each file that is not GeoParquet, made by `geoshelf convert`
 * (generator/convert/), and the list of files to describe with them. A conversion already there (a GeoParquet file
 * of the name it would get) is taken as it is. A file that cannot be converted keeps its own record, with a note.
 */
async function convertAll(files: DataFile[], dataDir: string, result: AddResult, log: (line: string) => void): Promise<DataFile[]> {
  const { convertFile } = await import('../convert/convert-file.ts');
  const { listGdalLayers } = await import('../enrich/inspect-gdal.ts');
  const paths = new Set(files.map((file) => file.path));
  const out: DataFile[] = [];
  const convert = async (file: DataFile, output: string, layer?: string): Promise<DataFile | undefined> => {
    if (paths.has(output)) return undefined;
    try {
      const target = join(dataDir, output);
      if (!(await stat(target).then(() => true, () => false))) {
        await convertFile({ input: join(dataDir, file.path), output: target, ...(layer === undefined ? {} : { layer }) });
        log(`${file.path}${layer === undefined ? '' : ` (layer ${layer})`}: converted to ${output}`);
      }
      paths.add(output);
      return { path: output, label: output, formatType: 'geoparquet', modified: file.modified };
    } catch (error) {
      result.skipped.push({ path: file.path, reason: `not converted: ${(error as Error).message}` });
      return undefined;
    }
  };
  const stem = (file: DataFile) => file.path.slice(0, file.path.length - extname(file.path).length);
  for (const file of files) {
    if (file.remote) {
      out.push(file);
      if (file.formatType !== 'geoparquet' && file.formatType !== 'pmtiles') result.skipped.push({ path: file.label, reason: 'not converted, as it is in object storage: convert a copy with geoshelf convert, put it beside, and add that' });
      continue;
    }
    if (file.formatType === 'csv' || (file.formatType === 'geoparquet' && !(await hasGeoMetadata(join(dataDir, file.path))))) {
      // The CSV or plain Parquet file itself is no format of the catalog: its conversion stands for it.
      const converted = await convert(file, `${stem(file)}${file.formatType === 'csv' ? '' : '.geo'}.parquet`);
      if (converted) out.push(converted);
      else if (file.formatType !== 'csv') out.push(file);
      continue;
    }
    out.push(file);
    if (file.formatType === 'geojson' || file.formatType === 'shapefile') {
      const converted = await convert(file, `${stem(file)}.parquet`);
      if (converted) out.push(converted);
    } else if (file.formatType === 'geopackage' || file.formatType === 'file_geodatabase') {
      const layers = file.formatType === 'geopackage' ? describeGeoPackage(join(dataDir, file.path)).map(({ layer }) => layer!) : await listGdalLayers(join(dataDir, file.path));
      file.layerFiles = new Map();
      for (const layer of layers) {
        const converted = await convert(file, `${stem(file)}-${slugOf(layer)}.parquet`, layer);
        if (converted) file.layerFiles.set(layer, converted);
      }
    }
  }
  return out;
}

/** Whether a Parquet file carries GeoParquet's `geo` metadata. */
async function hasGeoMetadata(path: string): Promise<boolean> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const rows = (await connection.runAndReadAll(`SELECT 1 FROM parquet_kv_metadata('${path.replaceAll("'", "''")}') WHERE decode(key) = 'geo'`)).getRowObjects();
    return rows.length > 0;
  } catch {
    return false;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * The data files of each new dataset: the formats of one data set (the same name in the same folder:
 * `roads.parquet`, `roads.geojson`, `roads.shp`) together; a GeoPackage or File Geodatabase, which holds layers
 * of its own, alone.
 */
function groupByStem(files: DataFile[]): DataFile[][] {
  const groups = new Map<string, DataFile[]>();
  for (const file of files) {
    const multiLayer = file.formatType === 'geopackage' || file.formatType === 'file_geodatabase';
    const where = file.remote ? `${file.remote.slug}:` : '';
    const key = multiLayer ? `${where}${file.path}` : `${where}${dirname(file.path)}/${stemOf(file.path)}`.toLowerCase();
    groups.set(key, [...(groups.get(key) ?? []), file]);
  }
  // GeoParquet first: the format the data dictionary and the queries read.
  const rank = (file: DataFile) => Object.keys(FORMAT_RECORDS).indexOf(file.formatType);
  return [...groups.values()].map((group) => group.sort((a, b) => rank(a) - rank(b)));
}

/** The data files under each path: every file of a folder that has a known extension (sidecars are not files of their own). */
async function findDataFiles(dataDir: string, paths: string[], result: AddResult, convert: boolean): Promise<DataFile[]> {
  const files = new Map<string, DataFile>();
  const visit = async (path: string) => {
    const info = await stat(path).catch(() => undefined);
    const inside = relative(dataDir, path).split(sep).join('/');
    if (!info) throw new AddError(`${path} does not exist`);
    if (inside.startsWith('..') || inside === '' && !info.isDirectory()) throw new AddError(`${path} is not inside the data folder ${dataDir} (GEOSHELF_DATA_DIR): sources name files by their path in it`);
    const formatType = FORMAT_BY_EXTENSION[extname(path).toLowerCase()] ?? (convert && CSV_EXTENSIONS.has(extname(path).toLowerCase()) ? 'csv' : undefined);
    if (formatType && (info.isFile() || formatType === 'file_geodatabase')) {
      files.set(inside, { path: inside, label: inside, formatType, modified: info.mtime });
      return;
    }
    if (!info.isDirectory()) {
      if (CSV_EXTENSIONS.has(extname(path).toLowerCase())) result.skipped.push({ path: inside, reason: 'a CSV is cataloged as the GeoParquet file made of it: add --convert' });
      else if (!isSidecar(path)) result.skipped.push({ path: inside, reason: `geoshelf does not catalog ${extname(path) || 'extension-less'} files` });
      return;
    }
    for (const entry of (await readdir(path)).sort()) if (!entry.startsWith('.')) await visit(join(path, entry));
  };
  for (const path of paths) await visit(await realpath(path).catch(() => path));
  return withoutTwins(files, result);
}

/** The files, without the archive beside a GeoParquet file: its twin, which the build makes and lists itself. */
function withoutTwins(files: Map<string, DataFile>, result: AddResult): DataFile[] {
  for (const file of files.values()) {
    if (file.formatType === 'pmtiles' && files.get(file.path.replace(/\.pmtiles$/i, '.parquet'))?.formatType === 'geoparquet') {
      files.delete(file.path);
      result.skipped.push({ path: file.label, reason: 'it is the PMTiles twin of the GeoParquet file beside it, which the build makes and lists' });
    }
  }
  return [...files.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * The data files under remote PATHs (`add-remote.ts`), each with its storage location, and the locations to add
 * to `storage-locations.yaml`. Sidecars are part of their shapefile; other objects are skipped with the reason.
 */
async function findRemoteFiles(paths: string[], records: StorageLocationRecord[], env: NodeJS.ProcessEnv, result: AddResult): Promise<{ files: DataFile[]; added: StorageLocationRecord[] }> {
  const { listRemoteEntries, locateRemotePath } = await import('./add-remote.ts');
  const { RemoteReadError } = await import('../../runtime/remote-object.ts');
  const known = [...records];
  const taken = new Set(records.map((record) => record.slug));
  const added: StorageLocationRecord[] = [];
  const files: DataFile[] = [];
  for (const path of paths) {
    let entries;
    let location: RemoteLocation;
    try {
      let key: string;
      ({ location, key } = locateRemotePath(path, known, taken, env));
      entries = await listRemoteEntries(location, key, path, env);
    } catch (error) {
      if (error instanceof RemoteReadError) throw new AddError(error.message);
      throw error;
    }
    if (location.added) {
      known.push(location.added);
      added.push(location.added);
    }
    const found = new Map<string, DataFile>();
    for (const entry of entries) {
      const extension = extname(entry.path).toLowerCase();
      const label = location.model.backend_type === 's3' ? `s3://${location.model.config!.bucket}/${entry.path}` : `${location.model.config!.base_url}/${entry.path}`;
      const formatType = FORMAT_BY_EXTENSION[extension];
      if (formatType) found.set(entry.path, { path: entry.path, label, formatType, modified: entry.modified, remote: location });
      else if (CSV_EXTENSIONS.has(extension)) result.skipped.push({ path: label, reason: 'a CSV is cataloged as the GeoParquet file made of it: convert a copy with geoshelf convert, put it beside, and add that' });
      else if (!isSidecar(entry.path)) result.skipped.push({ path: label, reason: `geoshelf does not catalog ${extension || 'extension-less'} files` });
    }
    files.push(...withoutTwins(found, result));
  }
  return { files, added };
}

/** A shapefile's sidecar or a twin-to-be's neighbour: part of another data file, not one of its own. */
function isSidecar(path: string): boolean {
  return ['.shx', '.dbf', '.prj', '.cpg', '.sbn', '.sbx', '.qix', '.xml'].includes(extname(path).toLowerCase());
}

interface ReadContext {
  cache: DataCache<DataFacts>;
  /** The reader of files in object storage, opened on first use. */
  remoteReader: () => Promise<WholeReader>;
  env: NodeJS.ProcessEnv;
  /** Paths whose hashes this run used, added to: kept in the cache's memo with those it had. */
  usedPaths: Set<string>;
  dataDir: string;
  duckdb: () => Promise<DuckDBInstance>;
  scratchDir: string;
}

/**
 * The layers of a data file and each one's columns. A file the build inspects is inspected here the same way, and
 * its facts kept in the build's cache, so the build that follows reads it no more. A GeoPackage's layers and
 * columns come from its own tables (`gpkg_contents`), a PMTiles archive has none.
 */
async function describeLayers(path: string, formatType: string, context: ReadContext): Promise<{ layer: string | null; columns: string[] }[]> {
  if (formatType === 'pmtiles') return [{ layer: null, columns: [] }];
  if (formatType === 'geopackage') return describeGeoPackage(path);
  const { sha256 } = await measure({ path, relative: relative(context.dataDir, path).split(sep).join('/'), formatType }, context.cache, context.usedPaths, context.dataDir);
  return inspectLayers(path, formatType, sha256, context);
}

/**
 * The layers of a file in object storage and each one's columns, read as the build reads it, into the build's
 * caches: a GeoPackage's from its tables, a File Geodatabase's layers each inspected, in one download.
 */
async function describeRemoteLayers(file: DataFile, context: ReadContext): Promise<Layer[]> {
  if (file.formatType === 'pmtiles') return [{ layer: null, columns: [] }];
  const { listRemoteParts, openRemoteObject } = await import('../../runtime/remote-object.ts');
  const location = file.remote!.model;
  const listed = MULTI_FILE.has(file.formatType)
    ? await listRemoteParts(location, file.path, file.formatType, context.env)
    : [{ name: basename(file.path), object: openRemoteObject(location, file.path, context.env) }];
  const parts = await Promise.all(listed.map(async ({ name, object }) => ({ name, object, version: await object.head() })));
  const reader = await context.remoteReader();
  if (file.formatType === 'geopackage') return reader.withCopy(parts, file.formatType, async (path) => describeGeoPackage(path));
  if (file.formatType === 'file_geodatabase') return reader.withCopy(parts, file.formatType, (path, sha256) => inspectLayers(path, file.formatType, sha256, context));
  const { facts } = await reader.read(parts, file.formatType, null);
  return [{ layer: null, columns: columnsOf(facts!) }];
}

/** A layer of a data file, and the columns to describe (not its geometry and bbox). */
interface Layer {
  layer: string | null;
  columns: string[];
}

/** Each layer's columns, from the cache of facts by the file's SHA-256, or inspected and kept there. */
async function inspectLayers(path: string, formatType: string, sha256: string, context: ReadContext): Promise<Layer[]> {
  const layers = formatType === 'file_geodatabase' ? await listGdalLayers(path) : [null];
  const inspect = INSPECTORS[formatType]!;
  const described: Layer[] = [];
  for (const layer of layers) {
    const key = factsKey(formatType, sha256, layer);
    let facts = context.cache.get(key);
    if (!facts) {
      facts = await inspect(await context.duckdb(), path, { scratchDir: context.scratchDir, layer });
      context.cache.set(key, facts);
    }
    described.push({ layer, columns: columnsOf(facts) });
  }
  return described;
}

function columnsOf(facts: DataFacts): string[] {
  return facts.columns.map((column) => column.name).filter((name) => name !== facts.geometry?.column && name !== 'bbox');
}

/** A GeoPackage's feature layers and their attribute columns, from its tables. */
function describeGeoPackage(path: string): { layer: string | null; columns: string[] }[] {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    const layers = database.prepare("SELECT table_name AS name FROM gpkg_contents WHERE data_type = 'features' ORDER BY table_name").all() as { name: string }[];
    const geometries = new Set((database.prepare('SELECT table_name || \'.\' || column_name AS name FROM gpkg_geometry_columns').all() as { name: string }[]).map((row) => row.name));
    return layers.map(({ name }) => ({
      layer: name,
      columns: (database.prepare(`PRAGMA table_info("${name.replaceAll('"', '""')}")`).all() as { name: string; pk: number }[])
        .filter((column) => column.pk === 0 && !geometries.has(`${name}.${column.name}`)).map((column) => column.name),
    }));
  } catch (error) {
    throw new Error(`it is not a GeoPackage (${(error as Error).message})`);
  } finally {
    database.close();
  }
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

/** The slug of a format of each type the new files need, adding to `formats.yaml` those it lacks (and PMTiles, for the twins). */
async function ensureFormats(catalogDir: string, formats: { slug: string; format_type: string }[], files: DataFile[], result: AddResult): Promise<Map<string, string>> {
  const slugs = new Map(formats.map((format) => [format.format_type, format.slug]));
  const needed = new Set(files.map((file) => file.formatType));
  // A GeoParquet file gets a PMTiles twin only when the catalog has a format of that type.
  if (needed.has('geoparquet')) needed.add('pmtiles');
  const missing = [...needed].filter((type) => !slugs.has(type)).map((type) => ({ format_type: type, ...FORMAT_RECORDS[type]! }));
  if (missing.length === 0) return slugs;
  for (const format of missing) slugs.set(format.format_type, format.slug);
  await appendRecords(catalogDir, 'formats.yaml', missing.map(({ slug, format_type, name, description, mime_type }) => ({ slug, format_type, name, description, mime_type })), result);
  return slugs;
}

/** Adds entries to a list file (`formats.yaml`, `storage-locations.yaml`): the steward's own stay as they wrote them, the new ones after them. */
async function appendRecords(catalogDir: string, file: string, entries: object[], result: AddResult): Promise<void> {
  const path = join(catalogDir, file);
  if (!(await stat(path).then(() => true, () => false))) return writeRecord(catalogDir, file, entries, result);
  await appendFile(path, `\n${stringify(entries, { lineWidth: 0 })}`);
  if (!result.written.includes(file)) result.written.push(file);
}

/** Writes a new record file; one that exists is left as it is. */
async function writeRecord(catalogDir: string, path: string, value: unknown, result: AddResult): Promise<void> {
  const target = join(catalogDir, path);
  await mkdir(join(target, '..'), { recursive: true });
  try {
    await writeFile(target, stringify(value, { lineWidth: 0, aliasDuplicateObjects: false }), { flag: 'wx' });
    result.written.push(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    result.skipped.push({ path, reason: 'the record exists; it is left as it is' });
  }
}

/** Each column with the placeholder description, keyed by the data's column names: no prototype, so any name is only itself. */
function todoColumns(columns: string[]): Record<string, string> {
  const described = Object.create(null) as Record<string, string>;
  for (const column of columns) described[column] = TODO_DESCRIPTION;
  return described;
}

/** A file's name without its extension, nor the `.geo` of `x.geo.parquet` (a conversion of `x.parquet`). */
function stemOf(path: string): string {
  return basename(path, extname(path)).replace(/\.geo$/i, '');
}



/** A name from a file name: `roads_2024` → `Roads 2024`. */
function titleOf(name: string): string {
  const words = name.replace(/[_-]+/g, ' ').replace(/\s+/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : name;
}
