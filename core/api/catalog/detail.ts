import { findFile, type CatalogIndex } from '../../catalog-index.ts';
import type { CollectionModel, DatasetModel, FileModel } from '../../model.ts';
import type { SchemaParams } from './resolve.ts';
import { describeVersionChanges } from './version-changes.ts';
import { pickAbout } from '../../../schemas/about.ts';
import type { ColumnSchema } from '../../../schemas/column.ts';
import { listVersions, pickSchemaSource, renderCollection, renderDatasetFields, renderFile, renderSource, summarizeMetadata, type RenderContext } from './resources.ts';

/** A dataset located by collection and dataset slug, or the reason it was not found. */
export type DatasetLookup = { ok: true; collection: CollectionModel; dataset: DatasetModel } | { ok: false; detail: string };

/** Finds a dataset by slugs, explaining which part is missing. */
export function lookupDataset(index: CatalogIndex, collectionSlug: string, datasetSlug: string): DatasetLookup {
  const entry = index.collections.get(collectionSlug);
  if (!entry) return { ok: false, detail: `There is no collection "${collectionSlug}". GET /api/collections lists them.` };
  const dataset = entry.datasetsBySlug.get(datasetSlug);
  if (!dataset) return { ok: false, detail: `Collection "${collectionSlug}" has no dataset "${datasetSlug}". GET /api/collections/${collectionSlug} lists them.` };
  return { ok: true, collection: entry.collection, dataset };
}

/** Dataset detail: the collection and the dataset with every file, format and source. */
export function renderDatasetDetail(collection: CollectionModel, dataset: DatasetModel, context: RenderContext, includeUrls: boolean) {
  return {
    links: {
      self: context.links.url({ route: 'dataset', collectionSlug: collection.slug, datasetSlug: dataset.slug, params: { include_urls: includeUrls } }),
      collection: context.links.collection(collection.slug),
      by_id: context.links.datasetById(dataset.id),
      ...(includeUrls ? {} : { with_urls: context.links.url({ route: 'dataset', collectionSlug: collection.slug, datasetSlug: dataset.slug, params: { include_urls: true } }) }),
    },
    collection: renderCollection(collection, context),
    dataset: {
      ...renderDatasetFields(dataset, collection, context),
      ...pickAbout(dataset),
      files: dataset.files.map((file) => renderFile(file, dataset, collection, context, { includeUrls })),
    },
  };
}

/** `GET /api/datasets/{id}`: the dataset with files, and a link to its collection. No collection object. */
export function renderDatasetById(collection: CollectionModel, dataset: DatasetModel, context: RenderContext) {
  return {
    links: {
      self: context.links.datasetById(dataset.id),
      collection: context.links.collection(collection.slug),
      dataset: context.links.dataset(collection.slug, dataset.slug),
    },
    dataset: {
      ...renderDatasetFields(dataset, collection, context),
      ...pickAbout(dataset),
      files: dataset.files.map((file) => renderFile(file, dataset, collection, context, { includeUrls: false })),
    },
  };
}

/** File metadata: formats, versions, storage and download links; source URLs always included. */
export function renderFileResponse(collection: CollectionModel, dataset: DatasetModel, file: FileModel, context: RenderContext) {
  return {
    links: {
      self: context.links.file(collection.slug, dataset.slug, file.slug),
      schema: context.links.schema(collection.slug, dataset.slug, file.slug),
      dataset: context.links.dataset(collection.slug, dataset.slug),
      collection: context.links.collection(collection.slug),
    },
    collection: renderCollection(collection, context),
    dataset: { ...renderDatasetFields(dataset, collection, context), ...pickAbout(dataset) },
    file: renderFile(file, dataset, collection, context, { includeUrls: true }),
    version_changes: describeVersionChanges(file, context.index),
  };
}

/** Finds a file by slugs, explaining which part is missing. */
export function lookupFile(index: CatalogIndex, collectionSlug: string, datasetSlug: string, fileSlug: string) {
  const found = lookupDataset(index, collectionSlug, datasetSlug);
  if (!found.ok) return found;
  const file = findFile(found.dataset, fileSlug);
  if (!file) return { ok: false as const, detail: `Dataset "${datasetSlug}" has no file "${fileSlug}". Its detail route lists its files.` };
  return { ...found, file };
}

/**
 * The schema route: the versions of the file, the selected one, and the data dictionary of its best
 * schema-capable source, paged when `column_limit` is set. `undefined` when the version does not exist.
 */
export function renderSchemaResponse(collection: CollectionModel, dataset: DatasetModel, file: FileModel, params: SchemaParams, context: RenderContext) {
  const versions = listVersions(file.formats.flatMap((link) => link.sources));
  if (params.version !== undefined && !versions.includes(params.version)) return undefined;
  const picked = pickSchemaSource(file, context.index, params.version);
  const selectedVersion = params.version ?? picked?.source.version ?? null;
  const allColumns = picked?.source.metadata?.columns ?? [];
  const paging = params.column_limit === undefined
    ? undefined
    : {
        total_columns: allColumns.length,
        column_offset: params.column_offset ?? 0,
        column_limit: params.column_limit,
        has_more: (params.column_offset ?? 0) + params.column_limit < allColumns.length,
      };
  const columns = paging ? allColumns.slice(paging.column_offset, paging.column_offset + paging.column_limit) : allColumns;
  const schema = picked ? renderSchemaObject(picked, file, dataset, collection, context, columns, allColumns.length) : null;
  return {
    links: {
      self: context.links.url({ route: 'schema', collectionSlug: collection.slug, datasetSlug: dataset.slug, fileSlug: file.slug, params }),
      file: context.links.file(collection.slug, dataset.slug, file.slug),
      dataset: context.links.dataset(collection.slug, dataset.slug),
      collection: context.links.collection(collection.slug),
    },
    collection: renderCollection(collection, context),
    dataset: renderDatasetFields(dataset, collection, context),
    file: { id: file.id, dataset_id: file.dataset_id, slug: file.slug, name: file.name, description: file.description, layer_name: file.layer_name },
    versions,
    selected_version: selectedVersion,
    schema: schema && paging ? { ...schema, ...paging } : schema,
    ...paging,
  };
}

function renderSchemaObject(
  picked: NonNullable<ReturnType<typeof pickSchemaSource>>,
  file: FileModel,
  dataset: DatasetModel,
  collection: CollectionModel,
  context: RenderContext,
  columns: ColumnSchema[],
  columnCount: number,
) {
  const { source, link } = picked;
  const format = context.index.formatsById.get(link.format_id)!;
  const rendered = renderSource(source, file, dataset, collection, context, { includeUrls: true });
  const storage = source.storage_location_id === null ? undefined : context.index.storageById.get(source.storage_location_id);
  const metadata = summarizeMetadata(source.metadata);
  return {
    version: source.version,
    format_type: format.format_type,
    format_name: format.name,
    source_id: source.id,
    source: rendered,
    source_metadata: metadata,
    storage_location: storage ?? null,
    summary: {
      columnCount,
      featureCount: metadata?.feature_count ?? null,
      geometryType: metadata?.geometry_type ?? null,
      invalidGeometryCount: metadata?.invalid_geometry_count ?? null,
      qualityCheckPassed: metadata?.quality_check_passed ?? null,
      ...(metadata?.invalid_geometry_reasons === undefined ? {} : { invalidGeometryReasons: metadata.invalid_geometry_reasons }),
      columnsHash: metadata?.columns_hash ?? null,
    },
    columns,
  };
}
