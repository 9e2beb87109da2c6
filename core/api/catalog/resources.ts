import type { CatalogIndex } from '../../catalog-index.ts';
import type { CollectionModel, DatasetModel, FileFormatModel, FileModel, SourceModel } from '../../model.ts';
import type { Collection } from '../../../schemas/collection.ts';
import { pickAbout } from '../../../schemas/about.ts';
import type { Dataset, DatasetListItem } from '../../../schemas/dataset.ts';
import type { DatasetFile, DatasetFormat, FileSummary } from '../../../schemas/dataset-file.ts';
import type { FileMetadata } from '../../../schemas/file-metadata.ts';
import type { DatasetSource } from '../../../schemas/source.ts';
import type { Linker } from './links.ts';
import { compareVersionsNewestFirst } from '../../versions.ts';

/** What resource renderers need: the index and a linker. */
export interface RenderContext {
  index: CatalogIndex;
  links: Linker;
}

/** Options of dataset and file rendering. */
export interface ResourceOptions {
  /** Add source `url`s (dataset detail with include_urls=true, file metadata always). */
  includeUrls: boolean;
}

/**
 * Format types whose files the build reads for schemas, best first: DuckDB reads the first two, GDAL turns the
 * others into GeoJSON for it (generator/enrich/inspect-gdal.ts).
 */
export const SCHEMA_FORMAT_ORDER = ['geoparquet', 'geojson', 'shapefile', 'file_geodatabase'] as const;

/**
 * A collection as a resource. `dataset_count` appears in listings only: documents of one dataset leave it out,
 * so adding a dataset does not rewrite every other dataset's documents.
 */
export function renderCollection(collection: CollectionModel, context: RenderContext, withCount = false): Collection {
  return {
    id: collection.id,
    slug: collection.slug,
    name: collection.name,
    ...(collection.description ? { description: collection.description } : {}),
    ...(withCount ? { dataset_count: collection.datasets.length } : {}),
    created_at: collection.created_at,
    updated_at: collection.updated_at,
    links: { self: context.links.collection(collection.slug), tags: context.links.tags(collection.slug) },
    ...pickAbout(collection),
  };
}

/** Dataset fields shared by detail and listings; `files` is added by the caller. */
export function renderDatasetFields(dataset: DatasetModel, collection: CollectionModel, context: RenderContext, omitDescription = false): Omit<Dataset, 'files'> {
  return {
    id: dataset.id,
    slug: dataset.slug,
    name: dataset.name,
    ...(dataset.description && !omitDescription ? { description: dataset.description } : {}),
    collection_id: dataset.collection_id,
    tags: dataset.tags,
    created_at: dataset.created_at,
    updated_at: dataset.updated_at,
    links: {
      self: context.links.dataset(collection.slug, dataset.slug),
      by_id: context.links.datasetById(dataset.id),
      collection: context.links.collection(collection.slug),
    },
  };
}

/** A listing item: the dataset fields plus a file count and, when asked, compact file summaries. */
export function renderDatasetListItem(
  dataset: DatasetModel,
  collection: CollectionModel,
  context: RenderContext,
  options: { omitDescription: boolean; includeFiles: boolean; includeUrls: boolean },
): DatasetListItem {
  return {
    ...renderDatasetFields(dataset, collection, context, options.omitDescription),
    file_count: dataset.files.length,
    ...(options.includeFiles || options.includeUrls
      ? { files: dataset.files.map((file) => renderFileSummary(file, dataset, collection, context, options.includeUrls)) }
      : {}),
  };
}

/** A compact file summary for listings. */
export function renderFileSummary(file: FileModel, dataset: DatasetModel, collection: CollectionModel, context: RenderContext, includeUrls: boolean): FileSummary {
  const formatTypes = file.formats.map((link) => context.index.formatsById.get(link.format_id)!.format_type);
  return {
    id: file.id,
    slug: file.slug,
    name: file.name,
    layer_name: file.layer_name,
    format_types: [...new Set(formatTypes)],
    ...(includeUrls
      ? {
          sources: file.formats.flatMap((link, index) =>
            link.sources.map((source) => ({ id: source.id, format_type: formatTypes[index]!, version: source.version, url: source.url }))),
        }
      : {}),
    links: {
      self: context.links.file(collection.slug, dataset.slug, file.slug),
      schema: context.links.schema(collection.slug, dataset.slug, file.slug),
    },
  };
}

