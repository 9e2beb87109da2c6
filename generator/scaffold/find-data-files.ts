/**
 * The data files `geoshelf add` describes: those under PATHs in the data folder, and those under remote PATHs
 * (`add-remote.ts`, loaded only then), without sidecars and PMTiles twins; grouped into datasets by their stem.
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, sep } from 'node:path';
import type { StorageLocationRecord } from '../../schemas/records/storage-location-record.ts';
import { AddError, type AddResult } from './add-outcome.ts';
import type { RemoteLocation } from './add-remote.ts';
import { CSV_EXTENSIONS, FORMAT_BY_EXTENSION, FORMAT_RECORDS } from './format-records.ts';

/** One data file to describe. */
export interface DataFile {
  /** Path inside the data folder or its storage location, `/`-separated: the source's `path`. */
  path: string;
  /** The storage location of a file in object storage; none for the data folder. */
  remote?: RemoteLocation;
  /** How messages name it: its path in the data folder, its `s3://` key or its URL. */
  label: string;
  formatType: string;
  modified: Date;
  /** With `--convert`, the GeoParquet file made of each layer of a GeoPackage or File Geodatabase. */
  layerFiles?: Map<string, DataFile>;
}

/**
 * The data files of each new dataset: the formats of one data set (the same name in the same folder:
 * `roads.parquet`, `roads.geojson`, `roads.shp`) together; a GeoPackage or File Geodatabase, which holds layers
 * of its own, alone.
 */
export function groupByStem(files: DataFile[]): DataFile[][] {
  const groups = new Map<string, DataFile[]>();
  for (const file of files) {
    const multiLayer = file.formatType === 'geopackage' || file.formatType === 'file_geodatabase';
    const where = file.remote ? `${file.remote.slug}:` : '';
    const key = multiLayer ? `${where}${file.path}` : `${where}${dirname(file.path)}/${stemOf(file.path)}`.toLowerCase();
    groups.set(key, [...(groups.get(key) ?? []), file]);
  }
  // GeoParquet first: the format the data dictionary and the queries read.
  const rank = (file: DataFile) => Object.keys(FORMAT_RECORDS).indexOf(file.formatType);
  return [...groups.values()].map((group) => group.sort((a, b) => rank(a) - rank(b)));
}

/** The data files under each path: every file of a folder that has a known extension (sidecars are not files of their own). */
export async function findDataFiles(dataDir: string, paths: string[], result: AddResult, convert: boolean): Promise<DataFile[]> {
  const files = new Map<string, DataFile>();
  const visit = async (path: string) => {
    const info = await stat(path).catch(() => undefined);
    const inside = relative(dataDir, path).split(sep).join('/');
    if (!info) throw new AddError(`${path} does not exist`);
    if (inside.startsWith('..') || inside === '' && !info.isDirectory()) throw new AddError(`${path} is not inside the data folder ${dataDir} (GEOSHELF_DATA_DIR): sources name files by their path in it`);
    const formatType = FORMAT_BY_EXTENSION[extname(path).toLowerCase()] ?? (convert && CSV_EXTENSIONS.has(extname(path).toLowerCase()) ? 'csv' : undefined);
    if (formatType && (info.isFile() || formatType === 'file_geodatabase')) {
      files.set(inside, { path: inside, label: inside, formatType, modified: info.mtime });
      return;
    }
    if (!info.isDirectory()) {
      if (CSV_EXTENSIONS.has(extname(path).toLowerCase())) result.skipped.push({ path: inside, reason: 'a CSV is cataloged as the GeoParquet file made of it: add --convert' });
      else if (!isSidecar(path)) result.skipped.push({ path: inside, reason: `geoshelf does not catalog ${extname(path) || 'extension-less'} files` });
      return;
    }
    for (const entry of (await readdir(path)).sort()) if (!entry.startsWith('.')) await visit(join(path, entry));
  };
  for (const path of paths) await visit(await realpath(path).catch(() => path));
  return withoutTwins(files, result);
}

/** The files, without the archive beside a GeoParquet file: its twin, which the build makes and lists itself. */
function withoutTwins(files: Map<string, DataFile>, result: AddResult): DataFile[] {
  for (const file of files.values()) {
    if (file.formatType === 'pmtiles' && files.get(file.path.replace(/\.pmtiles$/i, '.parquet'))?.formatType === 'geoparquet') {
      files.delete(file.path);
      result.skipped.push({ path: file.label, reason: 'it is the PMTiles twin of the GeoParquet file beside it, which the build makes and lists' });
    }
  }
  return [...files.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * The data files under remote PATHs (`add-remote.ts`), each with its storage location, and the locations to add
 * to `storage-locations.yaml`. Sidecars are part of their shapefile; other objects are skipped with the reason.
 */
export async function findRemoteFiles(paths: string[], records: StorageLocationRecord[], env: NodeJS.ProcessEnv, result: AddResult): Promise<{ files: DataFile[]; added: StorageLocationRecord[] }> {
  const { listRemoteEntries, locateRemotePath } = await import('./add-remote.ts');
  const { RemoteReadError } = await import('../../runtime/remote-object.ts');
  const known = [...records];
  const taken = new Set(records.map((record) => record.slug));
  const added: StorageLocationRecord[] = [];
  const files: DataFile[] = [];
  for (const path of paths) {
    let entries;
    let location: RemoteLocation;
    try {
      let key: string;
      ({ location, key } = locateRemotePath(path, known, taken, env));
      entries = await listRemoteEntries(location, key, path, env);
    } catch (error) {
      if (error instanceof RemoteReadError) throw new AddError(error.message);
      throw error;
    }
    if (location.added) {
      known.push(location.added);
      added.push(location.added);
    }
    const found = new Map<string, DataFile>();
    for (const entry of entries) {
      const extension = extname(entry.path).toLowerCase();
      const label = location.model.backend_type === 's3' ? `s3://${location.model.config!.bucket}/${entry.path}` : `${location.model.config!.base_url}/${entry.path}`;
      const formatType = FORMAT_BY_EXTENSION[extension];
      if (formatType) found.set(entry.path, { path: entry.path, label, formatType, modified: entry.modified, remote: location });
      else if (CSV_EXTENSIONS.has(extension)) result.skipped.push({ path: label, reason: 'a CSV is cataloged as the GeoParquet file made of it: convert a copy with geoshelf convert, put it beside, and add that' });
      else if (!isSidecar(entry.path)) result.skipped.push({ path: label, reason: `geoshelf does not catalog ${extension || 'extension-less'} files` });
    }
    files.push(...withoutTwins(found, result));
  }
  return { files, added };
}

/** A shapefile's sidecar or a twin-to-be's neighbour: part of another data file, not one of its own. */
function isSidecar(path: string): boolean {
  return ['.shx', '.dbf', '.prj', '.cpg', '.sbn', '.sbx', '.qix', '.xml'].includes(extname(path).toLowerCase());
}

/** A file's name without its extension, nor the `.geo` of `x.geo.parquet` (a conversion of `x.parquet`). */
export function stemOf(path: string): string {
  return basename(path, extname(path)).replace(/\.geo$/i, '');
}
