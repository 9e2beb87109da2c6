import { formatBytes, formatCount } from '../../format.ts';
import type { PreviewGeometries } from './preview-geometries.ts';
import type { Preview } from './read-preview.ts';

/**
 * The status line once the rows are shown: how many of how many, what was fetched to get them, and what
 * the map could not draw.
 * @example describePreview(preview, decoded) // 'Showing 100 of 135,233 rows (read 691 KB of the 5.6 MB file with 4 range requests).'
 */
export function describePreview(preview: Preview, decoded: PreviewGeometries | null): string {
  const shown = preview.table.numRows;
  const rows = shown >= preview.totalRows ? `Showing all ${formatCount(shown)} rows` : `Showing ${formatCount(shown)} of ${formatCount(preview.totalRows)} rows`;
  const notes = [describeRead(preview)];
  if (!decoded) notes.push('the file has no WKB geometry column to map');
  else if (decoded.unreadable > 0) notes.push(`${formatCount(decoded.unreadable)} of their geometries could not be read`);
  return `${rows} (${notes.join('; ')}).`;
}

function describeRead(preview: Preview): string {
  if (!preview.ranged) return 'this host ignores range requests, so the whole file was downloaded';
  const { requests, bytes } = preview.fetched;
  const size = preview.fileSize === null ? '' : ` of the ${formatBytes(preview.fileSize)} file`;
  const count = `${requests} range request${requests === 1 ? '' : 's'}`;
  return bytes === null ? `read with ${count}` : `read ${formatBytes(bytes)}${size} with ${count}`;
}
