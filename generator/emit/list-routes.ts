import { DEFAULT_COLUMN_LIMIT, DEFAULT_LIST_LIMIT } from '../../core/constants.ts';
import type { CollectionEntry } from '../../core/catalog-index.ts';
import type { CollectionModel, DatasetModel } from '../../core/model.ts';
import { selectDatasets } from '../../core/api/catalog/listing.ts';
import { listVersions, pickSchemaSource } from '../../core/api/catalog/resources.ts';
import type { CatalogIndex } from '../../core/catalog-index.ts';
import type { CatalogRoute, ListingParams } from '../../core/api/catalog/resolve.ts';
import { tokenize } from '../../core/text.ts';
import { foldTagValue } from '../../core/tag-filters.ts';

type ComputedRoute = Exclude<CatalogRoute, { route: 'openapi' }>;

/** Routes whose documents depend on the whole catalog. */
export function listGlobalRoutes(): ComputedRoute[] {
  return [
    { route: 'root' },
    { route: 'health' },
    { route: 'collections' },
    { route: 'collections', params: { include: 'datasets' } },
    { route: 'collections', params: { include: 'datasets,files' } },
    { route: 'datasets' },
    { route: 'stats' },
  ];
}

/**
 * Prebuilt slices of one collection (DESIGN.md "Static tree"): every page of the default listing, every page of
 * every tag value, the first page of up to `searchTerms` search terms, first-page variants, and the tags routes.
 */
export function listCollectionRoutes(entry: CollectionEntry, searchTerms: number): ComputedRoute[] {
  const slug = entry.collection.slug;
  const routes: ComputedRoute[] = [];
  const everyPage = (params: ListingParams) => {
    const total = selectDatasets(entry, params).length;
    for (let offset = 0; offset === 0 || offset < total; offset += DEFAULT_LIST_LIMIT) {
      routes.push({ route: 'collection', slug, params: offset ? { ...params, offset } : params });
    }
  };
  everyPage({});
  for (const [key, values] of Object.entries(entry.tags)) {
    for (const value of new Set(values.map(foldTagValue))) everyPage({ tag_filters: new Map([[key, [value]]]) });
  }
  for (const term of pickSearchTerms(entry.collection, searchTerms)) {
    routes.push({ route: 'collection', slug, params: { search: term } });
  }
  routes.push(
    { route: 'collection', slug, params: { include: 'files' } },
    { route: 'collection', slug, params: { include_urls: true } },
    { route: 'collection', slug, params: { omit: 'description' } },
    { route: 'tags', collectionSlug: slug },
    ...Object.keys(entry.tags).map((tag_key): ComputedRoute => ({ route: 'tags', collectionSlug: slug, params: { tag_key } })),
  );
  return routes;
}

/**
 * The search terms worth prebuilding: the words that occur in the most dataset names and tags of the
 * collection (at least three letters), most frequent first, ties alphabetical.
 */
export function pickSearchTerms(collection: CollectionModel, count: number): string[] {
  const frequency = new Map<string, number>();
  for (const dataset of collection.datasets) {
    const words = new Set(tokenize(`${dataset.name} ${Object.values(dataset.tags).flat().join(' ')}`).filter((word) => word.length >= 3));
    for (const word of words) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  }
  return [...frequency.entries()]
    .sort(([a, countA], [b, countB]) => countB - countA || (a < b ? -1 : 1))
    .slice(0, count)
    .map(([word]) => word);
}

/** Routes of one dataset: detail with and without URLs, by id, and for each file its metadata and schemas. */
export function listDatasetRoutes(collection: CollectionModel, dataset: DatasetModel, index: CatalogIndex): ComputedRoute[] {
  const base = { collectionSlug: collection.slug, datasetSlug: dataset.slug };
  const routes: ComputedRoute[] = [
    { route: 'dataset', ...base },
    { route: 'dataset', ...base, params: { include_urls: true } },
    { route: 'dataset-by-id', id: dataset.id },
  ];
  for (const file of dataset.files) {
    const at = { ...base, fileSlug: file.slug };
    routes.push({ route: 'file', ...at }, { route: 'schema', ...at });
    const latest = pickSchemaSource(file, index);
    // The default schema document already holds the latest version; `?version=<latest>` is left to the server.
    for (const version of listVersions(file.formats.flatMap((link) => link.sources))) {
      if (version !== latest?.source.version) routes.push({ route: 'schema', ...at, params: { version } });
    }
    // Column pages are prebuilt where paging splits the columns; with one page or less, the default document has them all.
    const columns = latest?.source.metadata?.columns?.length ?? 0;
    for (let offset = 0; columns > DEFAULT_COLUMN_LIMIT && offset < columns; offset += DEFAULT_COLUMN_LIMIT) {
      routes.push({ route: 'schema', ...at, params: { column_offset: offset, column_limit: DEFAULT_COLUMN_LIMIT } });
    }
  }
  return routes;
}
