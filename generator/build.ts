import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { createCatalogIndex, type CatalogIndex } from '../core/catalog-index.ts';
import type { Config } from '../core/config.ts';
import type { CatalogModel } from '../core/model.ts';
import { MODEL_FILE, type ModelFile } from '../core/manifest.ts';
import { answerCatalogRoute, createRenderContext } from '../core/render/answer.ts';
import { fileKeyForRoute, type CatalogRoute } from '../core/routes.ts';
import { serializeJson, type TreeFile } from '../core/static-files.ts';
import { enrichSources } from './enrich/enrich-sources.ts';
import { renderDiscoveryFiles } from './emit/discovery-files.ts';
import { listCollectionRoutes, listDatasetRoutes, listGlobalRoutes } from './emit/list-routes.ts';
import { createOpenApiDocument } from './emit/openapi.ts';
import { writeTree, type WriteReport } from './emit/write-tree.ts';
import { BuildError, type BuildIssue } from './errors.ts';
import { readRecordFiles } from './load/read-records.ts';
import { buildModel } from './model/build-model.ts';
import { IdAllocator, readLedger, writeLedger } from './model/ledger.ts';
import { parseRecords } from './parse/parse-records.ts';

/** Brotli quality and gzip level of precompressed siblings; chosen by `npm run bench` (see BENCHMARKS.md). */
export const COMPRESSION = { brotliQuality: 5, gzipLevel: 6 } as const;

/** Options of a build. */
export interface BuildOptions {
  config: Config;
  /** Ignore the previous tree and write every file. */
  full?: boolean;
  /** Receives progress lines; silent when absent. */
  log?: (line: string) => void;
  /** Current time, for the creation date of new ids. */
  now?: Date;
}

/** What a build did. */
export interface BuildResult extends WriteReport {
  documents: number;
  newIds: number;
  warnings: string[];
}

/**
 * Builds the static tree: load, parse, resolve, enrich, render, write. Every record problem is collected and
 * thrown together as a `BuildError` before anything is written, so a failed build leaves `dist/` untouched.
 */
export async function buildCatalog(options: BuildOptions): Promise<BuildResult> {
  const { config } = options;
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const files = await readRecordFiles(config.catalogDir);
  const { records, issues } = parseRecords(files);
  const ledgerPath = join(config.catalogDir, 'ledger.json');
  const ids = new IdAllocator(await readLedger(ledgerPath), formatTimestamp(options.now ?? new Date()));
  const dataFiles = await listDataFiles(config.dataDir);
  const { model, localFiles, issues: modelIssues } = buildModel(records, { ids, storageBaseUrl: config.storageBaseUrl, dataFiles });
  issues.push(...modelIssues);
  if (config.ledgerMode === 'frozen') {
    for (const { kind, key } of ids.added) {
      issues.push({ code: 'LedgerFrozen', source: 'ledger.json', path: `ids.${kind}`, message: `"${key}" has no id yet` });
    }
  }
  if (issues.length > 0) throw new BuildError(sortIssues(issues));
  log(`loaded ${files.length} record files: ${model.collections.length} collections, ${countDatasets(model)} datasets`);

  const enrichment = await enrichSources(model, localFiles, { dataDir: config.dataDir, log });
  if (enrichment.issues.length > 0) throw new BuildError(sortIssues(enrichment.issues));

  const settings = { baseUrl: config.baseUrl, storageBaseUrl: config.storageBaseUrl };
  const modelJson = JSON.stringify({ settings, model } satisfies ModelFile);
  // Render from the stored form of the model, exactly what the server will load, so computed answers match files.
  const stored = JSON.parse(modelJson) as ModelFile;
  const index = createCatalogIndex(stored.model, stored.settings);
  const treeFiles = renderTree(index, config.searchSliceTerms);
  log(`rendered ${treeFiles.length} documents`);

  const report = await writeTree(treeFiles, {
    distDir: config.distDir,
    settings: { base_url: config.baseUrl, storage_base_url: config.storageBaseUrl },
    internal: [{ key: MODEL_FILE, body: Buffer.from(modelJson), type: 'application/json' }],
    threads: config.buildConcurrency,
    ...COMPRESSION,
    ...(options.full ? { full: true } : {}),
  });
  if (ids.added.length > 0 && config.ledgerMode === 'update') {
    await writeLedger(ledgerPath, ids.ledger);
    log(`gave ${ids.added.length} new records their ids; commit ${relative(process.cwd(), ledgerPath)}`);
  }
  log(`${report.mode} build: wrote ${report.written.length}, removed ${report.removed.length}, kept ${report.unchanged} in ${Math.round(performance.now() - started)} ms`);
  return { ...report, documents: treeFiles.length, newIds: ids.added.length, warnings: enrichment.warnings };
}

/** Renders every file of the tree from the index: API documents, the OpenAPI document, discovery files. */
export function renderTree(index: CatalogIndex, searchSliceTerms: number): TreeFile[] {
  const context = createRenderContext(index);
  const files: TreeFile[] = [];
  const emit = (route: Exclude<CatalogRoute, { route: 'openapi' }>) => {
    const key = fileKeyForRoute(route);
    if (key === undefined) return;
    const answer = answerCatalogRoute(context, route);
    files.push({ key, body: serializeJson(answer.body), type: answer.problem ? 'application/problem+json' : 'application/json' });
  };
  listGlobalRoutes().forEach(emit);
  for (const entry of index.collections.values()) {
    listCollectionRoutes(entry, searchSliceTerms).forEach(emit);
    for (const dataset of entry.collection.datasets) listDatasetRoutes(entry.collection, dataset, index).forEach(emit);
  }
  files.push({ key: 'api/openapi/index.json', body: serializeJson(createOpenApiDocument(index.settings.baseUrl)), type: 'application/json' });
  files.push(...renderDiscoveryFiles(index));
  return files;
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
