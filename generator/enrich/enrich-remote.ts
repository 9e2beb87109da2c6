import { basename, join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import type { CatalogModel, FileModel, SourceModel } from '../../core/model.ts';
import type { ColumnSchema } from '../../schemas/column.ts';
import type { FileMetadata } from '../../schemas/file-metadata.ts';
import type { BuildIssue } from '../errors.ts';
import type { RemoteDataFile } from '../model/build-model.ts';
import type { RemoteObject, RemoteVersion } from '../../runtime/remote-object.ts';
import { PmTilesFormatError } from '../../runtime/pmtiles-header.ts';
import { readPmTilesInfoFrom, type PmTilesInfo } from '../../runtime/pmtiles-info.ts';
import { removeSources } from '../tiles/twins.ts';
import { stampOf, twinStamp } from '../tiles/pmtiles-twin.ts';
import { applyFacts, applyPmTilesInfo, storedFacts } from './apply-facts.ts';
import { DataCache } from './data-cache.ts';
import { hashColumns } from './column-stats.ts';
import type { DataFacts } from './inspect-data-file.ts';
import { FOOTER_FACTS_VERSION, inspectRemoteGeoParquet, type FooterFacts } from './inspect-remote.ts';
import { MULTI_FILE } from './inspectors.ts';
import type { ReadPart } from './remote-whole.ts';
import { createProgress, type ProgressReporter } from './progress.ts';

/** Remote objects asked at once (a HEAD, or the ranges of a footer or a PMTiles header). */
const REQUESTS_AT_ONCE = 16;
/** Missing twins named in the build's warning; the rest are counted. */
const TWINS_NAMED = 5;

/** What reading the remote sources needs. */
export interface RemoteEnrichOptions {
  cacheDir: string;
  /** `full` reads each file once per version; `footer` reads GeoParquet footers and PMTiles headers only (GEOSHELF_REMOTE_SCAN). */
  scan: 'full' | 'footer';
  duckdb: () => Promise<DuckDBInstance>;
  /** The build's cache of data-file facts by content hash, shared with the local files, and the keys this build used. */
  facts: { cache: DataCache<DataFacts>; used: Set<string> };
  log: (line: string) => void;
  progress?: ProgressReporter;
  env?: NodeJS.ProcessEnv;
}

/** What reading the remote sources did. */
export interface RemoteEnrichment {
  issues: BuildIssue[];
  warnings: string[];
  /** Objects read in this run (cache misses), and the bytes that took against their sizes. */
  read: { objects: number; bytes: number; ofBytes: number };
}



/**
 * Fills the metadata of sources stored in object storage. Every object is asked for its size and version (one
 * HEAD) on every build; its bytes are read again only when the ETag, size or last-modified changed.
 * - `full` (the default): each file is read once, whole, into a scratch file that is deleted once measured, and
 *   measured as a local file is (generator/enrich/inspectors.ts): the metadata is the same as the local build's.
 * - `footer`: a GeoParquet file's footer gives the row count, columns, null counts, numeric ranges and the extent
 *   from its bbox covering (`inspect-remote.ts`), with no checksum; another format gives its size only.
 * A PMTiles archive's header and metadata are read with two ranges in both. A twin the model expects beside a
 * remote GeoParquet file (`RemoteDataFile.twinOf`) is kept only when the archive there is current (its stamp
 * names the GeoParquet file's SHA-256; in `footer` mode any twin geoshelf made is taken unchecked); the build
 * does not write to the store. An object that cannot be reached, or cannot be read as its format, is a build
 * error naming the source, its location and why.
 */
export async function enrichRemoteSources(model: CatalogModel, remoteFiles: RemoteDataFile[], options: RemoteEnrichOptions): Promise<RemoteEnrichment> {
  const result: RemoteEnrichment = { issues: [], warnings: [], read: { objects: 0, bytes: 0, ofBytes: 0 } };
  if (remoteFiles.length === 0) return result;
  // Loaded only when a catalog has remote sources: the S3 SDK is a large module.
  const { listRemoteParts, openRemoteObject, RemoteReadError } = await import('../../runtime/remote-object.ts');
  const { openWholeReader } = await import('./remote-whole.ts');
  const footers = await DataCache.open<FooterFacts>(options.cacheDir, 'remote-facts.json', FOOTER_FACTS_VERSION);
  const whole = await openWholeReader({ cacheDir: options.cacheDir, duckdb: options.duckdb, facts: options.facts });
  const scratchDir = join(options.cacheDir, 'remote-scratch');
  const sources = sourcesById(model);
  const usedFooters = new Set<string>();
  // The SHA-256 each GeoParquet file was read with, by path and location, for the stamps of their twins.
  const hashes = new Map<string, string>();
  const dataFiles = remoteFiles.filter((remote) => remote.twinOf === undefined);
  const twins = remoteFiles.filter((remote) => remote.twinOf !== undefined);
  const advance = createProgress('reading files in object storage', remoteFiles.length, options.progress);
  let done = 0;

  const readWhole = (parts: ReadPart[], formatType: string, file: FileModel) => whole.read(parts, formatType, file.layer_name);

  const readOne = async (remote: RemoteDataFile, warn: (line: string) => void) => {
    const found = sources.get(remote.sourceId);
    if (!found) return;
    const metadata = found.source.metadata;
    try {
      if (MULTI_FILE.has(found.formatType)) {
        const listed = await listRemoteParts(remote.location, remote.path, found.formatType, options.env);
        const parts = await Promise.all(listed.map(async ({ name, object }) => ({ name, object, version: await object.head() })));
        if (metadata) metadata.size_bytes = parts.reduce((sum, part) => sum + part.version.size, 0);
        if (options.scan === 'footer') {
          warn(`${remote.source}: ${parts[0]!.object.where} is ${found.formatType}, which a footer-only build (--shallow) does not read; its metadata holds its size only`);
          return;
        }
        const { sha256, facts } = await readWhole(parts, found.formatType, found.file);
        if (facts && metadata) applyFacts(metadata, facts, found.file);
        found.source.stored = storedFacts(sha256, facts);
        return;
      }
      const object = openRemoteObject(remote.location, remote.path, options.env);
      const version = await object.head();
      if (metadata) metadata.size_bytes = version.size;
      if (found.formatType === 'pmtiles') {
        const info = await readPmTilesRanges(object, version, RemoteReadError);
        if (metadata) applyPmTilesInfo(metadata, info);
      }
      if (options.scan === 'full') {
        const { sha256, facts } = await readWhole([{ name: basename(remote.path), object, version }], found.formatType, found.file);
        hashes.set(`${remote.location.id}:${remote.path}`, sha256);
        if (facts && metadata) applyFacts(metadata, facts, found.file);
        found.source.stored = storedFacts(sha256, facts);
        return;
      }
      if (found.formatType === 'geoparquet') {
        const facts = await readFooter(object, version);
        for (const warning of facts.warnings) warn(`${object.where}: ${warning}`);
        if (metadata) applyFooterFacts(metadata, facts, found.file);
      } else if (found.formatType !== 'pmtiles') {
        warn(`${remote.source}: ${object.where} is ${found.formatType}, which a footer-only build (--shallow) does not read; its metadata holds its size only`);
      }
    } catch (error) {
      if (!(error instanceof RemoteReadError)) throw error;
      const line = remote.line();
      result.issues.push({ code: 'UnreadableDataFile', source: remote.source, ...(line ? { line } : {}), path: remote.field, message: `"${remote.path}" in storage location "${remote.location.slug}" cannot be read: ${error.message}` });
    }
  };

  const readFooter = async (object: RemoteObject, version: RemoteVersion): Promise<FooterFacts> => {
    const key = JSON.stringify([object.where, version.etag, version.size, version.lastModified]);
    usedFooters.add(key);
    let facts = footers.get(key);
    if (!facts) {
      facts = await inspectRemoteGeoParquet(await options.duckdb(), object, scratchDir, version);
      footers.set(key, facts);
      result.read.objects++;
      result.read.bytes += facts.bytesRead;
      result.read.ofBytes += version.size;
    }
    return facts;
  };

  /** Why the twin in the store cannot be listed, or null when it is current and its source is filled. */
  const checkTwin = async (twin: RemoteDataFile): Promise<string | null> => {
    const found = sources.get(twin.sourceId);
    if (!found) return null;
    const expected = hashes.get(`${twin.location.id}:${twin.twinOf}`);
    // The GeoParquet file could not be read (a build error already) or was read footer-only.
    if (options.scan === 'full' && expected === undefined) return 'its GeoParquet file was not read';
    const object = openRemoteObject(twin.location, twin.path, options.env);
    let version: RemoteVersion;
    let info: PmTilesInfo;
    try {
      version = await object.head();
      info = await readPmTilesRanges(object, version, RemoteReadError);
    } catch (error) {
      if (!(error instanceof RemoteReadError)) throw error;
      return `${object.where}: ${error.message}`;
    }
    const stamp = stampOf(info.metadata);
    if (stamp === null) return `${object.where} is not a twin geoshelf made`;
    if (expected !== undefined && stamp !== twinStamp(expected)) return `${object.where} was made of other data or by another tiler`;
    if (found.source.metadata) {
      found.source.metadata.size_bytes = version.size;
      applyPmTilesInfo(found.source.metadata, info);
    }
    if (options.scan === 'full') found.source.stored = storedFacts((await readWhole([{ name: basename(twin.path), object, version }], 'pmtiles', found.file)).sha256);
    return null;
  };

  // Warnings by source, so they print in the records' order whatever order the requests finish in.
  const warnings: string[][] = dataFiles.map(() => []);
  await forEachAtOnce(dataFiles, REQUESTS_AT_ONCE, async (remote, index) => {
    await readOne(remote, (line) => warnings[index]!.push(line));
    advance(++done);
  });
  result.warnings.push(...warnings.flat());
  const stale: { twin: RemoteDataFile; reason: string }[] = [];
  if (result.issues.length === 0) {
    await forEachAtOnce(twins, REQUESTS_AT_ONCE, async (twin) => {
      const reason = await checkTwin(twin);
      if (reason !== null) stale.push({ twin, reason });
      advance(++done);
    });
  }
  if (stale.length > 0) {
    removeSources(model, new Set(stale.map(({ twin }) => twin.sourceId)));
    stale.sort((a, b) => (a.twin.path < b.twin.path ? -1 : 1));
    const named = stale.slice(0, TWINS_NAMED).map(({ reason }) => reason).join('; ');
    const more = stale.length > TWINS_NAMED ? `; and ${stale.length - TWINS_NAMED} more` : '';
    result.warnings.push(`${stale.length} GeoParquet file${stale.length === 1 ? '' : 's'} in object storage ${stale.length === 1 ? 'has' : 'have'} no current PMTiles twin beside ${stale.length === 1 ? 'it' : 'them'}, so the catalog lists none (a build over the data folder makes twins, and \`npm run publish -- --data\` puts them beside their files): ${named}${more}`);
  }
  // What was read is kept even when another source failed, so the next build reads only what it has not; entries
  // of sources no longer in the catalog go once a build succeeds.
  const failed = result.issues.length > 0;
  await footers.save(failed ? new Set([...usedFooters, ...footers.keys()]) : usedFooters, new Set());
  await whole.save(failed);
  result.read.objects += whole.downloaded.objects;
  result.read.bytes += whole.downloaded.bytes;
  result.read.ofBytes += whole.downloaded.bytes;
  const { objects, bytes, ofBytes } = result.read;
  if (objects > 0) {
    options.log(options.scan === 'full'
      ? `read ${objects} files in object storage whole (${formatBytes(bytes)}); the others were unchanged`
      : `read the footers of ${objects} remote GeoParquet files: ${formatBytes(bytes)} of ${formatBytes(ofBytes)} (${((bytes / Math.max(1, ofBytes)) * 100).toFixed(2)}%)`);
  }
  return result;
}

/** A PMTiles archive's header and metadata in two range requests; a broken archive is a `RemoteReadError`. */
async function readPmTilesRanges(object: RemoteObject, version: RemoteVersion, ReadError: new (message: string) => Error): Promise<PmTilesInfo> {
  try {
    return await readPmTilesInfoFrom(version.size, object.read);
  } catch (error) {
    if (error instanceof PmTilesFormatError) throw new ReadError(`it is not a readable PMTiles archive: ${error.reason}`);
    throw error;
  }
}

/** Runs `work` on every item, `atOnce` at a time. */
async function forEachAtOnce<T>(items: T[], atOnce: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index]!, index);
    }
  }));
}


