import { readdir, rm } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCatalogIndex } from '../core/catalog-index.ts';
import type { Config } from '../runtime/config.ts';
import { INTERNAL_DIR } from '../core/constants.ts';
import { PartUnreadable, readManifestPart, readManifestRoot } from '../runtime/manifest.ts';
import { modelPartKey, readModelRoot } from '../runtime/model-file.ts';
import type { CatalogModel } from '../core/model.ts';
import { computeCodeFingerprint, readParseCache, readRecordStats, writeParseCache, writeRecordStats } from './cache.ts';
import { enrichSources } from './enrich/enrich-sources.ts';
import type { ProgressReporter } from './enrich/progress.ts';
import { serializeModel } from './emit/model-file.ts';
import { finishTree, renderTree, type RenderedTree, type RenderTreeOptions } from './emit/render-tree.ts';
import { prepareSite } from './emit/site/build-site.ts';
import { hashSources } from './emit/site/compile-site.ts';
import { recoverTree, writeTree, type WriteReport } from './emit/write-tree.ts';
import { BuildError, type BuildIssue } from './errors.ts';
import { readRecordFiles, type ListedFiles, type RecordFile, type RecordStats } from './load/read-records.ts';
import { buildModel } from './model/build-model.ts';
import { IdAllocator, readLedger, writeLedger } from './model/ledger.ts';
import { listRemovals } from './model/removals.ts';
import { parseRecords, type ParseCache } from './parse/parse-records.ts';
import { digestInputs, readCurrentStamp, writeStamp } from './up-to-date.ts';

/** Brotli quality and gzip level of precompressed siblings; chosen by `npm run bench` (see BENCHMARKS.md). */
export const COMPRESSION = { brotliQuality: 5, gzipLevel: 6 } as const;

/** Options of a build. */
export interface BuildOptions {
  config: Config;
  /** Ignore the previous tree and every cache, and write every file. */
  full?: boolean;
  /** Receives progress lines; silent when absent. */
  log?: (line: string) => void;
  /** Receives progress of long stages (data files read); silent when absent. */
  progress?: ProgressReporter;
  /** Current time, for the creation date of new ids. */
  now?: Date;
  /** Leave out the static STAC tree; for the build benchmark only, which measures what the tree costs. */
  skipStac?: boolean;
}

/** What a build did. */
export interface BuildResult extends WriteReport {
  documents: number;
  newIds: number;
  warnings: string[];
  /** Data files whose statistics were read in this build; the others came from the cache. */
  dataFilesRead: number;
  /** PMTiles twins made in this build, and those already current: a CI cache that worked makes none. */
  twins: { made: number; current: number };
  /** Whether the build was skipped: its inputs were those of the last build, over the tree that build wrote. */
  skipped: boolean;
}

/** The model with what the stages before rendering learned on the way. */
export interface LoadedCatalog {
  model: CatalogModel;
  ids: IdAllocator;
  warnings: string[];
  parseCache: ParseCache;
  dataFilesRead: number;
  twins: { made: number; current: number };
  /** Whether the catalog reads remote objects, which change with no trace on this machine. */
  remote: boolean;
  /** The record files read, and when: the next build's `RecordStats`. */
  records: { takenAt: number; files: RecordFile[] };
}

/**
 * Builds the static tree: load, parse, resolve, enrich, render, write. Every record problem is collected and
 * thrown together as a `BuildError` before anything is written, so a failed build leaves `dist/` untouched.
 */
