import { hash } from 'node:crypto';
import type { CatalogIndex, CollectionEntry } from '../../core/catalog-index.ts';
import type { CollectionModel, DatasetModel } from '../../core/model.ts';
import type { ManifestPart, ManifestRoot, PartRef } from '../../runtime/manifest.ts';
import { datasetPart } from '../../runtime/model-file.ts';
import { answerCatalogRoute, createRenderContext } from '../../core/api/catalog/answer.ts';
import { PROBLEM_CONTENT_TYPE } from '../../core/constants.ts';
import { fileKeyForRoute, type CatalogRoute } from '../../core/api/catalog/resolve.ts';
import { serializeJson, type TreeFile } from '../../core/static-files.ts';
import { renderDiscoveryFiles } from './discovery-files.ts';
import { renderCatalogFeed, renderCollectionFeed } from './discovery/atom-feed.ts';
import { collectionOfRemoval, type Removal } from '../model/removals.ts';
import { renderDcatCollectionFile, renderDcatFile } from './discovery/dcat.ts';
import { renderCatalogDownloads } from './downloads.ts';
import { listCollectionRoutes, listDatasetRoutes, listGlobalRoutes } from './list-routes.ts';
import { createCatalogOpenApiDocument } from '../../core/api/openapi.ts';
import { stacCollectionFiles, stacDatasetFiles, stacGlobalFiles } from './stac-files.ts';

/** Options of `renderTree`. */
export interface RenderTreeOptions {
  searchSliceTerms: number;
  fingerprint: string;
  /** SHA-256 of each dataset's JSON, from the model serialisation. */
  datasetHashes: Map<number, string>;
  /** The manifest root of the tree in `dist/`, and a reader of its parts; absent for a full build. */
  previous?: { root: ManifestRoot; readPart: (sha256: string) => ManifestPart };
  /** What each scope adds to the web app; its pages are rendered later, asynchronously (see `PendingScope`). */
  site?: SiteScopes;
  /** Leave out the static STAC tree (/stac): only the build benchmark does, to measure what the tree costs. */
  skipStac?: boolean;
  /** Where the downloads keep each collection's rows between builds; absent, every row is rendered again. */
  downloadsCacheDir?: string;
  /** What the ledger says left the catalog, for the feeds; none when absent. */
  removals?: Removal[];
}