/** A file with formats and sources, as in dataset detail and file metadata. */
export function renderFile(file: FileModel, dataset: DatasetModel, collection: CollectionModel, context: RenderContext, options: ResourceOptions): DatasetFile {
  const best = pickSchemaSource(file, context.index);
  return {
    id: file.id,
    dataset_id: file.dataset_id,
    name: file.name,
    slug: file.slug,
    description: file.description,
    layer_name: file.layer_name,
    source_file_path: file.source_file_path,
    file_metadata: best ? summarizeMetadata(best.source.metadata) : null,
    formats: file.formats.map((link) => renderFormat(link, file, dataset, collection, context, options)),
    links: {
      self: context.links.file(collection.slug, dataset.slug, file.slug),
      schema: context.links.schema(collection.slug, dataset.slug, file.slug),
      dataset: context.links.dataset(collection.slug, dataset.slug),
    },
    created_at: file.created_at,
    updated_at: file.updated_at,
  };
}

function renderFormat(link: FileFormatModel, file: FileModel, dataset: DatasetModel, collection: CollectionModel, context: RenderContext, options: ResourceOptions): DatasetFormat {
  const format = context.index.formatsById.get(link.format_id)!;
  const { slug: _slug, ...formatFields } = format;
  return {
    format: formatFields,
    file_format: { id: link.id, format_id: link.format_id, file_id: link.file_id, dataset_id: link.dataset_id, created_at: link.created_at, updated_at: link.updated_at },
    sources: link.sources.map((source) => renderSource(source, file, dataset, collection, context, options)),
  };
}

/** A source with its storage location and links; `url` only when asked. */
export function renderSource(source: SourceModel, file: FileModel, dataset: DatasetModel, collection: CollectionModel, context: RenderContext, options: ResourceOptions): DatasetSource {
  const storage = source.storage_location_id === null ? undefined : context.index.storageById.get(source.storage_location_id);
  // Embedded in every source, the storage location is compact: its description would repeat on every source.
  const { description: _description, ...storageFields } = storage ?? { slug: '' };
  const downloadZip = context.links.downloadZip(collection.slug, dataset.slug, file.slug, source.id);
  return {
    id: source.id,
    file_format_id: source.file_format_id,
    storage_location_id: source.storage_location_id,
    version: source.version,
    source_type: source.source_type,
    location: source.location,
    source_metadata: summarizeMetadata(source.metadata),
    ...(options.includeUrls ? { url: source.url } : {}),
    storage_uri: storage?.config?.bucket && source.location.type === 'file' ? `${storage.backend_type}://${storage.config.bucket}/${source.location.path}` : null,
    glob_pattern: source.glob_pattern,
    ...(storage ? { storage_location: storageFields as DatasetSource['storage_location'] } : {}),
    links: {
      ...(options.includeUrls && source.url ? { download: source.url } : {}),
      download_zip: downloadZip,
      file: context.links.file(collection.slug, dataset.slug, file.slug),
    },
    references_source_id: source.references_source_id,
    created_at: source.created_at,
    updated_at: source.updated_at,
  };
}

/** Metadata without the column list, which only the schema route carries. */
export function summarizeMetadata(metadata: FileMetadata | null): FileMetadata | null {
  if (metadata === null) return null;
  const { columns: _columns, ...rest } = metadata;
  return rest;
}

/**
 * The source a schema is read from: the given version, or else the newest version that has a schema-capable
 * source; within that version, the best format (GeoParquet, then GeoJSON). Undefined when there is none.
 */
export function pickSchemaSource(file: FileModel, index: CatalogIndex, version?: string): { source: SourceModel; link: FileFormatModel } | undefined {
  const candidates = file.formats.flatMap((link) => {
    const rank = (SCHEMA_FORMAT_ORDER as readonly string[]).indexOf(index.formatsById.get(link.format_id)?.format_type ?? '');
    return rank < 0 ? [] : link.sources.filter((source) => source.source_type === 'file').map((source) => ({ source, link, rank }));
  });
  const wanted = version ?? listVersions(candidates.map(({ source }) => source))[0];
  return candidates.filter(({ source }) => source.version === wanted).sort((a, b) => a.rank - b.rank)[0];
}

/** Distinct versions of some sources, newest first. */
export function listVersions(sources: SourceModel[]): string[] {
  return [...new Set(sources.map((source) => source.version))].sort(compareVersionsNewestFirst);
}
