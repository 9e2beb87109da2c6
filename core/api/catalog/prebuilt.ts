import { DEFAULT_COLUMN_LIMIT, DEFAULT_LIST_LIMIT } from '../../constants.ts';
import type { CatalogIndex, CollectionEntry } from '../../catalog-index.ts';
import type { CollectionModel, DatasetModel, FileModel } from '../../model.ts';
import { foldTagValue } from '../../tag-filters.ts';
import { tokenize } from '../../text.ts';
import { selectDatasets } from './listing.ts';
import type { CatalogRoute, ListingParams } from './resolve.ts';
import { listVersions, pickSchemaSource } from './resources.ts';

/** A catalog route the renderers answer: every one but the OpenAPI document, which is a build artefact of the schemas. */
export type RenderedRoute = Exclude<CatalogRoute, { route: 'openapi' }>;
/** The routes of one name. */
type RoutesOf<N extends RenderedRoute['route']> = Extract<RenderedRoute, { route: N }>[];

/** A file of a dataset, with the collection and dataset it is in. */
export interface FilePlace {
  collection: CollectionModel;
  dataset: DatasetModel;
  file: FileModel;
}

/**
 * The documents of a route that the build writes as files (DESIGN.md "Static tree"), and the scope they belong
 * to: the build renders a scope again only when its inputs change (generator/emit/render-tree.ts). `file` routes
 * are rendered in their dataset's scope, after the dataset's own, a file at a time.
 */
export type Prebuilt<N extends RenderedRoute['route']> =
  | { scope: 'global'; list: () => RoutesOf<N> }
  | { scope: 'collection'; list: (entry: CollectionEntry, searchTerms: number) => RoutesOf<N> }
  | { scope: 'dataset'; list: (collection: CollectionModel, dataset: DatasetModel) => RoutesOf<N> }
  | { scope: 'file'; list: (place: FilePlace, index: CatalogIndex) => RoutesOf<N> };

/**
 * Every page of a collection's default listing, every page of every tag value, the first page of up to
 * `searchTerms` search terms, and the first page with each variant parameter.
 */
export function listCollectionPages(entry: CollectionEntry, searchTerms: number): RoutesOf<'collection'> {
  const slug = entry.collection.slug;
  const routes: RoutesOf<'collection'> = [];
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
  );
  return routes;
}

/** A collection's tags, and the values of each tag key. */
export function listCollectionTags(entry: CollectionEntry): RoutesOf<'tags'> {
  const collectionSlug = entry.collection.slug;
  return [{ route: 'tags', collectionSlug }, ...Object.keys(entry.tags).map((tag_key): RoutesOf<'tags'>[number] => ({ route: 'tags', collectionSlug, params: { tag_key } }))];
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

/**
 * A file's schema documents: the default (which holds the latest version), each older version, and every page of
 * columns where paging splits them; with one page or less, the default document has them all.
 */
export function listSchemaDocuments({ collection, dataset, file }: FilePlace, index: CatalogIndex): RoutesOf<'schema'> {
  const at = { collectionSlug: collection.slug, datasetSlug: dataset.slug, fileSlug: file.slug };
  const routes: RoutesOf<'schema'> = [{ route: 'schema', ...at }];
  const latest = pickSchemaSource(file, index);
  // `?version=<latest>` is left to the server: the default document already holds it.
  for (const version of listVersions(file.formats.flatMap((link) => link.sources))) {
    if (version !== latest?.source.version) routes.push({ route: 'schema', ...at, params: { version } });
  }
  const columns = latest?.source.metadata?.columns?.length ?? 0;
  for (let offset = 0; columns > DEFAULT_COLUMN_LIMIT && offset < columns; offset += DEFAULT_COLUMN_LIMIT) {
    routes.push({ route: 'schema', ...at, params: { column_offset: offset, column_limit: DEFAULT_COLUMN_LIMIT } });
  }
  return routes;
}
