/**
 * The files a source is made of in the data folder: a shapefile's `.shp` with its sidecars, a File Geodatabase's
 * folder, or one file. The build reads them (size, hash, metadata) and download-zip bundles them.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, relative, resolve, sep } from 'node:path';

/** A file to put in an archive: where it is, its name in the archive, and what its bytes depend on. */
export interface ArchiveEntry {
  path: string;
  name: string;
  size: number;
  mtimeMs: number;
  /** Changes with every write and cannot be set back, so other bytes of the same size and mtime get another ETag. */
  ctimeMs: number;
  /** For a copy of a file in object storage, the object's version: it stands for the times, which are 0. */
  version?: string;
}

/** The parts of a shapefile that travel with its `.shp`, in archive order (extensions compared case-blind). */
export const SHAPEFILE_PARTS = ['.shx', '.dbf', '.prj', '.cpg', '.sbn', '.sbx', '.qix', '.shp.xml'];

/**
 * The files of a source, in archive order: a `.shp` with the sidecars of the same stem found beside it, every file
 * of a folder (a `.gdb`) under the folder's name, or else the one file. Empty when nothing is there, or when the
 * path would lead out of the data folder.
 * @example listSourceFiles('catalog-data/data', 'roads/2024/roads.shp') // roads.shp, roads.shx, roads.dbf, …
 */
export function listSourceFiles(dataDir: string, relativePath: string): ArchiveEntry[] {
  const root = resolve(dataDir);
  const path = resolve(root, relativePath);
  if (!path.startsWith(`${root}${sep}`)) return [];
  const info = statSync(path, { throwIfNoEntry: false });
  if (!info) return [];
  if (info.isDirectory()) {
    const files = readdirSync(path, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    const entries = files.map((entry) => describeEntry(join(entry.parentPath, entry.name), `${basename(path)}/${relative(path, join(entry.parentPath, entry.name)).split(sep).join('/')}`));
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  const name = basename(path);
  if (extname(name).toLowerCase() !== '.shp') return [describeEntry(path, name)];
  const stem = name.slice(0, -'.shp'.length);
  const siblings = readdirSync(dirname(path));
  const sidecars = SHAPEFILE_PARTS.flatMap((part) => siblings.find((sibling) => sibling.length === stem.length + part.length && sibling.startsWith(stem) && sibling.slice(stem.length).toLowerCase() === part) ?? []);
  return [name, ...sidecars].map((sibling) => describeEntry(join(dirname(path), sibling), sibling));
}

function describeEntry(path: string, name: string): ArchiveEntry {
  const { size, mtimeMs, ctimeMs } = statSync(path);
  return { path, name, size, mtimeMs, ctimeMs };
}

/** Media types of data files by extension, for `/data` and for the objects a publish uploads. */
const DATA_TYPES: Record<string, string> = {
  '.parquet': 'application/vnd.apache.parquet',
  '.geojson': 'application/geo+json',
  '.gpkg': 'application/geopackage+sqlite3',
  '.pmtiles': 'application/vnd.pmtiles',
  '.shp': 'application/x-esri-shape',
  '.json': 'application/json',
  '.md': 'text/markdown; charset=utf-8',
};

/** The media type a data file is served with, from its extension; `application/octet-stream` when unknown. */
export function dataFileType(path: string): string {
  return DATA_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/** SHA-256 of a file's bytes, hex, read as a stream. */
export async function hashFile(path: string): Promise<string> {
  const digest = createHash('sha256');
  for await (const chunk of createReadStream(path)) digest.update(chunk as Buffer);
  return digest.digest('hex');
}
