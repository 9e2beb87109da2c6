import type { CatalogIndex } from '../../catalog-index.ts';
import { REMOTE_BACKENDS } from '../../constants.ts';
import { derivedKey } from '../../derived.ts';
import type { CollectionModel, DatasetModel, FileModel, SourceModel, StorageLocationModel } from '../../model.ts';
import type { ColumnSchema } from '../../../schemas/column.ts';
import type { Cql2PropertyType } from '../../cql2/check.ts';

/** A queryable column: equality filters on the items route. */
export interface Queryable {
  name: string;
  /** JSON type of its values. */
  type: 'integer' | 'number' | 'string' | 'boolean';
}

/** A file (layer) with a GeoParquet source: one OGC feature collection, read from its latest version. */
export interface FeatureLayer {
  /** `{collection}.{dataset}.{file}` slugs: reads well in QGIS's layer list and never holds a dot of its own. */
  id: string;
  collection: CollectionModel;
  dataset: DatasetModel;
  file: FileModel;
  /** The newest GeoParquet source stored where the query service reads. */
  source: SourceModel;
  /** Its path inside the data folder, or inside its storage location in object storage. */
  path: string;
  /** The storage location in object storage the file is in; absent for a file of the data folder. */
  remote?: StorageLocationModel;
  /** The first DATE or TIMESTAMP column of the data dictionary, which `datetime` filters, with its first and last value. */
  timeColumn: { name: string; type: 'date' | 'timestamp'; interval: [string, string] | null } | null;
  /** Scalar columns usable as `?name=value` filters, in dictionary order, by name. */
  queryables: Map<string, Queryable>;
  /** What a CQL2 filter may name: the queryables, the date and timestamp columns, and the geometry column. */
  filterables: Map<string, Cql2PropertyType>;
  /** The PMTiles twin of its source, which OGC API - Tiles serves; absent when there is none. */
  tiles?: TileArchive;
}

/** The twin a layer's tiles come from: its newest GeoParquet source's PMTiles archive, beside that source. */
export interface TileArchive {
  /** Path of the archive inside the data folder, or inside `remote`. */
  path: string;
  version: string;
  /** The storage location in object storage the archive is in, as its GeoParquet file is; absent in the data folder. */
  remote?: StorageLocationModel;
}


/** Names the items route declares: a column of the same name cannot be a queryable. */
const RESERVED = new Set(['limit', 'bbox', 'bbox-crs', 'datetime', 'filter', 'filter-lang', 'filter-crs', 'after', 'before', 'f', 'file_row_number']);
const JSON_TYPES: Record<string, Queryable['type']> = { integer: 'integer', float: 'number', string: 'string', boolean: 'boolean' };

/** The id of a file's feature collection: `{collection}.{dataset}.{file}` slugs. */
export function featureLayerId(collection: CollectionModel, dataset: DatasetModel, file: FileModel): string {
  return `${collection.slug}.${dataset.slug}.${file.slug}`;
}

const FEATURE_LAYERS = derivedKey<Map<string, FeatureLayer>>('feature layers');

/**
 * The feature collections of a catalog, in catalog order, by id: a file with a GeoParquet source stored in the
 * data folder becomes one, read from its newest such source. Computed once per index (a build).
 */
export function listFeatureLayers(index: CatalogIndex): Map<string, FeatureLayer> {
  const known = index.derived.get(FEATURE_LAYERS);
  if (known) return known;
  const layers = new Map<string, FeatureLayer>();
  for (const collection of index.model.collections) {
    for (const dataset of collection.datasets) {
      for (const file of dataset.files) {
        const source = layerSource(index, file);
        if (!source) continue;
        const id = featureLayerId(collection, dataset, file);
        const columns = source.metadata?.columns ?? [];
        const remote = remoteLocation(index, source);
        const queryables = findQueryables(columns, source);
        const tiles = findTileArchive(index, file, source.version, remote);
        layers.set(id, {
          id, collection, dataset, file, source, path: source.location.path, ...(remote ? { remote } : {}),
          timeColumn: findTimeColumn(columns, source), queryables, filterables: findFilterables(columns, source, queryables), ...(tiles ? { tiles } : {}),
        });
      }
    }
  }
  return index.derived.set(FEATURE_LAYERS, layers);
}

