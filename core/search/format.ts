import { SITE_PATHS } from '../site/paths.ts';

/**
 * The static full-text index (documented in docs/static-tree.md). Under `/_site/search/`:
 * - `meta.json` (`SearchMeta`): loaded once per page;
 * - `t/<chunk>.json` (`SearchChunk`): the posting lists of every term that starts with the chunk's key;
 * - `d/<id>.json` (`SearchDocument`): what a result shows of one dataset.
 */
export const SEARCH_INDEX_PATH = `${SITE_PATHS.assets}search/`;

/** Changes whenever a file of the index changes shape; the page refuses a metadata file of another format. */
export const SEARCH_FORMAT = 'geoshelf-search/1';

/** Paths of the index files, relative to `SEARCH_INDEX_PATH`. */
export const SEARCH_FILES = {
  meta: 'meta.json',
  chunk: (key: string) => `t/${chunkFileName(key)}.json`,
  document: (id: number) => `d/${id}.json`,
} as const;

/** `meta.json`: what every query needs before it fetches its chunks. */
export interface SearchMeta {
  format: typeof SEARCH_FORMAT;
  /** Number of datasets indexed. */
  count: number;
  /** Mean weighted length of a dataset, for BM25's length normalisation. */
  averageLength: number;
  /** One length class per document id from 0 (codec.ts `encodeLength`); `.` where no dataset has the id. */
  lengths: string;
  /** Every chunk key, with a hash of the chunk's bytes that its URL carries as `?v=`. */
  chunks: Record<string, string>;
}

/** `t/<chunk>.json`: term → posting list (codec.ts `encodePostings`), terms in code-unit order. */
export type SearchChunk = Record<string, string>;

/** `d/<id>.json`: a dataset as a result shows it, with the text its excerpt is cut from. */
export interface SearchDocument {
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

/**
 * A chunk key as a file name: letters, digits and `_` as they are, any other character as `-<hex>-`,
 * and the empty key (an index small enough for one chunk) as `-`.
 * @example chunkFileName(':c:natural earth') // '-3a-c-3a-natural-20-earth'
 */
export function chunkFileName(key: string): string {
  if (key === '') return '-';
  return key.replace(/[^a-z0-9_]/gu, (character) => `-${character.codePointAt(0)!.toString(16)}-`);
}

/** Finds the chunks a word needs: `chunksFor(word, prefix)` gives their keys. */
export interface ChunkLookup {
  /** Every chunk key, in code-unit order. */
  keys: readonly string[];
  /** Keys of the chunks holding the term `word`, and with `prefix` every term that starts with it. */
  chunksFor(word: string, prefix: boolean): string[];
}

/**
 * Chunks are the nodes of a prefix tree of terms: a term lives in the chunk of its longest prefix that is a
 * key, or, when a node was split and the term is the node's own prefix, in a chunk keyed by the whole term.
 * A key that another key extends is such a split node and holds that one term only.
 */
export function createChunkLookup(keys: Iterable<string>): ChunkLookup {
  const sorted = [...keys].sort(compareText);
  const known = new Set(sorted);
  const split = new Set(sorted.filter((key, index) => sorted[index + 1]?.startsWith(key) === true));

  const startingWith = (word: string): string[] => {
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (sorted[middle]! < word) low = middle + 1;
      else high = middle;
    }
    const found: string[] = [];
    for (let index = low; index < sorted.length && sorted[index]!.startsWith(word); index++) found.push(sorted[index]!);
    return found;
  };

  const chunksFor = (word: string, prefix: boolean): string[] => {
    const longer = startingWith(word);
    // Keys that extend the word split its node: its terms are all in them, and the word alone is keyed by itself.
    if (longer.length > 0) return prefix ? longer : known.has(word) ? [word] : [];
    for (let end = word.length - 1; end >= 0; end--) {
      const key = word.slice(0, end);
      if (known.has(key)) return split.has(key) ? [] : [key];
    }
    return [];
  };
  return { keys: sorted, chunksFor };
}

/** Orders strings by UTF-16 code units, the same in every JavaScript engine and locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
