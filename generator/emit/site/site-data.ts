import type { CatalogIndex } from '../../../core/catalog-index.ts';
import { listVersions } from '../../../core/api/catalog/resources.ts';
import type { CollectionModel, DatasetModel } from '../../../core/model.ts';
import { datasetPath, querySourcesPath } from '../../../core/site/paths.ts';
import { serializeJson, type TreeFile } from '../../../core/static-files.ts';
import type { SiteDatasetList, SiteQueryFile, SiteQuerySources } from '../../../schemas/site.ts';
import type { SearchRecord } from './search-index.ts';

/** Key of the compact list of every dataset that the SQL console's picker reads. */
export const DATASET_LIST_KEY = '_site/datasets.json';

/** The formats the query service reads (query/sources.ts). */
const QUERYABLE = new Set(['geoparquet']);

/** `query-sources.json` of a dataset: its files, their queryable versions (newest first) and columns. */
export function renderQuerySources(index: CatalogIndex, collection: CollectionModel, dataset: DatasetModel): TreeFile {
  const files: SiteQueryFile[] = dataset.files.map((file) => {
    const sources = file.formats.flatMap((link) => {
      const format = index.formatsById.get(link.format_id);
      return format && QUERYABLE.has(format.format_type) ? link.sources.filter((source) => source.source_type === 'file' && source.url).map((source) => ({ source, format })) : [];
    });
    const order = listVersions(sources.map(({ source }) => source));
    sources.sort((a, b) => order.indexOf(a.source.version) - order.indexOf(b.source.version));
    return {
      id: file.id,
      slug: file.slug,
      name: file.name,
      versions: sources.map(({ source, format }) => {
        const columns = source.metadata?.columns ?? [];
        return {
          file_source_id: source.id,
          version: source.version,
          format: format.name,
          url: source.url!,
          bytes: source.metadata?.size_bytes ?? null,
          row_count: source.metadata?.feature_count ?? null,
          geometry_column: columns.find((column) => column.type === 'geometry')?.name ?? null,
          columns: columns.map((column) => ({ name: column.name, type: column.type })),
        };
      }),
    };
  });
  const body: SiteQuerySources = {
    collection: { id: collection.id, slug: collection.slug, name: collection.name },
    dataset: { id: dataset.id, slug: dataset.slug, name: dataset.name },
    files,
  };
  return { key: querySourcesPath(collection.slug, dataset.slug).slice(1), body: serializeJson(body), type: 'application/json' };
}

/** `/_site/datasets.json`: every dataset as `[collection slug, dataset slug, name, collection name]`, by name. */
export function renderDatasetList(index: CatalogIndex): TreeFile {
  const datasets: SiteDatasetList['datasets'] = index.model.collections
    .flatMap((collection) => collection.datasets.map((dataset): SiteDatasetList['datasets'][number] => [collection.slug, dataset.slug, dataset.name, collection.name]))
    .sort((a, b) => (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0));
  return { key: DATASET_LIST_KEY, body: serializeJson({ datasets }), type: 'application/json' };
}

/** What the full-text search indexes of each dataset: text, tags, file names and column names. */
export function listSearchRecords(index: CatalogIndex): SearchRecord[] {
  return index.model.collections.flatMap((collection) =>
    collection.datasets.map((dataset) => ({
      id: dataset.id,
      url: datasetPath(collection.slug, dataset.slug),
      title: dataset.name,
      collection: collection.name,
      description: dataset.description ?? '',
      tags: Object.values(dataset.tags).flat(),
      files: dataset.files.map((file) => file.name),
      columns: [...new Set(dataset.files.flatMap((file) => file.formats.flatMap((link) => link.sources.flatMap((source) => (source.metadata?.columns ?? []).map((column) => column.name)))))],
    })),
  );
}
