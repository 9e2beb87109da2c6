import type { CatalogIndex, CollectionEntry } from '../../core/catalog-index.ts';
import type { CollectionModel, DatasetModel } from '../../core/model.ts';
import { CATALOG_RENDERERS } from '../../core/api/catalog/answer.ts';
import type { Prebuilt, RenderedRoute } from '../../core/api/catalog/prebuilt.ts';

/** The prebuilt documents of each route, in the order of the table, as the loose union the scopes below narrow. */
const PREBUILT = Object.values(CATALOG_RENDERERS).map((parts) => parts.prebuilt as Prebuilt<RenderedRoute['route']>);

/** Routes whose documents depend on the whole catalog. */
export function listGlobalRoutes(): RenderedRoute[] {
  return PREBUILT.flatMap((prebuilt) => (prebuilt.scope === 'global' ? prebuilt.list() : []));
}

/** Prebuilt slices of one collection: its listing pages and its tags (core/api/catalog/prebuilt.ts). */
export function listCollectionRoutes(entry: CollectionEntry, searchTerms: number): RenderedRoute[] {
  return PREBUILT.flatMap((prebuilt) => (prebuilt.scope === 'collection' ? prebuilt.list(entry, searchTerms) : []));
}

/** Routes of one dataset: its own documents, then those of each file (metadata and schemas), a file at a time. */
export function listDatasetRoutes(collection: CollectionModel, dataset: DatasetModel, index: CatalogIndex): RenderedRoute[] {
  const routes = PREBUILT.flatMap((prebuilt) => (prebuilt.scope === 'dataset' ? prebuilt.list(collection, dataset) : []));
  for (const file of dataset.files) {
    routes.push(...PREBUILT.flatMap((prebuilt) => (prebuilt.scope === 'file' ? prebuilt.list({ collection, dataset, file }, index) : [])));
  }
  return routes;
}
