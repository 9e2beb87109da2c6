import type { CatalogModel, CollectionModel, DatasetModel, FileModel, FormatModel, SourceModel, StorageLocationModel } from '../../core/model.ts';
import { compareVersionsNewestFirst } from '../../core/versions.ts';
import { REMOTE_BACKENDS, RESERVED_COLLECTION_SLUGS, RESERVED_DATASET_SLUGS } from '../../core/constants.ts';
import { didYouMean } from '../../core/suggest.ts';
import { foldText } from '../../core/text.ts';
import { pickAbout } from '../../schemas/about.ts';
import type { DatasetRecord, FileRecord } from '../../schemas/records/dataset-record.ts';
import type { BuildErrorCode, BuildIssue } from '../errors.ts';
import { locateField, type Located, type ParsedRecords, type RecordOrigin } from '../parse/parse-records.ts';
import type { IdAllocator } from './ledger.ts';
import { formatPath } from '../../schemas/parse.ts';
import { checkLocalFile, encodePath, leavesStorage } from './source-paths.ts';
import { buildStorageLocationConfig, STORAGE_PLACEHOLDER } from './storage-location-config.ts';
import { addTwins } from './twin-sources.ts';

/** What the model stage needs besides the records. */
export interface BuildModelOptions {
  ids: IdAllocator;
  storageBaseUrl: string;
  /** Paths (relative, `/`-separated) of every file in the data folder. */
  dataFiles: ReadonlySet<string>;
  /** The data folder, named by the errors about files missing from it. */
  dataDir?: string;
}

/** Where a file's record is, so later stages can point at one of its column descriptions. */
export interface FileOrigin {
  source: string;
  locateColumn: (name: string) => number | undefined;
}

/** A source whose data lives in object storage (a location with `backend_type` s3 or http), read remotely. */
export interface RemoteDataFile {
  sourceId: number;
  path: string;
  location: StorageLocationModel;
  /** The record file of the source, the field of its `path` and that field's line, for error messages. */
  source: string;
  field: string;
  line: () => number | undefined;
  /** For a PMTiles twin expected beside a remote GeoParquet file (`LocalDataFile.twinOf`), that file's path. */
  twinOf?: string;
}

/** A local data file a source points at, for the enrichment stage. */
export interface LocalDataFile {
  sourceId: number;
  path: string;
  /** The record file of the source, and the field of its `path` (`files[0].formats[0].sources[0].path`), for error messages. */
  source: string;
  field: string;
  /** The line of the source's `path`; computed only when a message needs it, as it parses the record again. */
  line: () => number | undefined;
  /**
   * For a PMTiles twin the build makes (no record lists it), the path of the GeoParquet file it is made of;
   * the twin itself may not exist yet.
   */
  twinOf?: string;
}

/**
 * Resolves parsed records into the catalog model: ids from the ledger, references checked and replaced by ids,
 * versions ordered newest first. Returns every problem found rather than stopping at the first.
 */
