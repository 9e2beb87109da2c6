import { DEFAULT_LIST_LIMIT } from '../../constants.ts';
import type { CatalogIndex } from '../../catalog-index.ts';
import { derivedKey } from '../../derived.ts';
import type { CollectionModel } from '../../model.ts';
import type { ListingParams } from '../catalog/resolve.ts';
import { selectDatasets } from '../catalog/listing.ts';
import { renderDatasetListItem, type RenderContext } from '../catalog/resources.ts';
import type { SearchDocument } from '../../search.ts';
import { foldText } from '../../text.ts';
import type { DatasetListItem } from '../../../schemas/dataset.ts';

/** A dataset found across collections: its listing item and the slug of its collection, for get_dataset. */
export type CatalogSearchHit = DatasetListItem & { collection_slug: string };

/** One page of a search over every collection. */
export interface CatalogSearchPage {
  datasets: CatalogSearchHit[];
  total: number;
  limit: number;
  offset: number;
}

/** Every collection's search documents in one listing order (folded name, then id), made once per build. */
const CATALOG_DOCUMENTS = derivedKey<SearchDocument[]>('search documents in listing order');

function listCatalogDocuments(index: CatalogIndex): SearchDocument[] {
  let documents = index.derived.get(CATALOG_DOCUMENTS);
  if (!documents) {
    // The order of build-model's sortByNameThenId, which each collection's documents already follow.
    documents = [...index.collections.values()]
      .flatMap((entry) => entry.documents)
      .map((document) => ({ document, name: foldText(document.dataset.name) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.document.dataset.id - b.document.dataset.id))
      .map(({ document }) => document);
    index.derived.set(CATALOG_DOCUMENTS, documents);
  }
  return documents;
}

/**
 * Tag keys of the filters that no collection uses, so that a misspelt key is refused as the collection listing
 * refuses it, rather than silently finding nothing.
 */
export function findUnusedTagKeys(index: CatalogIndex, params: ListingParams): string[] {
  const keys = [...(params.tag_filters?.keys() ?? [])];
  return keys.filter((key) => ![...index.collections.values()].some((entry) => Object.hasOwn(entry.tags, key)));
}

/**
 * The datasets of every collection that match the search and tag filters, one page of them: the collection
 * listing's own selection (core/api/catalog/listing.ts) run over all collections at once, so words fold, match and rank
 * as they do in one collection (score, then folded name, then id). Each hit names its collection's slug.
 */
export function renderCatalogSearchPage(context: RenderContext, params: ListingParams): CatalogSearchPage {
  const limit = params.limit ?? DEFAULT_LIST_LIMIT;
  const offset = params.offset ?? 0;
  const selected = selectDatasets({ documents: listCatalogDocuments(context.index) }, params);
  const options = { omitDescription: false, includeFiles: false, includeUrls: false };
  const datasets = selected.slice(offset, offset + limit).map((dataset) => {
    const collection: CollectionModel = context.index.datasetsById.get(dataset.id)!.collection;
    return { ...renderDatasetListItem(dataset, collection, context, options), collection_slug: collection.slug };
  });
  return { datasets, total: selected.length, limit, offset };
}
