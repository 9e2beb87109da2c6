import type { CatalogIndex } from '../../../core/catalog-index.ts';
import { listVersions } from '../../../core/api/catalog/resources.ts';
import type { CollectionModel, DatasetModel } from '../../../core/model.ts';
import { datasetPath, querySourcesPath } from '../../../core/site/paths.ts';
import { serializeJson, type TreeFile } from '../../../core/static-files.ts';
import type { SiteQueryFile, SiteQuerySources } from '../../../schemas/site.ts';
import type { SearchRecord } from './search-index.ts';

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