/** Whether a file is a feature collection, without listing the catalog's: the web app asks this per page. */
export function hasFeatureLayer(index: CatalogIndex, file: FileModel): boolean {
  return layerSource(index, file) !== undefined;
}

/** The source a file's features are read from, with its path: its newest GeoParquet source stored as a file. */
function layerSource(index: CatalogIndex, file: FileModel): (SourceModel & { location: { type: 'file'; path: string } }) | undefined {
  const source = newestGeoParquet(index, file);
  return source?.location.type === 'file' ? (source as SourceModel & { location: { type: 'file'; path: string } }) : undefined;
}

/**
 * The newest GeoParquet source of a file that the query service can read: stored under the storage base URL (the
 * data folder), or in object storage (query/sources.ts reads it through a local copy).
 */
function newestGeoParquet(index: CatalogIndex, file: FileModel): SourceModel | undefined {
  const prefix = `${index.settings.storageBaseUrl}/`;
  for (const link of file.formats) {
    if (index.formatsById.get(link.format_id)?.format_type !== 'geoparquet') continue;
    // A format's sources are newest version first.
    const source = link.sources.find((candidate) => candidate.source_type === 'file' && (candidate.url?.startsWith(prefix) || remoteLocation(index, candidate)));
    if (source) return source;
  }
  return undefined;
}

/** The storage location in object storage a source's file is in, when it is in one and not under the storage base URL. */
function remoteLocation(index: CatalogIndex, source: SourceModel): StorageLocationModel | undefined {
  if (source.storage_location_id === null || source.url?.startsWith(`${index.settings.storageBaseUrl}/`)) return undefined;
  const location = index.storageById.get(source.storage_location_id);
  return location && REMOTE_BACKENDS.has(location.backend_type) ? location : undefined;
}

/**
 * The twin the build made of a file's version (`…/pmtiles@{version}` in the ledger), when it is stored as a file: in
 * the data folder, or in the storage location in object storage its GeoParquet file is in (`remote`).
 */
function findTileArchive(index: CatalogIndex, file: FileModel, version: string, remote: StorageLocationModel | undefined): TileArchive | undefined {
  for (const link of file.formats) {
    if (index.formatsById.get(link.format_id)?.format_type !== 'pmtiles') continue;
    const twin = link.sources.find((source) => source.version === version);
    if (twin?.location.type === 'file') return { path: twin.location.path, version, ...(remote ? { remote } : {}) };
  }
  return undefined;
}

function findTimeColumn(columns: ColumnSchema[], source: SourceModel): FeatureLayer['timeColumn'] {
  const column = columns.find((candidate) => candidate.type === 'date' || candidate.type === 'timestamp');
  if (!column) return null;
  // The build read the column's first and last value, so listing collections never reads a file.
  const times = source.stored?.times.find((candidate) => candidate.column === column.name);
  return { name: column.name, type: column.type as 'date' | 'timestamp', interval: times ? [times.first, times.last] : null };
}

/** The queryables, then the date and timestamp columns, then the geometry column, as CQL2 property types. */
function findFilterables(columns: ColumnSchema[], source: SourceModel, queryables: Map<string, Queryable>): Map<string, Cql2PropertyType> {
  const filterables = new Map<string, Cql2PropertyType>([...queryables.values()].map(({ name, type }) => [name, type]));
  for (const column of columns) {
    if ((column.type === 'date' || column.type === 'timestamp') && !RESERVED.has(column.name)) filterables.set(column.name, column.type);
  }
  const geometry = source.stored?.geometry_column;
  if (geometry) filterables.set(geometry, 'geometry');
  return filterables;
}

function findQueryables(columns: ColumnSchema[], source: SourceModel): Map<string, Queryable> {
  const queryables = new Map<string, Queryable>();
  for (const column of columns) {
    const type = JSON_TYPES[column.type];
    if (!type || RESERVED.has(column.name) || column.name === source.stored?.geometry_column) continue;
    queryables.set(column.name, { name: column.name, type });
  }
  return queryables;
}
