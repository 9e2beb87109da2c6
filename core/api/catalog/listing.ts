import { DEFAULT_LIST_LIMIT } from '../../constants.ts';
import type { CollectionEntry } from '../../catalog-index.ts';
import type { DatasetModel } from '../../model.ts';
import type { ListingParams } from './resolve.ts';
import { scoreDocument } from '../../search.ts';
import { matchesTagFilters } from '../../tag-filters.ts';
import type { CollectionDatasetsPage, CollectionListItem } from '../../../schemas/listing.ts';
import { renderCollection, renderDatasetListItem, renderFileSummary, type RenderContext } from './resources.ts';

/**
 * The datasets of a collection that match the search and tag filters, in result order: by score when searching
 * (ties by folded name, then id), otherwise in listing order (folded name, then id). MCP's search_datasets runs it
 * over every collection's documents at once.
 */
export function selectDatasets(entry: Pick<CollectionEntry, 'documents'>, params: ListingParams): DatasetModel[] {
  const filters = params.tag_filters;
  const documents = filters ? entry.documents.filter((document) => matchesTagFilters(document.foldedTags, filters)) : entry.documents;
  if (!params.search) return documents.map((document) => document.dataset);
  const tokens = params.search.split(' ');
  const hits: { dataset: DatasetModel; score: number; order: number }[] = [];
  documents.forEach((document, order) => {
    const score = scoreDocument(document, tokens);
    if (score > 0) hits.push({ dataset: document.dataset, score, order });
  });
  // `order` is the position in listing order, which already sorts by folded name and then id.
  return hits.sort((a, b) => b.score - a.score || a.order - b.order).map((hit) => hit.dataset);
}

/** One page of a collection's datasets, with self/first/prev/next links in canonical form. */
export function renderCollectionPage(entry: CollectionEntry, params: ListingParams, context: RenderContext): CollectionDatasetsPage {
  const { collection } = entry;
  const limit = params.limit ?? DEFAULT_LIST_LIMIT;
  const offset = params.offset ?? 0;
  const selected = selectDatasets(entry, params);
  const options = { omitDescription: params.omit === 'description', includeFiles: params.include === 'files', includeUrls: params.include_urls === true };
  const page = (pageOffset: number) => context.links.url({ route: 'collection', slug: collection.slug, params: { ...params, offset: pageOffset } });
  const links: Record<string, string> = { self: page(offset), first: page(0) };
  if (offset > 0) links.prev = page(Math.max(0, Math.min(offset - limit, lastOffset(selected.length, limit))));
  if (offset + limit < selected.length) links.next = page(offset + limit);
  links.collection = context.links.collection(collection.slug);
  links.tags = context.links.tags(collection.slug);
  return {
    collection: renderCollection(collection, context, true),
    datasets: selected.slice(offset, offset + limit).map((dataset) => renderDatasetListItem(dataset, collection, context, options)),
    total: selected.length,
    limit,
    offset,
    links,
  };
}

function lastOffset(total: number, limit: number): number {
  return total === 0 ? 0 : Math.floor((total - 1) / limit) * limit;
}

/** The tags of a collection, all keys or one; a key the collection does not use (`__proto__` included) gives none. */
export function renderTags(entry: CollectionEntry, tagKey: string | undefined, context: RenderContext) {
  const tags = tagKey === undefined ? entry.tags : Object.hasOwn(entry.tags, tagKey) ? { [tagKey]: entry.tags[tagKey]! } : {};
  return {
    links: {
      self: context.links.url({ route: 'tags', collectionSlug: entry.collection.slug, params: { tag_key: tagKey } }),
      collection: context.links.collection(entry.collection.slug),
    },
    tags,
  };
}

/** `GET /api/collections`, optionally with compact datasets and their files. */
export function renderCollectionList(context: RenderContext, include?: 'datasets' | 'datasets,files'): CollectionListItem[] {
  return context.index.model.collections.map((collection) => ({
    ...renderCollection(collection, context, true),
    ...(include
      ? {
          datasets: collection.datasets.map((dataset) => ({
            id: dataset.id,
            slug: dataset.slug,
            name: dataset.name,
            links: { self: context.links.dataset(collection.slug, dataset.slug) },
            ...(include === 'datasets,files' ? { files: dataset.files.map((file) => renderFileSummary(file, dataset, collection, context, false)) } : {}),
          })),
        }
      : {}),
  }));
}