export async function buildCatalog(options: BuildOptions): Promise<BuildResult> {
  const { config } = options;
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const code = await computeCodeFingerprint();
  const root = fileURLToPath(new URL('..', import.meta.url));
  // A build killed part way may have left dist/ mid-update: finish or undo that before comparing against it.
  await recoverTree(config.distDir, log);
  const siteSources = await hashSources(root);
  const { inputs, catalogFiles, dataFiles } = await digestInputs(config, { code, site: siteSources, skipStac: options.skipStac ?? false });
  const stamp = options.full ? undefined : await readCurrentStamp(config, inputs);
  if (stamp) {
    log(`nothing changed since the last build (the code, the settings, and every file of the catalog and data folders by size and time); ${stamp.documents} documents kept in ${Math.round(performance.now() - started)} ms`);
    return { mode: 'incremental', written: [], removed: [], unchanged: stamp.documents, documents: stamp.documents, newIds: 0, warnings: stamp.warnings, dataFilesRead: 0, twins: { made: 0, current: stamp.twins }, skipped: true };
  }
  const loaded = options.full
    ? await loadCatalogModel(options, { listed: catalogFiles, dataFiles })
    : await loadCatalogModel(options, { parseCache: await readParseCache(config.cacheDir, code), recordStats: await readRecordStats(config.cacheDir), listed: catalogFiles, dataFiles });

  const settings = { baseUrl: config.baseUrl, storageBaseUrl: config.storageBaseUrl };
  // A full build makes the downloads' parts again, and keeps them for the builds after it.
  const downloadsCacheDir = join(config.cacheDir, 'downloads');
  if (options.full) await rm(downloadsCacheDir, { recursive: true, force: true });
  const previousRoot = options.full ? undefined : await readManifestRoot(config.distDir);
  let serialized = serializeModel(settings, loaded.model, previousRoot && readModelRoot(config.distDir));
  const index = createCatalogIndex(loaded.model, settings);
  const pages = await prepareSite(index, {
    root,
    sourceHash: siteSources,
    dataDir: config.dataDir,
    queryOrigin: config.siteQueryOrigin,
    browserSqlLimitBytes: config.siteBrowserSqlMb * 1_000_000,
    log,
  });
  const removals = listRemovals(loaded.ids.ledger);
  const render = (previous: RenderTreeOptions['previous']) => renderTree(index, {
    searchSliceTerms: config.searchSliceTerms,
    fingerprint: `${code}:${config.searchSliceTerms}:${pages.fingerprint}${options.skipStac ? ':no-stac' : ''}`,
    skipStac: options.skipStac,
    datasetHashes: serialized.datasetHashes,
    site: pages.scopes,
    downloadsCacheDir,
    removals,
    ...(previous ? { previous } : {}),
  });
  let rendered: RenderedTree;
  let incremental = previousRoot !== undefined;
  try {
    rendered = render(previousRoot && { root: previousRoot, readPart: (sha256) => readManifestPart(config.distDir, sha256) });
  } catch (error) {
    if (!(error instanceof PartUnreadable)) throw error;
    log(`the previous tree cannot be compared with (${error.message}): writing a whole new one`);
    incremental = false;
    rendered = render(undefined);
    // A whole new tree holds every model part, not only those that changed.
    serialized = serializeModel(settings, loaded.model);
  }
  await finishTree(rendered);
  log(`rendered ${rendered.files.length} documents and pages (${pages.rendered()} pages), kept ${rendered.keptFiles} whose inputs did not change`);

  const report = await writeTree(rendered, {
    distDir: config.distDir,
    settings: { base_url: config.baseUrl, storage_base_url: config.storageBaseUrl },
    internal: serialized.files,
    // Model parts the new root no longer names: those of the previous build, and any a lost build left.
    internalRemoved: incremental ? (await readdir(join(config.distDir, INTERNAL_DIR, 'model')).catch(() => [])).map((name) => modelPartKey(basename(name, '.json'))).filter((key) => !serialized.named.has(key)) : [],
    threads: config.buildConcurrency,
    ...COMPRESSION,
    incremental,
    log,
  });
  await writeParseCache(config.cacheDir, code, loaded.parseCache);
  await writeRecordStats(config.cacheDir, loaded.records.takenAt, loaded.records.files);
  const { ids } = loaded;
  if (ids.changed && config.ledgerMode === 'update') {
    const ledgerPath = join(config.catalogDir, 'ledger.json');
    await writeLedger(ledgerPath, ids.ledger);
    const changes = [
      ids.added.length > 0 ? `gave ${ids.added.length} new records their ids` : '',
      ids.removed.length > 0 ? `marked ${ids.removed.length} records removed` : '',
      ids.returned.length > 0 ? `took back ${ids.returned.length} removed records` : '',
    ].filter(Boolean);
    log(`${changes.join(', ')}; commit ${relative(process.cwd(), ledgerPath)}`);
  }
  const documents = report.written.length + report.unchanged;
  const twins = loaded.twins;
  await writeStamp(config, { inputs, remote: loaded.remote, documents, warnings: loaded.warnings, twins: twins.made + twins.current });
  log(`${report.mode} build: wrote ${report.written.length}, removed ${report.removed.length}, kept ${report.unchanged} in ${Math.round(performance.now() - started)} ms`);
  return { ...report, documents, newIds: ids.added.length, warnings: loaded.warnings, dataFilesRead: loaded.dataFilesRead, twins, skipped: false };
}

