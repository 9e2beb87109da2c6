import { hash } from 'node:crypto';
import type { CatalogIndex } from '../../core/catalog-index.ts';
import type { Manifest } from '../../runtime/manifest.ts';
import { answerCatalogRoute, createRenderContext } from '../../core/render/answer.ts';
import { PROBLEM_CONTENT_TYPE } from '../../core/constants.ts';
import { fileKeyForRoute, type CatalogRoute } from '../../core/api/catalog/resolve.ts';
import { serializeJson, type TreeFile } from '../../core/static-files.ts';
import { renderDiscoveryFiles } from './discovery-files.ts';
import { listCollectionRoutes, listDatasetRoutes, listGlobalRoutes } from './list-routes.ts';
import { createOpenApiDocument } from './openapi.ts';

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
}

/** The rendered files, the keys kept from the previous build, and the state to store for the next one. */
export interface RenderedTree {
  files: TreeFile[];
  reusedKeys: string[];
  state: RenderState;
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
  const contextHash = sha256(JSON.stringify([index.settings, index.model.formats, index.model.storageLocations]));

  const renderScope = (scope: string, inputs: string, routes: () => ComputedRoute[]) => {
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
    state.scopes[scope] = { hash: scopeHash, keys };
  };

  const collectionHashes: string[] = [];
  for (const entry of index.collections.values()) {
    const { datasets, ...header } = entry.collection;
    const headerJson = JSON.stringify(header);
    const datasetHashes = datasets.map((dataset) => sha256(options.datasetJson.get(dataset.id) ?? JSON.stringify(dataset)));
    const collectionInputs = `${headerJson}\n${options.searchSliceTerms}\n${datasetHashes.join('\n')}`;
    collectionHashes.push(sha256(collectionInputs));
    renderScope(`collection:${entry.collection.slug}`, collectionInputs, () => listCollectionRoutes(entry, options.searchSliceTerms));
    datasets.forEach((dataset, position) => {
      renderScope(`dataset:${dataset.id}`, `${headerJson}\n${datasetHashes[position]}`, () => listDatasetRoutes(entry.collection, dataset, index));
    });
  }
  renderScope('global', collectionHashes.join('\n'), listGlobalRoutes);
  files.push({ key: 'api/openapi/index.json', body: serializeJson(createOpenApiDocument(index.settings.baseUrl)), type: 'application/json' });
  files.push(...renderDiscoveryFiles(index));
  return { files, reusedKeys, state };
}

function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}
