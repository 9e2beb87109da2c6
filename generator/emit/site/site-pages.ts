import type { CollectionEntry } from '../../../core/catalog-index.ts';
import { DEFAULT_LIST_LIMIT, MAX_COLUMN_LIMIT } from '../../../core/constants.ts';
import type { CollectionModel, DatasetModel } from '../../../core/model.ts';
import { answerCatalogRoute } from '../../../core/api/catalog/answer.ts';
import type { RenderContext } from '../../../core/api/catalog/resources.ts';
import { apiPathFor, collectionPath, datasetPath, filePath, pageKey, SITE_PATHS, slugifyTag, tagPath } from '../../../core/site/paths.ts';
import { foldTagValue } from '../../../core/tag-filters.ts';
import { featureLayerId, hasFeatureLayer } from '../../../core/api/ogc/layers.ts';
import { stacStaticPath } from '../../../core/api/stac/documents.ts';
import { describeCatalogJsonLd, describeDatasetJsonLd, serializeJsonLd } from '../../../core/site/json-ld.ts';
import type { DatasetSurfaces } from '../../../src/view-types.ts';
import type { PageView, SchemaDoc, ViewProps } from '../../../src/view-types.ts';

/** A page to render: its key in the static tree and its view. */
export interface PageJob {
  key: string;
  page: PageView;
}

/** Settings written into the pages at build time. */
export interface SitePageSettings {
  queryOrigin: string;
  browserSqlLimitBytes: number;
}

type ComputedRoute = Parameters<typeof answerCatalogRoute>[1];

function answer<T>(context: RenderContext, route: ComputedRoute): T {
  const result = answerCatalogRoute(context, route);
  if (result.problem) throw new Error(`the page of ${JSON.stringify(route)} has no document: ${JSON.stringify(result.body)}`);
  return result.body as T;
}

/** Pages that depend on the whole catalog: home, search, console, API and the 404 page. */
export function listGlobalPages(context: RenderContext, settings: SitePageSettings): PageJob[] {
  const collections = answer<ViewProps['home']['collections']>(context, { route: 'collections' });
  const tags: ViewProps['home']['tags'] = {};
  for (const collection of collections) tags[collection.slug] = answer<{ tags: ViewProps['home']['tags'][string] }>(context, { route: 'tags', collectionSlug: collection.slug }).tags;
  const stats = answer<ViewProps['home']['stats']>(context, { route: 'stats' });
  return [
    { key: pageKey(SITE_PATHS.home), page: { view: 'home', props: { collections, stats, tags, jsonLd: serializeJsonLd(describeCatalogJsonLd(context.index)) } } },
    { key: pageKey(SITE_PATHS.search), page: { view: 'search-results', props: {} } },
    { key: pageKey(SITE_PATHS.console), page: { view: 'console', props: settings } },
    { key: pageKey(SITE_PATHS.developers), page: { view: 'developers', props: { queryOrigin: settings.queryOrigin } } },
    { key: pageKey(SITE_PATHS.notFound), page: { view: 'not-found', props: {} } },
  ];
}

