import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { buildIndexFiles, type IndexedDocument } from '../../../core/search/build-index.ts';
import { compareText, SEARCH_FORMAT, SEARCH_INDEX_PATH, type SearchDocument } from '../../../core/search/format.ts';
import type { TreeFile } from '../../../core/static-files.ts';
import { contentTypeOf } from './content-types.ts';

/**
 * One dataset as the search index sees it: what a result shows, and the dataset's catalog id, which names its
 * file in the index so that adding or removing other datasets leaves that file alone (records without one are
 * numbered after the highest id, by URL).
 */
export type SearchRecord = SearchDocument & { id?: number };

/** Options of `buildSearchIndex`. */
export interface SearchIndexOptions {
  log?: (line: string) => void;
}

/** Where the index lives in the static tree (`_site/search/`); core/search/format.ts describes its files. */
export const SEARCH_INDEX_PREFIX = SEARCH_INDEX_PATH.slice(1);

/** Part of the digest: the code that writes the index, so a change to it rebuilds the index. */
const BUILDER_SOURCE = (() => {
  const folder = new URL('../../../core/search/', import.meta.url);
  const hash = createHash('sha256').update(SEARCH_FORMAT);
  for (const name of readdirSync(folder).filter((file) => file.endsWith('.ts')).sort()) hash.update(name).update(readFileSync(new URL(name, folder)));
  return hash.update(readFileSync(new URL('../../../core/text.ts', import.meta.url))).digest('hex');
})();

const encoder = new TextEncoder();

/**
 * Builds the static full-text index of every dataset and returns its files, keyed under `_site/search/`;
 * nothing is written to disk. The same records give the same bytes, and one edited dataset changes only the
 * few files that hold what changed, so the tree writer rewrites those alone. Synchronous work (about
 * 0.3 s for 10,000 datasets); a Promise so that callers need not care.
 * @example
 * const files = await buildSearchIndex([{ id: 1, url: '/collections/ne/datasets/countries/', title: 'Countries',
 *   collection: 'Natural Earth', description: 'Country polygons.', tags: ['boundaries'], columns: ['iso_a3'], files: ['countries'] }]);
 */
export async function buildSearchIndex(records: SearchRecord[], options: SearchIndexOptions = {}): Promise<TreeFile[]> {
  const started = performance.now();
  const files = buildIndexFiles(numberRecords(records)).map((file) => ({ key: `${SEARCH_INDEX_PREFIX}${file.path}`, body: encoder.encode(file.text), type: contentTypeOf(file.path) }));
  const bytes = files.reduce((sum, file) => sum + file.body.byteLength, 0);
  options.log?.(`indexed ${records.length} datasets for search: ${files.length} files, ${(bytes / 1e6).toFixed(1)} MB in ${Math.round(performance.now() - started)} ms`);
  return files;
}

/**
 * A fingerprint of what the index is built from: the same records (in any order) give the same digest, and so
 * the same index bytes. A rebuild can keep the previous index files when the digest has not changed.
 */
export function digestSearchRecords(records: SearchRecord[]): string {
  const hash = createHash('sha256').update(BUILDER_SOURCE);
  for (const record of numberRecords(records).map((item) => JSON.stringify(item)).sort()) hash.update(record).update('\n');
  return hash.digest('hex').slice(0, 16);
}


/** Records as index documents: their own ids, or ids after the highest one in URL order for those without. */
function numberRecords(records: SearchRecord[]): IndexedDocument[] {
  let next = records.reduce((highest, record) => Math.max(highest, record.id ?? 0), 0) + 1;
  const assigned = new Map<SearchRecord, number>();
  for (const record of records.filter((item) => item.id === undefined).sort((a, b) => compareText(a.url, b.url))) assigned.set(record, next++);
  return records.map((record) => {
    const { url, title, collection, description, tags, columns, files } = record;
    return { id: record.id ?? assigned.get(record)!, url, title, collection, description, tags, columns, files };
  });
}
