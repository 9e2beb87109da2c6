import type { DuckDBInstance } from '@duckdb/node-api';
import type { CatalogModel, FileModel, SourceModel } from '../../core/model.ts';
import type { ColumnSchema } from '../../schemas/column.ts';
import type { FileMetadata } from '../../schemas/file-metadata.ts';
import type { BuildIssue } from '../errors.ts';
import type { RemoteDataFile } from '../model/build-model.ts';
import { DataCache } from './data-cache.ts';
import { hashColumns } from './column-stats.ts';
import { FOOTER_FACTS_VERSION, inspectRemoteGeoParquet, type FooterFacts } from './inspect-remote.ts';

/** Remote objects asked at once. */
const REQUESTS_AT_ONCE = 16;

/** What reading the remote sources did. */
export interface RemoteEnrichment {
  issues: BuildIssue[];
  warnings: string[];
  /** Objects whose footer was read in this run (cache misses), and the bytes that took against their sizes. */
  read: { objects: number; bytes: number; ofBytes: number };
}

/**
 * Fills the metadata of sources stored in object storage from their footers, without downloading them: for a
 * GeoParquet file the row count, columns, null counts, numeric ranges and the extent from its bbox covering
 * (`inspect-remote.ts`); for any other format its size only. Every object is asked for its size and version
 * (one HEAD) on every build; its footer is read again only when the ETag, size or last-modified changed. An
 * object that cannot be reached, or is not Parquet, is a build error naming the source, its location and why.
 * Measures that need every row (distinct values, examples, validity by GEOS, the PMTiles twin) are not computed:
 * README "Data in object storage".
 */
export async function enrichRemoteSources(model: CatalogModel, remoteFiles: RemoteDataFile[], options: { cacheDir: string; duckdb: () => Promise<DuckDBInstance>; log: (line: string) => void; env?: NodeJS.ProcessEnv }): Promise<RemoteEnrichment> {
  const result: RemoteEnrichment = { issues: [], warnings: [], read: { objects: 0, bytes: 0, ofBytes: 0 } };
  if (remoteFiles.length === 0) return result;
  // Loaded only when a catalog has remote sources: the S3 SDK is a large module.
  const { openRemoteObject, RemoteReadError } = await import('../../runtime/remote-object.ts');
  const cache = await DataCache.open<FooterFacts>(options.cacheDir, 'remote-facts.json', FOOTER_FACTS_VERSION);
  const sources = sourcesById(model);
  const usedKeys = new Set<string>();
  // Warnings by source, so they print in the records' order whatever order the requests finish in.
  const warnings: string[][] = remoteFiles.map(() => []);
  const readOne = async (remote: RemoteDataFile, warn: (line: string) => void) => {
    const found = sources.get(remote.sourceId);
    if (!found) return;
    try {
      const object = openRemoteObject(remote.location, remote.path, options.env);
      const version = await object.head();
      if (found.formatType !== 'geoparquet') {
        if (found.source.metadata) found.source.metadata.size_bytes = version.size;
        warn(`${remote.source}: ${object.where} is ${found.formatType}, which is not inspected in object storage yet; its metadata holds its size only`);
        return;
      }
      const key = JSON.stringify([object.where, version.etag, version.size, version.lastModified]);
      usedKeys.add(key);
      let facts = cache.get(key);
      if (!facts) {
        facts = await inspectRemoteGeoParquet(await options.duckdb(), object, options.cacheDir, version);
        cache.set(key, facts);
        result.read.objects++;
        result.read.bytes += facts.bytesRead;
        result.read.ofBytes += version.size;
      }
      for (const warning of facts.warnings) warn(`${object.where}: ${warning}`);
      if (found.source.metadata) applyFooterFacts(found.source.metadata, facts, found.file);
    } catch (error) {
      if (!(error instanceof RemoteReadError)) throw error;
      const line = remote.line();
      result.issues.push({ code: 'UnreadableDataFile', source: remote.source, ...(line ? { line } : {}), path: 'path', message: `"${remote.path}" in storage location "${remote.location.slug}" cannot be read: ${error.message}` });
    }
  };
  // Every build asks each object for its version: at thousands of remote sources, that many requests at once.
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(REQUESTS_AT_ONCE, remoteFiles.length) }, async () => {
    while (next < remoteFiles.length) {
      const index = next++;
      await readOne(remoteFiles[index]!, (line) => warnings[index]!.push(line));
    }
  }));
  result.warnings.push(...warnings.flat());
  if (result.issues.length === 0) await cache.save(usedKeys, new Set());
  const { objects, bytes, ofBytes } = result.read;
  if (objects > 0) options.log(`read the footers of ${objects} remote GeoParquet files: ${formatBytes(bytes)} of ${formatBytes(ofBytes)} (${((bytes / Math.max(1, ofBytes)) * 100).toFixed(2)}%)`);
  return result;
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
