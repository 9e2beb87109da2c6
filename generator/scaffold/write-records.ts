/** How `geoshelf add` writes records: new record files, entries appended to list files, formats the catalog lacks. */
import { appendFile, mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { AddResult } from './add-outcome.ts';
import type { DataFile } from './find-data-files.ts';
import { FORMAT_RECORDS } from './format-records.ts';

/** The slug of a format of each type the new files need, adding to `formats.yaml` those it lacks (and PMTiles, for the twins). */
export async function ensureFormats(catalogDir: string, formats: { slug: string; format_type: string }[], files: DataFile[], result: AddResult): Promise<Map<string, string>> {
  const slugs = new Map(formats.map((format) => [format.format_type, format.slug]));
  const needed = new Set(files.map((file) => file.formatType));
  // A GeoParquet file gets a PMTiles twin only when the catalog has a format of that type.
  if (needed.has('geoparquet')) needed.add('pmtiles');
  const missing = [...needed].filter((type) => !slugs.has(type)).map((type) => ({ format_type: type, ...FORMAT_RECORDS[type]! }));
  if (missing.length === 0) return slugs;
  for (const format of missing) slugs.set(format.format_type, format.slug);
  await appendRecords(catalogDir, 'formats.yaml', missing.map(({ slug, format_type, name, description, mime_type }) => ({ slug, format_type, name, description, mime_type })), result);
  return slugs;
}

/** Adds entries to a list file (`formats.yaml`, `storage-locations.yaml`): the steward's own stay as they wrote them, the new ones after them. */
export async function appendRecords(catalogDir: string, file: string, entries: object[], result: AddResult): Promise<void> {
  const path = join(catalogDir, file);
  if (!(await stat(path).then(() => true, () => false))) return writeRecord(catalogDir, file, entries, result);
  await appendFile(path, `\n${stringify(entries, { lineWidth: 0 })}`);
  if (!result.written.includes(file)) result.written.push(file);
}

/** Writes a new record file; one that exists is left as it is. */
export async function writeRecord(catalogDir: string, path: string, value: unknown, result: AddResult): Promise<void> {
  const target = join(catalogDir, path);
  await mkdir(join(target, '..'), { recursive: true });
  try {
    await writeFile(target, stringify(value, { lineWidth: 0, aliasDuplicateObjects: false }), { flag: 'wx' });
    result.written.push(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    result.skipped.push({ path, reason: 'the record exists; it is left as it is' });
  }
}