/** Every page of a collection's listing, and every page of each of its tag values. */
export function listCollectionPages(context: RenderContext, entry: CollectionEntry): PageJob[] {
  const slug = entry.collection.slug;
  const tags = answer<{ tags: ViewProps['collection']['tags'] }>(context, { route: 'tags', collectionSlug: slug }).tags;
  const jobs: PageJob[] = [];
  const everyPage = (tag: { key: string; value: string } | undefined) => {
    const params = tag ? { tag_filters: new Map([[tag.key, [foldTagValue(tag.value)]]]) } : {};
    for (let pageNumber = 1, pageCount = 1; pageNumber <= pageCount; pageNumber += 1) {
      const offset = (pageNumber - 1) * DEFAULT_LIST_LIMIT;
      const page = answer<ViewProps['collection']['page']>(context, { route: 'collection', slug, params: offset ? { ...params, offset } : params });
      pageCount = Math.max(1, Math.ceil(page.total / DEFAULT_LIST_LIMIT));
      const path = tag ? tagPath(slug, tag.key, tag.value, pageNumber) : collectionPath(slug, pageNumber);
      const query = new URLSearchParams({ ...(tag ? { tag_filters: `${tag.key}:${tag.value}` } : {}), ...(offset ? { offset: String(offset) } : {}) }).toString();
      const json = `${apiPathFor(collectionPath(slug))}${query ? `?${query}` : ''}`;
      jobs.push({ key: pageKey(path), page: { view: 'collection', props: { page, tags, pageNumber, pageCount, json, ...(tag ? { tag } : {}) } } });
    }
  };
  everyPage(undefined);
  for (const [key, values] of Object.entries(tags)) {
    const seen = new Set<string>();
    for (const value of values) {
      if (seen.has(slugifyTag(value))) continue;
      seen.add(slugifyTag(value));
      everyPage({ key, value });
    }
  }
  return jobs;
}

/** A dataset's page and the page of each of its files. */
export function listDatasetPages(context: RenderContext, collection: CollectionModel, dataset: DatasetModel, settings: Pick<SitePageSettings, 'queryOrigin'>): PageJob[] {
  const base = { collectionSlug: collection.slug, datasetSlug: dataset.slug };
  const detail = answer<ViewProps['dataset']['detail']>(context, { route: 'dataset', ...base, params: { include_urls: true } });
  const surfaces = listSurfaces(context, collection, dataset, settings.queryOrigin);
  const jsonLd = serializeJsonLd(describeDatasetJsonLd(context, collection, dataset));
  const jobs: PageJob[] = [{ key: pageKey(datasetPath(collection.slug, dataset.slug)), page: { view: 'dataset', props: { detail, surfaces, jsonLd } } }];
  for (const file of dataset.files) {
    const at = { ...base, fileSlug: file.slug };
    const fileDoc = answer<ViewProps['file']['file']>(context, { route: 'file', ...at });
    jobs.push({ key: pageKey(filePath(collection.slug, dataset.slug, file.slug)), page: { view: 'file', props: { file: fileDoc, schema: readWholeSchema(context, at) } } });
  }
  return jobs;
}

/**
 * The dataset's STAC Collection and each file's STAC Item (static files, so they work on any host) and OGC
 * feature collection (served with the query service, so at its origin).
 */
function listSurfaces(context: RenderContext, collection: CollectionModel, dataset: DatasetModel, queryOrigin: string): DatasetSurfaces {
  const files: DatasetSurfaces['files'] = {};
  for (const file of dataset.files) {
    const features = hasFeatureLayer(context.index, file) ? `${queryOrigin}/features/collections/${featureLayerId(collection, dataset, file)}` : undefined;
    files[file.slug] = { stac: stacStaticPath(collection, dataset, file), ...(features ? { features } : {}) };
  }
  return { stac: stacStaticPath(collection, dataset), files };
}

/** The schema document of a file's latest version with every column, read page by page. */
function readWholeSchema(context: RenderContext, at: { collectionSlug: string; datasetSlug: string; fileSlug: string }): SchemaDoc {
  const first = answer<SchemaDoc>(context, { route: 'schema', ...at, params: { column_offset: 0, column_limit: MAX_COLUMN_LIMIT } });
  const schema = first.schema;
  if (!schema) return first;
  const columns = [...schema.columns];
  while (columns.length < (schema.total_columns ?? 0)) {
    const next = answer<SchemaDoc>(context, { route: 'schema', ...at, params: { column_offset: columns.length, column_limit: MAX_COLUMN_LIMIT } });
    if (!next.schema || next.schema.columns.length === 0) break;
    columns.push(...next.schema.columns);
  }
  return { ...first, schema: { ...schema, columns } };
}
