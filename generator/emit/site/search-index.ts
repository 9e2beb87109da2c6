import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { close, createIndex, type CustomRecord } from 'pagefind';
import type { TreeFile } from '../../../core/static-files.ts';
import { PAGEFIND_DIR, PAGEFIND_LANGUAGE, TAG_SEPARATOR, type DatasetMeta } from '../../../src/client/search/pagefind.ts';
import { contentTypeOf } from './content-types.ts';

/** One dataset as the search index sees it. */
export interface SearchRecord {
  /** Path of the dataset page, such as `/collections/c/datasets/d/`. */
  url: string;
  title: string;
  /** Name of the dataset's collection. */
  collection: string;
  description: string;
  tags: string[];
  /** Column names of the dataset's files, so a column name finds its dataset. */
  columns: string[];
  /** Names of the dataset's files. */
  files: string[];
}

/** Options of `buildSearchIndex`. */
export interface SearchIndexOptions {
  log?: (line: string) => void;
}

/** Where the index lives in the static tree; the search page imports `pagefind.js` from here. */
export const SEARCH_INDEX_PREFIX = PAGEFIND_DIR.slice(1);

/**
 * Files Pagefind writes that the site never loads: its ready-made UIs (the search page uses the JS API,
 * which is lighter), the highlight script, the web worker (the page searches on the main thread, measured
 * faster in bench/search-bench.ts) and the wasm of languages the index does not have.
 */
const UNUSED_FILE = new RegExp(`^pagefind-(ui|modular-ui|component-ui|highlight|worker)\\.|^wasm\\.(?!${PAGEFIND_LANGUAGE}\\.)[a-z-]+\\.pagefind$`);

/** Part of the index digest: another Pagefind writes other bytes from the same records. */
const PAGEFIND_VERSION = (JSON.parse(readFileSync(new URL('../../../node_modules/pagefind/package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Records sent to the Pagefind process at once: enough to keep it busy, few enough to bound memory. */
const BATCH = 1_000;

/**
 * Builds the Pagefind index of every dataset and returns its files, keyed under `_site/pagefind/`; nothing
 * is written to disk. The same records give the same bytes, so an unchanged index rewrites no file.
 * @example
 * const files = await buildSearchIndex([{ url: '/collections/ne/datasets/countries/', title: 'Countries',
 *   collection: 'Natural Earth', description: 'Country polygons.', tags: ['boundaries'], columns: ['iso_a3'], files: ['countries'] }]);
 */
export async function buildSearchIndex(records: SearchRecord[], options: SearchIndexOptions = {}): Promise<TreeFile[]> {
  const started = performance.now();
  const created = await createIndex({ forceLanguage: PAGEFIND_LANGUAGE });
  if (!created.index) throw new Error(`Pagefind could not create an index: ${created.errors.join('; ')}`);
  const { index } = created;
  try {
    // Pagefind numbers pages in the order they arrive; a fixed order keeps the output the same from run to run.
    const sorted = records.toSorted((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
    for (let start = 0; start < sorted.length; start += BATCH) {
      const answers = await Promise.all(sorted.slice(start, start + BATCH).map((record) => index.addCustomRecord(toCustomRecord(record))));
      const failed = answers.find((answer) => answer.errors.length > 0);
      if (failed) throw new Error(`Pagefind could not index ${failed.file?.url ?? 'a dataset'}: ${failed.errors.join('; ')}`);
    }
    const { errors, files } = await index.getFiles();
    if (errors.length > 0) throw new Error(`Pagefind could not write its index: ${errors.join('; ')}`);
    const tree = files
      .filter((file) => !UNUSED_FILE.test(file.path))
      .map((file) => ({ key: `${SEARCH_INDEX_PREFIX}${file.path}`, body: file.content, type: contentTypeOf(file.path) }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    const bytes = tree.reduce((sum, file) => sum + file.body.byteLength, 0);
    options.log?.(`indexed ${records.length} datasets for search: ${tree.length} files, ${(bytes / 1e6).toFixed(1)} MB in ${Math.round(performance.now() - started)} ms`);
    return tree;
  } finally {
    await index.deleteIndex();
  }
}

/**
 * A fingerprint of what the index is built from: the same records (in any order) give the same digest, and so
 * the same index bytes. A rebuild can keep the previous index files when the digest has not changed.
 */
export function digestSearchRecords(records: SearchRecord[]): string {
  const hash = createHash('sha256').update(PAGEFIND_VERSION);
  for (const record of records.map((item) => JSON.stringify(toCustomRecord(item))).sort()) hash.update(record).update('\n');
  return hash.digest('hex').slice(0, 16);
}

/** Stops the Pagefind process; call it when no more indexes will be built, so the process can exit at once. */
export async function closeSearchIndexer(): Promise<void> {
  await close();
}

/**
 * One dataset as a Pagefind record. The content is what excerpts are cut from, so it reads as sentences:
 * the description, then labelled lists of columns, files and tags. Pagefind marks whole space-separated
 * words, so list items are set apart by ` · ` rather than commas, which would be marked with the name.
 */
function toCustomRecord(record: SearchRecord): CustomRecord {
  const lists = [listLine('Columns', record.columns), listLine('Files', record.files), listLine('Tags', record.tags)];
  const content = [record.description.trim(), lists.filter((line) => line !== '').join(' — ')].filter((part) => part !== '').join('\n');
  // Pagefind searches meta fields too, and weighs a match in `title` five times, so the title is not repeated in the content.
  const meta: Required<DatasetMeta> = { title: record.title, collection: record.collection, tags: record.tags.join(TAG_SEPARATOR) };
  return {
    url: record.url,
    content: content || record.title,
    language: PAGEFIND_LANGUAGE,
    meta,
    filters: { collection: [record.collection], tag: record.tags },
  };
}

function listLine(label: string, items: string[]): string {
  return items.length > 0 ? `${label}: ${items.join(' · ')}` : '';
}