/** Every source with its file and the type of its format. */
export function sourcesById(model: CatalogModel): Map<number, { source: SourceModel; file: FileModel; formatType: string }> {
  const formatTypes = new Map(model.formats.map((format) => [format.id, format.format_type]));
  const sources = new Map<number, { source: SourceModel; file: FileModel; formatType: string }>();
  for (const collection of model.collections) {
    for (const dataset of collection.datasets) {
      for (const file of dataset.files) {
        for (const link of file.formats) {
          for (const source of link.sources) sources.set(source.id, { source, file, formatType: formatTypes.get(link.format_id) ?? '' });
        }
      }
    }
  }
  return sources;
}

/** What a footer tells, in the contract's fields; what needs a scan stays null. */
function applyFooterFacts(metadata: FileMetadata, facts: FooterFacts, file: FileModel): void {
  metadata.size_bytes = facts.version.size;
  metadata.feature_count = facts.rows;
  metadata.bounds = facts.geometry?.bounds ?? null;
  metadata.geometry_type = facts.geometry && facts.geometry.types.length > 0 ? facts.geometry.types.join(', ') : null;
  // Validity and empty geometries need every geometry: unknown, not zero.
  metadata.invalid_geometry_count = null;
  metadata.invalid_geometry_reasons = null;
  metadata.empty_geometry_count = null;
  metadata.quality_check_passed = null;
  metadata.columns_hash = hashColumns(facts.columns.map((column) => ({ name: column.name, type: column.duckdbType })));
  metadata.columns = facts.columns.map((column): ColumnSchema => ({
    name: column.name,
    type: column.type,
    // Unknown null counts are reported as nullable: the safe reading for a column the statistics do not cover.
    nullable: column.nulls === null || column.nulls > 0,
    description: file.column_descriptions[column.name] ?? null,
    num_null_values: column.nulls,
    num_unique_values: null,
    example_values: null,
    min: column.min,
    max: column.max,
    length: null,
    possible_values: null,
  }));
}

function formatBytes(bytes: number): string {
  return bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`;
}
