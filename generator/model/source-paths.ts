/**
 * The checks of a source's `path` (inside its storage location; for the data folder, there with what it needs
 * beside it) and its form in a URL.
 */
import type { ResolveContext } from './build-model.ts';

/** The sidecars a shapefile cannot be read without: the index of its shapes and the table of its attributes. */
const REQUIRED_SHAPEFILE_PARTS = ['.shx', '.dbf'];

/**
 * Checks that a local source's data is in the data folder: a file, or for a File Geodatabase a folder with
 * files in it; and that a shapefile has the sidecars it cannot be read without (any case, as GDAL finds them).
 * Reports what is wrong and answers whether the data can be read.
 */
export function checkLocalFile(path: string, formatType: string, at: PropertyKey[], context: ResolveContext): boolean {
  const files = context.options.dataFiles;
  const folderName = context.options.dataDir ? `the data folder ${context.options.dataDir} (GEOSHELF_DATA_DIR)` : 'the data folder';
  if (formatType === 'file_geodatabase') {
    const folder = `${path}/`;
    if ([...files].some((file) => file.startsWith(folder))) return true;
    context.report('MissingDataFile', context.origin, at, `no folder "${path}" with files in it in ${folderName}`);
    return false;
  }
  if (!files.has(path)) {
    context.report('MissingDataFile', context.origin, at, `no file "${path}" in ${folderName}`);
    return false;
  }
  if (formatType !== 'shapefile') return true;
  const stem = path.replace(/\.shp$/i, '').toLowerCase();
  const lower = context.lowerDataFiles();
  const missing = REQUIRED_SHAPEFILE_PARTS.filter((part) => !lower.has(`${stem}${part}`));
  if (missing.length === 0) return true;
  context.report('IncompleteShapefile', context.origin, at, `"${path}" has no ${missing.join(' and no ')} beside it; a shapefile is read with its ${REQUIRED_SHAPEFILE_PARTS.join(' and ')}`);
  return false;
}

/**
 * Whether a source path could name something outside its storage location: an absolute path, a `..`, `.` or
 * empty segment, a backslash (a separator on Windows) or a NUL. Paths are appended to the location's address
 * and, for the local data folder, joined to it: each of these would leave it or name the folder itself.
 */
export function leavesStorage(path: string): boolean {
  return path.startsWith('/') || /[\\\0]/.test(path) || path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..');
}

/** A data path as it appears in a URL: each segment percent-encoded. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