export function buildModel(records: ParsedRecords, options: BuildModelOptions): { model: CatalogModel; localFiles: LocalDataFile[]; remoteFiles: RemoteDataFile[]; fileOrigins: Map<number, FileOrigin>; issues: BuildIssue[] } {
  const issues: BuildIssue[] = [];
  const report = (code: BuildErrorCode, origin: RecordOrigin, path: PropertyKey[], message: string) => {
    const line = locateField(origin, path);
    issues.push({ code, source: origin.source, ...(line === undefined ? {} : { line }), path: path.length === 0 ? '' : formatPath(path), message });
  };
  const unique = <T extends { slug: string }>(items: Located<T>[], scope: string) => {
    const seen = new Map<string, RecordOrigin>();
    return items.filter(({ record, origin }) => {
      const first = seen.get(record.slug);
      if (!first) return seen.set(record.slug, origin), true;
      report('DuplicateSlug', origin, ['slug'], `slug "${record.slug}" is already used by another ${scope} in ${first.source}:${locateField(first, ['slug']) ?? 1}`);
      return false;
    });
  };
  const { ids } = options;

  const formats = new Map<string, FormatModel>();
  for (const { record } of unique(records.formats, 'format')) {
    const { id, created_at } = ids.assign('format', record.slug);
    formats.set(record.slug, {
      id, slug: record.slug, format_type: record.format_type, name: record.name,
      ...(record.description ? { description: record.description } : {}),
      mime_type: record.mime_type, created_at, updated_at: record.updated_at ?? created_at,
    });
  }

  const storage = new Map<string, { model: StorageLocationModel; local: boolean }>();
  for (const { record } of unique(records.storageLocations, 'storage location')) {
    const { id, created_at } = ids.assign('storage_location', record.slug);
    const local = record.base_url.includes(STORAGE_PLACEHOLDER);
    storage.set(record.slug, {
      local,
      model: {
        id, slug: record.slug, name: record.name, backend_type: record.backend_type,
        ...(record.description ? { description: record.description } : {}),
        config: buildStorageLocationConfig(record, options.storageBaseUrl),
        created_at, updated_at: record.updated_at ?? created_at,
      },
    });
  }

  const collections = new Map<string, CollectionModel>();
  for (const { record, origin } of unique(records.collections, 'collection')) {
    if ((RESERVED_COLLECTION_SLUGS as readonly string[]).includes(record.slug)) {
      report('ReservedSlug', origin, ['slug'], `"${record.slug}" is reserved: /stac/${record.slug} is the STAC API, so it cannot be this collection's STAC catalog`);
    }
    const { id, created_at } = ids.assign('collection', record.slug);
    collections.set(record.slug, {
      id, slug: record.slug, name: record.name,
      ...(record.description ? { description: record.description } : {}),
      ...pickAbout(record),
      created_at, updated_at: record.updated_at ?? created_at, datasets: [],
    });
  }

  const localFiles: LocalDataFile[] = [];
  const remoteFiles: RemoteDataFile[] = [];
  let lower: Set<string> | undefined;
  const lowerDataFiles = () => (lower ??= new Set([...options.dataFiles].map((file) => file.toLowerCase())));
  const fileOrigins = new Map<number, FileOrigin>();
  const datasetSlugs = new Map<string, RecordOrigin>();
  for (const { record, origin } of records.datasets) {
    const collection = collections.get(record.collection);
    if (!collection) {
      if (!records.brokenSlugs.has(`collection:${record.collection}`)) {
        report('DanglingReference', origin, ['collection'], `collection "${record.collection}" does not exist (no record under collections/ has that slug)${didYouMean(record.collection, collections.keys())}`);
      }
      continue;
    }
    const key = `${record.collection}/${record.slug}`;
    const first = datasetSlugs.get(key);
    if (first) {
      report('DuplicateSlug', origin, ['slug'], `dataset slug "${record.slug}" is already used in collection "${record.collection}" by ${first.source}`);
      continue;
    }
    datasetSlugs.set(key, origin);
    if ((RESERVED_DATASET_SLUGS as readonly string[]).includes(record.slug)) {
      report('ReservedSlug', origin, ['slug'], `"${record.slug}" is reserved: /api/collections/{slug}/datasets/${record.slug} is a fixed route`);
      continue;
    }
    const context = { ids, formats, storage, defaultLocation: defaultStorageLocation(storage), options, report, origin, localFiles, remoteFiles, fileOrigins, brokenSlugs: records.brokenSlugs, lowerDataFiles };
    collection.datasets.push(resolveDataset(record, key, collection, context));
  }

  const model: CatalogModel = {
    formats: [...formats.values()].sort((a, b) => a.id - b.id),
    storageLocations: [...storage.values()].map(({ model }) => model).sort((a, b) => a.id - b.id),
    collections: sortByNameThenId([...collections.values()]),
  };
  for (const collection of model.collections) collection.datasets = sortByNameThenId(collection.datasets);
  return { model, localFiles, remoteFiles, fileOrigins, issues };
}

