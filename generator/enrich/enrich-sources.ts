import { stat } from 'node:fs/promises';
import { PmTilesFormatError } from '../../runtime/pmtiles-header.ts';
import { readPmTilesInfo } from '../../runtime/pmtiles-info.ts';
import { join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { hash } from 'node:crypto';
import type { CatalogModel, FileModel, SourceModel } from '../../core/model.ts';
import type { BuildIssue } from '../errors.ts';
import type { FileOrigin, LocalDataFile, RemoteDataFile } from '../model/build-model.ts';
import { enrichRemoteSources, sourcesById } from './enrich-remote.ts';
import { DataCache } from './data-cache.ts';
import { DATA_FACTS_VERSION, openInspectionInstance, type DataFacts } from './inspect-data-file.ts';
import { factsKey, INSPECTORS, MULTI_FILE } from './inspectors.ts';
import { applyFacts, applyPmTilesInfo, storedFacts } from './apply-facts.ts';
import { didYouMean } from '../../core/suggest.ts';
import { listSourceFiles } from '../../runtime/source-files.ts';
import { createProgress, type ProgressReporter } from './progress.ts';
import { makeTwins } from '../tiles/twins.ts';

/** Options of the enrichment stage. */
export interface EnrichOptions {
  dataDir: string;
  cacheDir: string;
  /** How much of a file in object storage the build reads (GEOSHELF_REMOTE_SCAN); `full` when absent. */
  remoteScan?: 'full' | 'footer';
  log: (line: string) => void;
  progress?: ProgressReporter;
}

/** What enrichment did, besides filling the model. */
export interface EnrichResult {
  issues: BuildIssue[];
  warnings: string[];
  /** Data files read in this run (cache misses). */
  filesRead: number;
  /** PMTiles twins made in this run, and those already current (generator/tiles/twins.ts). */
  twins: { made: number; current: number };
}

interface Target {
  path: string;
  relative: string;
  formatType: string;
  sources: { source: SourceModel; file: FileModel; local: LocalDataFile }[];
}

/**
 * Makes the PMTiles twins that are stale (generator/tiles/twins.ts), then fills source metadata from the data
 * files: size for every local file, and for GeoParquet, GeoJSON, shapefiles and File Geodatabases the
 * feature count, geometry types, invalid geometries by reason (GEOS), empty geometries, WGS84 bounds and a
 * data dictionary of every column. Sources in object storage get the same from their objects
 * (enrich-remote.ts).
 * Facts are cached by the file's content hash, so an unchanged file is not read again, and DuckDB is not
 * even started when every file is cached.
 */
export async function enrichSources(model: CatalogModel, localFiles: LocalDataFile[], fileOrigins: Map<number, FileOrigin>, options: EnrichOptions, remoteFiles: RemoteDataFile[] = []): Promise<EnrichResult> {
  const cache = await DataCache.open<DataFacts>(options.cacheDir, 'data-facts.json', DATA_FACTS_VERSION);
  let instance: DuckDBInstance | undefined;
  const duckdb = async () => (instance ??= await openInspectionInstance());
  try {
    const twins = await makeTwins(model, localFiles, { dataDir: options.dataDir, hashOf: (path) => cache.contentHash(path), log: options.log, ...(options.progress ? { progress: options.progress } : {}) });
    const counts = { made: twins.made, current: twins.current };
    if (twins.issues.length > 0) return { issues: twins.issues, warnings: twins.warnings, filesRead: 0, twins: counts };
    // Remote sources first: their columns join the local ones in the check of column descriptions.
    // Both keep their facts in one cache by content hash: the keys either used are kept when it is saved.
    const usedKeys = new Set<string>();
    const remote = await enrichRemoteSources(model, remoteFiles, {
      cacheDir: options.cacheDir, scan: options.remoteScan ?? 'full', duckdb, facts: { cache, used: usedKeys }, log: options.log,
      ...(options.progress ? { progress: options.progress } : {}),
    });
    const local = await readFacts(model, groupTargets(model, twins.localFiles, options.dataDir), { cache, duckdb, options, fileOrigins, usedKeys, warnings: [...twins.warnings, ...remote.warnings] });
    return { ...local, issues: [...remote.issues, ...local.issues], filesRead: local.filesRead + remote.read.objects, twins: counts };
  } finally {
    instance?.closeSync();
  }
}

interface ReadContext {
  cache: DataCache<DataFacts>;
  duckdb: () => Promise<DuckDBInstance>;
  options: EnrichOptions;
  fileOrigins: Map<number, FileOrigin>;
  /** Keys of the cache's facts this build used so far, added to. */
  usedKeys: Set<string>;
  /** Warnings so far, added to. */
  warnings: string[];
}

/** Gives every source its file's size and hash, and the facts of the files that have an inspector. */
async function readFacts(model: CatalogModel, targets: Target[], context: ReadContext): Promise<Omit<EnrichResult, 'twins'>> {
  const { cache, duckdb, options, fileOrigins, usedKeys, warnings } = context;
  const issues: BuildIssue[] = [];
  const remoteKeys = usedKeys.size;
  const usedPaths = new Set<string>();
  let filesRead = 0;
  const inspectable = targets.filter((target) => INSPECTORS[target.formatType]);
  const advance = createProgress('reading data files', inspectable.length, options.progress);
  let done = 0;
  for (const target of targets) {
    const { size, sha256 } = await measure(target, cache, usedPaths, options.dataDir);
    for (const { source } of target.sources) {
      if (source.metadata) source.metadata.size_bytes = size;
      source.stored = storedFacts(sha256);
    }
    if (target.formatType === 'pmtiles') {
      await checkPmTiles(target, issues);
      continue;
    }
    const inspect = INSPECTORS[target.formatType];
    if (!inspect) continue;
    const layer = target.sources[0]!.file.layer_name;
    const key = factsKey(target.formatType, sha256, layer);
    usedKeys.add(key);
    let facts = cache.get(key);
    if (!facts) {
      try {
        facts = await inspect(await duckdb(), target.path, { scratchDir: options.cacheDir, layer });
      } catch (error) {
        const reason = (error as Error).message.split('\n')[0]?.replaceAll(target.path, target.relative);
        const local = target.sources[0]!.local;
        const line = local.line();
        issues.push({ code: 'UnreadableDataFile', source: local.source, ...(line ? { line } : {}), path: local.field, message: `"${target.relative}" cannot be read as ${target.formatType}: ${reason}` });
        continue;
      }
      filesRead++;
      cache.set(key, facts);
    }
    advance(++done);
    for (const warning of facts.warnings) warnings.push(`${target.relative}: ${warning}`);
    for (const { source, file } of target.sources) {
      if (source.metadata) applyFacts(source.metadata, facts, file);
      source.stored = storedFacts(sha256, facts);
    }
  }
  checkColumnDescriptions(model, fileOrigins, issues, warnings);
  if (issues.length === 0) await cache.save(usedKeys, usedPaths);
  if (filesRead > 0) options.log(`read ${filesRead} data files (${usedKeys.size - remoteKeys - filesRead} unchanged, from the cache)`);
  return { issues, warnings, filesRead };
}

/**
 * The size and SHA-256 of a source's data. A shapefile or a File Geodatabase is several files: its size is
 * theirs together (what its download holds) and its hash covers each file's name and hash, so a changed
 * `.dbf` is read again like a changed `.shp`.
 */
export async function measure(target: Pick<Target, 'path' | 'relative' | 'formatType'>, cache: DataCache<DataFacts>, usedPaths: Set<string>, dataDir: string): Promise<{ size: number; sha256: string }> {
  if (!MULTI_FILE.has(target.formatType)) {
    usedPaths.add(target.path);
    return { size: (await stat(target.path)).size, sha256: await cache.contentHash(target.path) };
  }
  const parts = listSourceFiles(dataDir, target.relative);
  const hashes: [string, string][] = [];
  for (const part of parts) {
    usedPaths.add(part.path);
    hashes.push([part.name, await cache.contentHash(part.path)]);
  }
  return { size: parts.reduce((sum, part) => sum + part.size, 0), sha256: hash('sha256', JSON.stringify(hashes), 'hex') };
}

/**
 * Reads a PMTiles source's header and metadata (a few hundred bytes, so not cached): a broken one fails the
 * build with the reason; a good one gives the source its bounds.
 */
async function checkPmTiles(target: Target, issues: BuildIssue[]): Promise<void> {
  try {
    const info = await readPmTilesInfo(target.path);
    for (const { source } of target.sources) if (source.metadata) applyPmTilesInfo(source.metadata, info);
  } catch (error) {
    const local = target.sources[0]!.local;
    const line = local.line();
    const reason = error instanceof PmTilesFormatError ? error.reason : (error as Error).message.split('\n')[0]?.replaceAll(target.path, target.relative);
    issues.push({ code: 'UnreadablePmTiles', source: local.source, ...(line ? { line } : {}), path: local.field, message: `"${target.relative}" is not a readable PMTiles archive: ${reason}` });
  }
}

function groupTargets(model: CatalogModel, localFiles: LocalDataFile[], dataDir: string): Target[] {
  const bySource = sourcesById(model);
  // Many sources may share a file (the layers of a GeoPackage, or a synthetic catalog): each file is read once.
  const targets = new Map<string, Target>();
  for (const local of localFiles) {
    const found = bySource.get(local.sourceId);
    if (!found) continue;
    const path = join(dataDir, local.path);
    const key = `${found.formatType}:${path}`;
    const target = targets.get(key) ?? { path, relative: local.path, formatType: found.formatType, sources: [] };
    target.sources.push({ source: found.source, file: found.file, local });
    targets.set(key, target);
  }
  return [...targets.values()];
}

/** Undescribed files named in the warning; the rest are counted. */
const UNDESCRIBED_NAMED = 5;

/**
 * Compares steward descriptions with the columns the data really has, across every version of a file: a
 * description of a missing column fails the build; columns without a description are one warning for the whole
 * catalog, with a count, naming the first files. The geometry column and a bbox covering describe themselves
 * (GeoParquet says what they are), so they need none.
 */
function checkColumnDescriptions(model: CatalogModel, fileOrigins: Map<number, FileOrigin>, issues: BuildIssue[], warnings: string[]): void {
  const undescribed: string[] = [];
  let count = 0;
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
            message: `file "${file.slug}" has no column "${name}"${didYouMean(name, columns)}; its data has ${[...columns].join(', ')}`,
          });
        }
        const selfDescribing = new Set(described.flatMap(selfDescribingColumns));
        const missing = [...columns].filter((name) => !(name in file.column_descriptions) && !selfDescribing.has(name));
        if (missing.length === 0) continue;
        count += missing.length;
        undescribed.push(`${origin?.source ?? dataset.slug} file "${file.slug}" (${missing.join(', ')})`);
      }
    }
  }
  if (undescribed.length === 0) return;
  const more = undescribed.length > UNDESCRIBED_NAMED ? `; and ${undescribed.length - UNDESCRIBED_NAMED} more files` : '';
  warnings.push(`${count} column${count === 1 ? '' : 's'} of ${undescribed.length} file${undescribed.length === 1 ? '' : 's'} ${count === 1 ? 'has' : 'have'} no description: ${undescribed.slice(0, UNDESCRIBED_NAMED).join('; ')}${more}`);
}

/** The columns of a source that need no description: its geometry column, and its bbox covering (a struct). */
function selfDescribingColumns(source: SourceModel): string[] {
  const geometry = source.stored?.geometry_column;
  const covering = source.metadata?.columns?.some((column) => column.name === 'bbox' && column.type === 'struct');
  return [...(geometry ? [geometry] : []), ...(covering ? ['bbox'] : [])];
}
