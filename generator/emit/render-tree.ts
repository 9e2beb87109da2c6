import { hash } from 'node:crypto';
import type { CatalogIndex, CollectionEntry } from '../../core/catalog-index.ts';
import type { CollectionModel, DatasetModel } from '../../core/model.ts';
import type { Manifest } from '../../runtime/manifest.ts';
import { answerCatalogRoute, createRenderContext } from '../../core/api/catalog/answer.ts';
import { PROBLEM_CONTENT_TYPE } from '../../core/constants.ts';
import { fileKeyForRoute, type CatalogRoute } from '../../core/api/catalog/resolve.ts';
import { serializeJson, type TreeFile } from '../../core/static-files.ts';
import { renderDiscoveryFiles } from './discovery-files.ts';
import { listCollectionRoutes, listDatasetRoutes, listGlobalRoutes } from './list-routes.ts';
import { createCatalogOpenApiDocument } from '../../core/api/openapi.ts';
import { stacCollectionFiles, stacDatasetFiles, stacGlobalFiles } from './stac-files.ts';

/** What the previous build rendered per scope, so an unchanged scope is not rendered again. */
export interface RenderState {
  /** Code, settings and slice options the documents were rendered with; any change renders everything. */
  fingerprint: string;
  scopes: Record<string, { hash: string; keys: string[] }>;
}

/** Options of `renderTree`. */
export interface RenderTreeOptions {
  searchSliceTerms: number;
  fingerprint: string;
  /** JSON of each dataset, from the model serialisation. */
  datasetJson: Map<number, string>;
  previous?: { state: RenderState; manifest: Manifest };
  /** What each scope adds to the web app; its pages are rendered later, asynchronously (see `PendingScope`). */
  site?: SiteScopes;
  /** Leave out the static STAC tree (/stac): only the build benchmark does, to measure what the tree costs. */
  skipStac?: boolean;
}

/** Files a scope adds beside its JSON documents, and work that can only finish asynchronously. */
export interface ScopeExtras {
  files: TreeFile[];
  /** Makes further files of the scope (pages, the search index); run by the caller before writing. */
  later?: () => Promise<TreeFile[]>;
}

/** The web app's part of each scope. */
export interface SiteScopes {
  /** The full-text index: `inputs` fingerprints what it is built from, so an unchanged index is kept. */
  search: { inputs: string; extras: () => ScopeExtras };
  /** Scripts, styles and static files of the web app, keyed by the compilation they come from. */
  assets: { inputs: string; extras: () => ScopeExtras };
  global: () => ScopeExtras;
  collection: (entry: CollectionEntry) => ScopeExtras;
  dataset: (collection: CollectionModel, dataset: DatasetModel) => ScopeExtras;
}

/** Asynchronous work of a scope that was rendered again; its files' keys join the scope's keys in the state. */
export interface PendingScope {
  scope: string;
  run: () => Promise<TreeFile[]>;
}

/** The rendered files, the keys kept from the previous build, and the state to store for the next one. */
export interface RenderedTree {
  files: TreeFile[];
  reusedKeys: string[];
  state: RenderState;
  pending: PendingScope[];
}

/** Runs the pending work of the scopes and adds its files to the tree and its keys to the state. */
export async function finishTree(tree: RenderedTree): Promise<void> {
  for (const { scope, run } of tree.pending) {
    const made = await run();
    tree.files.push(...made);
    tree.state.scopes[scope]!.keys.push(...made.map((file) => file.key));
  }
  tree.pending = [];
}

type ComputedRoute = Exclude<CatalogRoute, { route: 'openapi' }>;

/**
 * Renders the tree in scopes: one per dataset (its detail, by-id, file and schema documents), one per collection
 * (its listing slices and tags), and the global documents. A scope whose inputs hash the same as in the previous
 * build keeps its files without rendering, which is what makes a one-dataset edit of a large catalog quick.
 */
export function renderTree(index: CatalogIndex, options: RenderTreeOptions): RenderedTree {
  const context = createRenderContext(index);
  const files: TreeFile[] = [];
  const reusedKeys: string[] = [];
  const state: RenderState = { fingerprint: options.fingerprint, scopes: {} };
  const previous = options.previous?.state.fingerprint === options.fingerprint ? options.previous : undefined;
  const { site } = options;
  const contextHash = sha256(JSON.stringify([index.settings, index.model.formats, index.model.storageLocations]));

  const pending: PendingScope[] = [];
  const stac = !options.skipStac;
  const renderScope = (scope: string, inputs: string, routes: () => ComputedRoute[], extras?: () => ScopeExtras, stacFiles?: () => TreeFile[]) => {
    const scopeHash = sha256(`${contextHash}\n${inputs}`);
    const before = previous?.state.scopes[scope];
    if (before && before.hash === scopeHash && before.keys.every((key) => previous!.manifest.files[key])) {
      reusedKeys.push(...before.keys);
      state.scopes[scope] = before;
      return;
    }
    const keys: string[] = [];
    for (const route of routes()) {
      const key = fileKeyForRoute(route);
      if (key === undefined) continue;
      const answer = answerCatalogRoute(context, route);
      files.push({ key, body: serializeJson(answer.body), type: answer.problem ? PROBLEM_CONTENT_TYPE : 'application/json' });
      keys.push(key);
    }
    const extra = extras?.();
    for (const file of [...(extra?.files ?? []), ...(stac && stacFiles ? stacFiles() : [])]) {
      files.push(file);
      keys.push(file.key);
    }
    if (extra?.later) pending.push({ scope, run: extra.later });
    state.scopes[scope] = { hash: scopeHash, keys };
  };

  if (site) {
    renderScope('full-text', site.search.inputs, () => [], site.search.extras);
    renderScope('site-assets', site.assets.inputs, () => [], site.assets.extras);
  }
  const collectionHashes: string[] = [];
  for (const entry of index.collections.values()) {
    const { datasets, ...header } = entry.collection;
    const headerJson = JSON.stringify(header);
    const datasetHashes = datasets.map((dataset) => sha256(options.datasetJson.get(dataset.id) ?? JSON.stringify(dataset)));
    const collectionInputs = `${headerJson}\n${options.searchSliceTerms}\n${datasetHashes.join('\n')}`;
    collectionHashes.push(sha256(collectionInputs));
    renderScope(`collection:${entry.collection.slug}`, collectionInputs, () => listCollectionRoutes(entry, options.searchSliceTerms), site && (() => site.collection(entry)), () => stacCollectionFiles(context, entry.collection));
    datasets.forEach((dataset, position) => {
      renderScope(`dataset:${dataset.id}`, `${headerJson}\n${datasetHashes[position]}`, () => listDatasetRoutes(entry.collection, dataset, index), site && (() => site.dataset(entry.collection, dataset)), () => stacDatasetFiles(context, entry.collection, dataset));
    });
  }
  renderScope('global', collectionHashes.join('\n'), listGlobalRoutes, site?.global, () => stacGlobalFiles(context));
  files.push({ key: 'api/openapi/index.json', body: serializeJson(createCatalogOpenApiDocument(index.settings.baseUrl)), type: 'application/json' });
  files.push(...renderDiscoveryFiles(index));
  return { files, reusedKeys, state, pending };
}

function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}