/** Sorts into listing order: folded name, then id, so the order is total and stable. Each name is folded once. */
export function sortByNameThenId<T extends { name: string; id: number }>(items: T[]): T[] {
  return items
    .map((item) => ({ item, name: foldText(item.name) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.item.id - b.item.id))
    .map(({ item }) => item);
}

/**
 * The storage location of a source that names none: the only one, or among several the only one that is the data
 * folder (`base_url` with `{storage_base_url}`). So a steward's local sources keep working when a bucket is added,
 * and a source in object storage always names its location.
 */
function defaultStorageLocation(storage: Map<string, { local: boolean }>): string | undefined {
  if (storage.size === 1) return [...storage.keys()][0];
  const local = [...storage].filter(([, location]) => location.local);
  return local.length === 1 ? local[0]![0] : undefined;
}

/** What resolving a dataset's records needs: the resolved formats and locations, and where to put what it finds. */
export interface ResolveContext {
  ids: IdAllocator;
  formats: Map<string, FormatModel>;
  storage: Map<string, { model: StorageLocationModel; local: boolean }>;
  /** Where a source without `storage_location` is: `defaultStorageLocation`. */
  defaultLocation: string | undefined;
  options: BuildModelOptions;
  report: (code: BuildErrorCode, origin: RecordOrigin, path: PropertyKey[], message: string) => void;
  origin: RecordOrigin;
  localFiles: LocalDataFile[];
  remoteFiles: RemoteDataFile[];
  fileOrigins: Map<number, FileOrigin>;
  brokenSlugs: Set<string>;
  /** The data folder's paths in lower case, made when a shapefile's sidecars are first looked up. */
  lowerDataFiles: () => Set<string>;
}

function resolveDataset(record: DatasetRecord, key: string, collection: CollectionModel, context: ResolveContext): DatasetModel {
  const { id, created_at } = context.ids.assign('dataset', key);
  const fileSlugs = new Set<string>();
  const files: FileModel[] = [];
  record.files.forEach((file, fileIndex) => {
    if (fileSlugs.has(file.slug)) {
      context.report('DuplicateSlug', context.origin, ['files', fileIndex, 'slug'], `file slug "${file.slug}" appears twice in this dataset`);
      return;
    }
    fileSlugs.add(file.slug);
    files.push(resolveFile(file, fileIndex, `${key}/${file.slug}`, id, context));
  });
  return {
    id, slug: record.slug, name: record.name,
    ...(record.description ? { description: record.description } : {}),
    ...pickAbout({ ...pickAbout({ license: collection.license, providers: collection.providers, citation: collection.citation }), ...pickAbout(record) }),
    collection_id: collection.id, tags: record.tags, created_at, updated_at: record.updated_at ?? created_at, files,
  };
}

function resolveFile(record: FileRecord, fileIndex: number, key: string, datasetId: number, context: ResolveContext): FileModel {
  const { id, created_at } = context.ids.assign('file', key);
  const updatedAt = record.updated_at ?? created_at;
  const file: FileModel = {
    id, dataset_id: datasetId, slug: record.slug, name: record.name, description: record.description ?? null,
    layer_name: record.layer_name ?? null, source_file_path: record.source_file_path ?? null,
    created_at, updated_at: updatedAt, column_descriptions: withoutPlaceholders(record.columns), formats: [],
  };
  const at = (...path: PropertyKey[]) => ['files', fileIndex, ...path];
  const origin = context.origin;
  context.fileOrigins.set(id, { source: origin.source, locateColumn: (name) => locateField(origin, at('columns', name)) });
  const sourceIds = new Map<string, number>();
  // The data files of this file's sources, local or remote, by source id: the twins are made beside them.
  const dataFiles = new Map<number, LocalDataFile | RemoteDataFile>();
  const pendingReferences: { source: SourceModel; reference: string; path: PropertyKey[] }[] = [];
  record.formats.forEach((entry, formatIndex) => {
    const format = context.formats.get(entry.format);
    if (!format) {
      if (!context.brokenSlugs.has(`format:${entry.format}`)) {
        context.report('DanglingReference', context.origin, at('formats', formatIndex, 'format'), `format "${entry.format}" is not defined in formats.yaml${didYouMean(entry.format, context.formats.keys())}`);
      }
      return;
    }
    if (file.formats.some((existing) => existing.format_id === format.id)) {
      context.report('DuplicateSlug', context.origin, at('formats', formatIndex, 'format'), `format "${entry.format}" is listed twice for this file; put all its sources under one entry`);
      return;
    }
    const link = context.ids.assign('file_format', `${key}/${entry.format}`);
    const sources: SourceModel[] = [];
    entry.sources.forEach((source, sourceIndex) => {
      const path = at('formats', formatIndex, 'sources', sourceIndex);
      const sourceKey = `${entry.format}@${source.version}`;
      if (sourceIds.has(sourceKey)) {
        context.report('DuplicateSlug', context.origin, [...path, 'version'], `version "${source.version}" of format "${entry.format}" appears twice`);
        return;
      }
      const slug = source.storage_location ?? context.defaultLocation;
      if (slug === undefined) {
        const known = [...context.storage.keys()];
        context.report('NoStorageLocation', context.origin, path, `no storage_location, and storage-locations.yaml defines ${known.length === 0 ? 'none' : `${known.length}: ${known.join(', ')}`}`);
        return;
      }
      const location = context.storage.get(slug);
      if (!location) {
        if (!context.brokenSlugs.has(`storage_location:${slug}`)) {
          context.report('DanglingReference', context.origin, [...path, 'storage_location'], `storage location "${slug}" is not defined in storage-locations.yaml${didYouMean(slug, context.storage.keys())}`);
        }
        return;
      }
      if (source.path !== undefined && leavesStorage(source.path)) {
        context.report('PathOutsideStorage', context.origin, [...path, 'path'], `"${source.path}" leads out of its storage location; give a path inside it, without "..", "." or empty segments, a leading "/" or "\\"`);
        return;
      }
      // A source whose file is missing stays in the model for the other checks, but no stage reads its data.
      const readable = source.path !== undefined && location.local && checkLocalFile(source.path, format.format_type, [...path, 'path'], context);
      const { id: sourceId, created_at: sourceCreated } = context.ids.assign('source', `${key}/${sourceKey}`);
      sourceIds.set(sourceKey, sourceId);
      const model: SourceModel = {
        id: sourceId, file_format_id: link.id, storage_location_id: location.model.id, version: source.version,
        source_type: source.api ? 'api' : 'file',
        location: source.api
          ? { type: 'api', version: source.version, url: source.api.url, ...(source.api.method ? { method: source.api.method } : {}) }
          : { type: 'file', version: source.version, path: source.path ?? '' },
        url: source.path === undefined ? null : `${location.model.config?.base_url}/${encodePath(source.path)}`,
        glob_pattern: source.glob_pattern ?? null, references_source_id: null,
        created_at: sourceCreated, updated_at: source.updated_at ?? sourceCreated,
        metadata: source.api ? null : { version: source.version, description: source.description ?? null, mime_type: format.mime_type ?? null },
      };
      if (readable) {
        const origin = context.origin;
        const local: LocalDataFile = { sourceId, path: source.path!, source: origin.source, field: formatPath([...path, 'path']), line: () => locateField(origin, [...path, 'path']) };
        context.localFiles.push(local);
        dataFiles.set(sourceId, local);
      } else if (source.path !== undefined && !location.local && REMOTE_BACKENDS.has(location.model.backend_type)) {
        const origin = context.origin;
        const remote: RemoteDataFile = { sourceId, path: source.path, location: location.model, source: origin.source, field: formatPath([...path, 'path']), line: () => locateField(origin, [...path, 'path']) };
        context.remoteFiles.push(remote);
        dataFiles.set(sourceId, remote);
      }
      if (source.references) pendingReferences.push({ source: model, reference: source.references, path: [...path, 'references'] });
      sources.push(model);
    });
    sources.sort((a, b) => compareVersionsNewestFirst(a.version, b.version));
    file.formats.push({
      id: link.id, format_id: format.id, file_id: id, dataset_id: datasetId,
      created_at: link.created_at, updated_at: updatedAt, sources,
    });
  });
  addTwins(file, key, dataFiles, context);
  for (const { source, reference, path } of pendingReferences) {
    const target = sourceIds.get(reference);
    if (target === undefined || target === source.id) {
      context.report('DanglingReference', context.origin, path, `"${reference}" is not another source of this file (expected <format>@<version> of a source listed above)`);
    } else {
      source.references_source_id = target;
    }
  }
  return file;
}


/**
 * Column descriptions without the placeholders `geoshelf add` writes (`TODO: …`): such a column is published
 * undescribed, and the build's warning counts it among those still to describe.
 */
function withoutPlaceholders(columns: Record<string, string>): Record<string, string> {
  // Keyed by column names from the records: no prototype, so a column named "constructor" is only itself.
  return Object.assign(Object.create(null) as Record<string, string>, Object.fromEntries(Object.entries(columns).filter(([, text]) => !/^TODO\b/.test(text))));
}