/** Files a scope adds beside its JSON documents, and work that can only finish asynchronously. */
export interface ScopeExtras {
  files: TreeFile[];
  /** Makes further files of the scope (pages, the search index); run by the caller before writing. */
  later?: () => Promise<TreeFile[]>;
  /** `later` does its work off the main thread (DuckDB): it is started first and runs while the pages render. */
  background?: boolean;
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

/** Asynchronous work of a scope that was rendered again; its files' keys join the scope's keys. */
export interface PendingScope {
  scope: RenderedScope;
  run: () => Promise<TreeFile[]>;
  background?: boolean;
}

/** A scope of a part that is written again: the hash of its inputs, and either its files kept whole or the keys rendered now. */
export interface RenderedScope {
  hash: string;
  kept?: ManifestPart['scopes'][string]['files'];
  keys: string[];
}

/**
 * A part of the new tree: kept as the previous root names it (none of its scopes' inputs changed, and it was not
 * read), or planned again from its scopes, with its previous version when there was one.
 */
export type PartPlan =
  | { kept: PartRef }
  | { inputs: string; scopes: Map<string, RenderedScope>; previous?: ManifestPart; previousSha256?: string };

/** The rendered files, every part of the new tree, and the asynchronous work still to run. */
export interface RenderedTree {
  files: TreeFile[];
  parts: Map<string, PartPlan>;
  /** Parts the previous root named that the new tree no longer has, by name, with their versions. */
  dropped: Map<string, { sha256: string; part: ManifestPart }>;
  /** How many files were kept without rendering: in kept parts and in kept scopes. */
  keptFiles: number;
  pending: PendingScope[];
  fingerprint: string;
}

/** Runs the pending work of the scopes and adds its files to the tree and its keys to their scopes. */
export async function finishTree(tree: RenderedTree): Promise<void> {
  const started = new Map(tree.pending.filter((pending) => pending.background).map((pending) => [pending, pending.run()]));
  // Awaited below, in order; until then a failure must not count as unhandled.
  for (const running of started.values()) running.catch(() => undefined);
  for (const pending of tree.pending) {
    const made = await (started.get(pending) ?? pending.run());
    tree.files.push(...made);
    pending.scope.keys.push(...made.map((file) => file.key));
  }
  tree.pending = [];
}

/**
 * The manifest part a render scope is listed in. Datasets are grouped by id, 128 to a part, so that a part is a few
 * hundred kilobytes at any catalog size and an edit rewrites one; a collection's slices, the global documents and
 * the web app's shared files each have one.
 */
export function partOfScope(scope: string): string {
  const dataset = /^dataset:(\d+)$/.exec(scope);
  return dataset ? datasetPart(Number(dataset[1])) : scope.replace(':', '-');
}

/** The scope of the documents that are rendered at every build (the OpenAPI document and the discovery files). */
const ALWAYS = 'always';

type ComputedRoute = Exclude<CatalogRoute, { route: 'openapi' }>;

/**
 * Renders the tree in scopes: one per dataset (its detail, by-id, file and schema documents), one per collection
 * (its listing slices and tags), and the global documents. A scope whose inputs hash the same as in the previous
 * build keeps its files without rendering, and a manifest part all of whose scopes are kept is not even read:
 * that is what makes a one-dataset edit of a large catalog quick.
 */
export function renderTree(index: CatalogIndex, options: RenderTreeOptions): RenderedTree {
  const context = createRenderContext(index);
  const { site } = options;
  const stac = !options.skipStac;
  const previous = options.previous;
  const sameCode = previous?.root.fingerprint === options.fingerprint;
  const contextHash = sha256(JSON.stringify([index.settings, index.model.formats, index.model.storageLocations]));

  interface Scope {
    name: string;
    hash: string;
    render: () => { files: TreeFile[]; later?: () => Promise<TreeFile[]>; background?: boolean };
  }
  const byPart = new Map<string, Scope[]>();
  const addScope = (name: string, inputs: string, routes: () => ComputedRoute[], extras?: () => ScopeExtras, stacFiles?: () => TreeFile[]) => {
    const render = () => {
      const files: TreeFile[] = [];
      for (const route of routes()) {
        const key = fileKeyForRoute(route);
        if (key === undefined) continue;
        const answer = answerCatalogRoute(context, route);
        files.push({ key, body: serializeJson(answer.body), type: answer.problem ? PROBLEM_CONTENT_TYPE : 'application/json' });
      }
      const extra = extras?.();
      files.push(...(extra?.files ?? []), ...(stac && stacFiles ? stacFiles() : []));
      return { files, later: extra?.later, background: extra?.background };
    };
    const part = partOfScope(name);
    if (!byPart.has(part)) byPart.set(part, []);
    byPart.get(part)!.push({ name, hash: sha256(`${contextHash}\n${inputs}`), render });
  };

  if (site) {
    addScope('full-text', site.search.inputs, () => [], site.search.extras);
    addScope('site-assets', site.assets.inputs, () => [], site.assets.extras);
  }
  const collectionHashes: string[] = [];
  const entries = [...index.collections.values()];
  const removals = options.removals ?? [];
  const removalsOf = Map.groupBy(removals.filter((removal) => removal.kind !== 'collection'), collectionOfRemoval);
  entries.forEach((entry, order) => {
    const { datasets, ...header } = entry.collection;
    const headerJson = JSON.stringify(header);
    const datasetHashes = datasets.map((dataset) => options.datasetHashes.get(dataset.id) ?? sha256(JSON.stringify(dataset)));
    // The collection's DCAT page links the next collection's: which one it is belongs to its inputs.
    const next = entries[order + 1]?.collection;
    const removed = removalsOf.get(entry.collection.slug) ?? [];
    const collectionInputs = `${headerJson}\n${options.searchSliceTerms}\nnext:${next?.slug ?? ''}\nremoved:${JSON.stringify(removed)}\n${datasetHashes.join('\n')}`;
    collectionHashes.push(sha256(collectionInputs));
    addScope(`collection:${entry.collection.slug}`, collectionInputs, () => listCollectionRoutes(entry, options.searchSliceTerms), withFiles(site && (() => site.collection(entry)), () => [renderDcatCollectionFile(context, entry.collection, next), renderCollectionFeed(context, entry.collection, removed)]), () => stacCollectionFiles(context, entry.collection));
    datasets.forEach((dataset, position) => {
      addScope(`dataset:${dataset.id}`, `${headerJson}\n${datasetHashes[position]}`, () => listDatasetRoutes(entry.collection, dataset, index), site && (() => site.dataset(entry.collection, dataset)), () => stacDatasetFiles(context, entry.collection, dataset));
    });
  });
  addScope('global', `${collectionHashes.join('\n')}\nremoved:${sha256(JSON.stringify(removals))}`, listGlobalRoutes, withFiles(site?.global, () => [renderDcatFile(context), renderCatalogFeed(context, removals)]), () => stacGlobalFiles(context));
  // Read from every dataset, written by DuckDB: a part of its own, so that the global documents need not wait for it.
  // Each collection's rows are kept in the cache under the hash of its inputs and the code: an edit renders one.
  const downloadParts = options.downloadsCacheDir === undefined ? undefined : {
    dir: options.downloadsCacheDir,
    keys: new Map(entries.map((entry, order) => [entry.collection.slug, sha256(`${options.fingerprint}\n${collectionHashes[order]}`)])),
  };
  addScope('downloads', collectionHashes.join('\n'), () => [], () => ({ files: [], later: () => renderCatalogDownloads(context, downloadParts), background: true }));
  // Cheap, and read from the whole index: rendered at every build, so their hash never matches.
  const always = () => ({ files: [{ key: 'api/openapi/index.json', body: serializeJson(createCatalogOpenApiDocument(index.settings.baseUrl)), type: 'application/json' }, ...renderDiscoveryFiles(index)] });
  byPart.set(ALWAYS, [{ name: ALWAYS, hash: '', render: always }]);

  const files: TreeFile[] = [];
  const parts = new Map<string, PartPlan>();
  const pending: PendingScope[] = [];
  let keptFiles = 0;
  for (const [name, scopes] of byPart) {
    const inputs = sha256(scopes.map((scope) => `${scope.name}\t${scope.hash}`).join('\n'));
    const ref = previous && Object.hasOwn(previous.root.parts, name) ? previous.root.parts[name] : undefined;
    if (ref && sameCode && ref.inputs === inputs && name !== ALWAYS) {
      parts.set(name, { kept: ref });
      keptFiles += ref.files;
      continue;
    }
    const before = ref ? previous!.readPart(ref.sha256) : undefined;
    const planned = new Map<string, RenderedScope>();
    for (const scope of scopes) {
      const old = sameCode && before && Object.hasOwn(before.scopes, scope.name) ? before.scopes[scope.name] : undefined;
      if (old && old.hash === scope.hash && scope.hash !== '') {
        planned.set(scope.name, { hash: scope.hash, kept: old.files, keys: [] });
        keptFiles += Object.keys(old.files).length;
        continue;
      }
      const made = scope.render();
      const rendered: RenderedScope = { hash: scope.hash, keys: made.files.map((file) => file.key) };
      files.push(...made.files);
      if (made.later) pending.push({ scope: rendered, run: made.later, ...(made.background ? { background: true } : {}) });
      planned.set(scope.name, rendered);
    }
    parts.set(name, { inputs, scopes: planned, ...(before ? { previous: before, previousSha256: ref!.sha256 } : {}) });
  }
  const dropped = new Map<string, { sha256: string; part: ManifestPart }>();
  for (const [name, ref] of Object.entries(previous?.root.parts ?? {})) {
    if (!parts.has(name)) dropped.set(name, { sha256: ref.sha256, part: previous!.readPart(ref.sha256) });
  }
  return { files, parts, dropped, keptFiles, pending, fingerprint: options.fingerprint };
}

/** A scope's extras with more files of its own. */
function withFiles(extras: (() => ScopeExtras) | undefined, files: () => TreeFile[]): () => ScopeExtras {
  return () => {
    const made = extras?.();
    return { files: [...(made?.files ?? []), ...files()], ...(made?.later ? { later: made.later } : {}) };
  };
}

function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}
