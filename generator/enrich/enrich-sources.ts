import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { CatalogModel, FileModel, SourceModel } from '../../core/model.ts';
import type { ColumnSchema } from '../../schemas/column.ts';
import type { BuildIssue } from '../errors.ts';
import type { FileOrigin, LocalDataFile } from '../model/build-model.ts';
import { DataCache } from './data-cache.ts';
import { logicalType, PARQUET_FACTS_VERSION, readParquetFacts, type ParquetFacts } from './read-parquet-facts.ts';

/** Options of the enrichment stage. */
export interface EnrichOptions {
  dataDir: string;
  cacheDir: string;
  log: (line: string) => void;
}

/** What enrichment did, besides filling the model. */
export interface EnrichResult {
  issues: BuildIssue[];
  warnings: string[];
  /** Data files read in this run (cache misses). */
  filesRead: number;
}

/**
 * Fills source metadata from the data files: size for every local file, and for GeoParquet the row count,
 * columns and types, geometry types and extent from the Parquet footer and its GeoParquet metadata.
 * Facts are cached by content hash, so an unchanged file is not read again, and DuckDB is not even started
 * when every file is cached.
 */
export async function enrichSources(model: CatalogModel, localFiles: LocalDataFile[], fileOrigins: Map<number, FileOrigin>, options: EnrichOptions): Promise<EnrichResult> {
  const sources = indexSources(model);
  const cache = await DataCache.open<ParquetFacts>(options.cacheDir, 'parquet-facts.json', PARQUET_FACTS_VERSION);
  const issues: BuildIssue[] = [];
  const usedHashes = new Set<string>();
  const usedPaths = new Set<string>();
  let connection: DuckDBConnection | undefined;
  let instance: DuckDBInstance | undefined;
  let filesRead = 0;
  // Many sources may share a file (the layers of a GeoPackage, or a synthetic catalog): each path is looked at once.
  const byPath = new Map<string, { size: number; contentHash?: string }>();
  try {
    for (const local of localFiles) {
      const found = sources.get(local.sourceId);
      if (!found?.source.metadata) continue;
      const path = join(options.dataDir, local.path);
      let known = byPath.get(path);
      if (!known) byPath.set(path, (known = { size: (await stat(path)).size }));
      const metadata = found.source.metadata;
      metadata.size_bytes = known.size;
      if (found.formatType !== 'geoparquet') continue;
      const contentHash = (known.contentHash ??= await cache.contentHash(path));
      usedHashes.add(contentHash);
      usedPaths.add(path);
      let facts = cache.get(contentHash);
      if (!facts) {
        instance ??= await DuckDBInstance.create(':memory:', { threads: '1' });
        connection ??= await instance.connect();
        try {
          facts = await readParquetFacts(connection, path);
        } catch (error) {
          const reason = (error as Error).message.split('\n')[0]?.replaceAll(path, local.path);
          const line = local.line();
          issues.push({ code: 'UnreadableDataFile', source: local.source, ...(line ? { line } : {}), path: 'path', message: `"${local.path}" is not readable GeoParquet: ${reason}` });
          continue;
        }
        filesRead++;
        cache.set(contentHash, facts);
      }
      applyFacts(metadata, facts, found.file);
    }
  } finally {
    connection?.closeSync();
    instance?.closeSync();
  }
  const warnings: string[] = [];
  checkColumnDescriptions(model, fileOrigins, issues, warnings);
  if (issues.length === 0) await cache.save(usedHashes, usedPaths);
  if (filesRead > 0) options.log(`read ${filesRead} data files (${usedHashes.size - filesRead} unchanged, from the cache)`);
  return { issues, warnings, filesRead };
}

/**
 * Compares steward descriptions with the columns the data really has, across every version of a file: a
 * description of a missing column fails the build; a column without a description is a warning.
 */
function checkColumnDescriptions(model: CatalogModel, fileOrigins: Map<number, FileOrigin>, issues: BuildIssue[], warnings: string[]): void {
  for (const collection of model.collections) {
    for (const dataset of collection.datasets) {
      for (const file of dataset.files) {
        const described = file.formats.flatMap((link) => link.sources).filter((source) => source.metadata?.columns);
        if (described.length === 0) continue;
        const columns = new Set(described.flatMap((source) => source.metadata!.columns!.map((column) => column.name)));
        const origin = fileOrigins.get(file.id);
        for (const name of Object.keys(file.column_descriptions)) {
          if (columns.has(name)) continue;
          const line = origin?.locateColumn(name);
          issues.push({
            code: 'UnknownColumn', source: origin?.source ?? '', ...(line ? { line } : {}), path: `columns.${name}`,
            message: `file "${file.slug}" has no column "${name}"; its data has ${[...columns].join(', ')}`,
          });
        }
        const missing = [...columns].filter((name) => !(name in file.column_descriptions));
        if (missing.length > 0) warnings.push(`${origin?.source ?? dataset.slug}: file "${file.slug}" has no description for column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
      }
    }
  }
}

function applyFacts(metadata: NonNullable<SourceModel['metadata']>, facts: ParquetFacts, file: FileModel): void {
  metadata.feature_count = facts.rows;
  metadata.bounds = facts.bbox;
  metadata.geometry_type = facts.geometryTypes.length > 0 ? facts.geometryTypes.join(', ') : null;
  metadata.columns = facts.columns.map((column): ColumnSchema => ({
    name: column.name,
    type: column.name === facts.geometryColumn ? 'geometry' : logicalType(column.type),
    nullable: column.nullable,
    description: file.column_descriptions[column.name] ?? null,
  }));
}

function indexSources(model: CatalogModel): Map<number, { source: SourceModel; file: FileModel; formatType: string }> {
  const sources = new Map<number, { source: SourceModel; file: FileModel; formatType: string }>();
  const formatTypes = new Map(model.formats.map((format) => [format.id, format.format_type]));
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
