import type { Collection } from '../schemas/collection.ts';
import type { About } from '../schemas/about.ts';
import type { DatasetTags } from '../schemas/dataset.ts';
import type { FileMetadata } from '../schemas/file-metadata.ts';
import type { Format } from '../schemas/format.ts';
import type { SourceLocation } from '../schemas/source.ts';
import type { StorageLocation } from '../schemas/storage-location.ts';

/**
 * The resolved catalog: every record with its ledger id, references replaced by ids, data statistics merged in.
 * Plain JSON data, so the build can store it in dist/ and the server can load it to compute answers.
 */
export interface CatalogModel {
  formats: FormatModel[];
  storageLocations: StorageLocationModel[];
  collections: CollectionModel[];
}

/** A format with the slug records use for it. */
export interface FormatModel extends Format {
  slug: string;
}

/** A storage location, base URL already expanded. */
export type StorageLocationModel = StorageLocation & { slug: string };

/** A collection and its datasets in listing order. */
export interface CollectionModel extends Required<Pick<Collection, 'id' | 'slug' | 'name' | 'created_at' | 'updated_at'>>, About {
  description?: string;
  datasets: DatasetModel[];
}

/** A dataset and its files in record order; its licence, providers and citation are its collection's when it gave none. */
export interface DatasetModel extends About {
  id: number;
  slug: string;
  name: string;
  description?: string;
  collection_id: number;
  tags: DatasetTags;
  created_at: string;
  updated_at: string;
  files: FileModel[];
}

/** A file or layer. */
export interface FileModel {
  id: number;
  dataset_id: number;
  slug: string;
  name: string;
  description: string | null;
  layer_name: string | null;
  source_file_path: string | null;
  created_at: string;
  updated_at: string;
  /** Column descriptions written by stewards, by column name. */
  column_descriptions: Record<string, string>;
  formats: FileFormatModel[];
}

/** The link of a file to a format, with that format's sources, newest version first. */
export interface FileFormatModel {
  id: number;
  format_id: number;
  file_id: number;
  dataset_id: number;
  created_at: string;
  updated_at: string;
  sources: SourceModel[];
}

/** One stored file (or API) of a format and version. */
export interface SourceModel {
  id: number;
  file_format_id: number;
  storage_location_id: number | null;
  version: string;
  source_type: 'file' | 'api';
  location: SourceLocation;
  /** Public download address; null for API sources. */
  url: string | null;
  glob_pattern: string | null;
  references_source_id: number | null;
  created_at: string;
  updated_at: string;
  /** Metadata from the record and from the data itself; null for API sources. */
  metadata: FileMetadata | null;
  /**
   * Facts of the stored file that no /api document shows, for the other surfaces (STAC assets, OGC features):
   * absent for API sources and files the build could not read.
   */
  stored?: StoredFileFacts;
}

/** What the build read from a stored file beside its metadata. */
export interface StoredFileFacts {
  /** SHA-256 of the file's bytes, hex. */
  sha256: string;
  /** CRS of the primary geometry as AUTHORITY:CODE (`OGC:CRS84` for GeoJSON and GeoParquet without one); null when unknown or not inspected. */
  crs: string | null;
  /** Name of the primary geometry column; null when not inspected or there is none. */
  geometry_column: string | null;
  /** First and last value (RFC 3339, UTC) of each date or timestamp column that has values, in column order. */
  times: { column: string; first: string; last: string }[];
}