/** What a build knows of its inputs before it loads them: the last build's caches, and the folders as listed. */
export interface KnownInputs {
  parseCache?: ParseCache;
  recordStats?: RecordStats;
  listed?: ListedFiles;
  /** The data folder's files, by path relative to it with `/` (`listDataFiles`). */
  dataFiles?: Set<string>;
}

/**
 * The stages before rendering: load, parse, resolve against the ledger, enrich from the data. Throws a
 * `BuildError` listing every problem; writes nothing.
 */
export async function loadCatalogModel(options: BuildOptions, known: KnownInputs = {}): Promise<LoadedCatalog> {
  const { config } = options;
  const log = options.log ?? (() => undefined);
  const takenAt = Date.now();
  const files = await readRecordFiles(config.catalogDir, known.recordStats, known.listed);
  const parsed = parseRecords(files, known.parseCache ?? new Map());
  const issues = parsed.issues;
  const ids = new IdAllocator(await readLedger(join(config.catalogDir, 'ledger.json')), formatTimestamp(options.now ?? new Date()));
  const dataFiles = known.dataFiles ?? (await listDataFiles(config.dataDir));
  const { model, localFiles, remoteFiles, fileOrigins, issues: modelIssues } = buildModel(parsed.records, { ids, storageBaseUrl: config.storageBaseUrl, dataFiles, dataDir: config.dataDir });
  issues.push(...modelIssues);
  if (config.ledgerMode === 'frozen') {
    for (const { kind, key } of ids.added) {
      issues.push({ code: 'LedgerFrozen', source: 'ledger.json', path: `ids.${kind}`, message: `"${key}" has no id yet` });
    }
  }
  log(`loaded ${files.length} record files (${files.filter((file) => file.read).length} read, the others unchanged since the last build): ${model.collections.length} collections, ${countDatasets(model)} datasets`);
  // The data of the records that resolved is read even when others did not: every problem comes out in one pass.
  const enrichment = await enrichSources(model, localFiles, fileOrigins, { dataDir: config.dataDir, cacheDir: config.cacheDir, remoteScan: config.remoteScan, log, ...(options.progress ? { progress: options.progress } : {}) }, remoteFiles);
  issues.push(...enrichment.issues);
  // Only a catalog that resolved whole tells what was removed: a record that failed to parse is still there.
  if (issues.length === 0) issues.push(...markRemovals(ids, config.ledgerMode));
  if (issues.length > 0) throw new BuildError(sortIssues(issues), enrichment.warnings);
  return { model, ids, warnings: enrichment.warnings, parseCache: parsed.cache, dataFilesRead: enrichment.filesRead, twins: enrichment.twins, remote: remoteFiles.length > 0, records: { takenAt, files } };
}

/**
 * Stamps the ledger's keys that no record asked for as removed. A frozen ledger must already say so for every removal
 * the feeds tell, as it must hold every id: otherwise a catalog built in CI would drop things without a trace.
 */
function markRemovals(ids: IdAllocator, mode: Config['ledgerMode']): BuildIssue[] {
  if (mode === 'update') {
    ids.markRemoved();
    return [];
  }
  const told = new Set(listRemovals(ids.ledger).map((removal) => `${removal.kind}:${removal.key}`));
  ids.markRemoved();
  return listRemovals(ids.ledger).filter((removal) => !told.has(`${removal.kind}:${removal.key}`)).map((removal) => ({
    code: 'LedgerFrozen',
    source: 'ledger.json',
    path: `ids.${removal.kind === 'version' ? 'source' : removal.kind}`,
    message: `"${removal.key}" has no record any more, and the ledger does not say it was removed`,
  }));
}

async function listDataFiles(dataDir: string): Promise<Set<string>> {
  const entries = await readdir(dataDir, { recursive: true, withFileTypes: true }).catch(() => []);
  return new Set(entries.filter((entry) => entry.isFile()).map((entry) => relative(dataDir, join(entry.parentPath, entry.name)).split(sep).join('/')));
}

function countDatasets(model: CatalogModel): number {
  return model.collections.reduce((sum, collection) => sum + collection.datasets.length, 0);
}

function sortIssues(issues: BuildIssue[]): BuildIssue[] {
  return [...issues].sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : (a.line ?? 0) - (b.line ?? 0)));
}

/** Formats a date as the contract's timestamp: UTC, seconds, no timezone. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19);
}
