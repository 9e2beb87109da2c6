import { encodeLength, hashText, NO_DOCUMENT } from './codec.ts';
import { compareText, SEARCH_FILES, SEARCH_FORMAT, type SearchDocument } from './format.ts';
import { createPostingTable, type PostingTable } from './postings.ts';
import { FIELD_WEIGHTS, filterTerm, listTerms } from './terms.ts';

/** A dataset to index: what a result shows, and its id, which names its document file in every build. */
export interface IndexedDocument extends SearchDocument {
  /** A positive integer that stays the dataset's own from build to build (its catalog id). */
  id: number;
}

/** One file of the index: its path under `SEARCH_INDEX_PATH` and its JSON text. */
export interface SearchIndexFile {
  path: string;
  text: string;
}

/**
 * Largest chunk, in characters of posting lists and terms, before it is split by the next character of its
 * terms. Such a chunk is 3–5 KB with brotli (bench/search-bench.ts); a single term may still exceed it.
 */
const MAX_CHUNK_CHARS = 16_000;
/** Longest chunk key: terms sharing a longer prefix stay together whatever their size. */
const MAX_KEY_LENGTH = 12;

/**
 * Builds every file of the static full-text index. The same documents in any order give the same files,
 * and a file's bytes depend only on what it holds: editing one dataset's description rewrites the chunks of
 * the words it gained or lost, its document file and `meta.json`.
 */
export function buildIndexFiles(documents: readonly IndexedDocument[]): SearchIndexFile[] {
  const sorted = documents.toSorted((a, b) => a.id - b.id);
  const postings = createPostingTable();
  const lengths: string[] = [];
  let totalLength = 0;
  for (const [position, document] of sorted.entries()) {
    if (!Number.isSafeInteger(document.id) || document.id <= 0) throw new RangeError(`search document ${document.url} needs a positive integer id, not ${document.id}`);
    if (position > 0 && sorted[position - 1]!.id === document.id) throw new RangeError(`search documents ${sorted[position - 1]!.url} and ${document.url} share the id ${document.id}`);
    postings.startDocument(document.id);
    const length = addDocument(postings, document);
    while (lengths.length < document.id) lengths.push(NO_DOCUMENT);
    lengths.push(encodeLength(length));
    totalLength += length;
  }
  const encoded = postings.finish();
  const files: SearchIndexFile[] = [];
  const chunkVersions: [string, string][] = [];
  for (const [key, entries] of splitChunks(encoded, '')) {
    const text = serializeEntries(entries);
    files.push({ path: SEARCH_FILES.chunk(key), text });
    chunkVersions.push([key, hashText(text)]);
  }
  for (const document of sorted) files.push({ path: SEARCH_FILES.document(document.id), text: serializeDocument(document) });
  const averageLength = sorted.length > 0 ? Math.round((totalLength / sorted.length) * 1000) / 1000 : 0;
  const meta = `{"format":${JSON.stringify(SEARCH_FORMAT)},"count":${sorted.length},"averageLength":${averageLength},"lengths":${JSON.stringify(lengths.join(''))},"chunks":${serializeEntries(chunkVersions)}}`;
  files.push({ path: SEARCH_FILES.meta, text: meta });
  return files.sort((a, b) => compareText(a.path, b.path));
}

/**
 * Adds a dataset's terms to the table, each weighted by its field, and returns the dataset's length: the
 * sum of the weights of its words.
 */
function addDocument(postings: PostingTable, document: IndexedDocument): number {
  let length = 0;
  const addText = (text: string, weight: number, partWeight = weight) => {
    const { words, parts } = listTerms(text);
    for (const word of words) postings.add(word, weight);
    for (const part of parts) postings.add(part, partWeight);
    length += words.length * weight + parts.length * partWeight;
  };
  addText(document.title, FIELD_WEIGHTS.title);
  addText(document.description, FIELD_WEIGHTS.description);
  addText(document.collection, FIELD_WEIGHTS.collection);
  for (const tag of document.tags) addText(tag, FIELD_WEIGHTS.tags);
  for (const file of document.files) addText(file, FIELD_WEIGHTS.files);
  for (const column of document.columns) addText(column, FIELD_WEIGHTS.column, FIELD_WEIGHTS.columnPart);
  // Filters: exact values, never matched by a typed word (see filterTerm), not counted in the length.
  postings.add(filterTerm('collection', document.collection), 1);
  for (const tag of new Set(document.tags.map((value) => filterTerm('tag', value)))) postings.add(tag, 1);
  return length;
}

/**
 * Groups sorted terms into chunks: a group larger than `MAX_CHUNK_CHARS` is split by the next character, so
 * a chunk's key is the prefix its terms share. A term as long as the split prefix gets a chunk of its own.
 */
function* splitChunks(terms: [string, string][], key: string): Generator<[string, [string, string][]]> {
  const size = terms.reduce((sum, [term, list]) => sum + term.length + list.length + 6, 0);
  if (size <= MAX_CHUNK_CHARS || terms.length === 1 || key.length >= MAX_KEY_LENGTH) {
    yield [key, terms];
    return;
  }
  const depth = key.length + 1;
  let start = 0;
  while (start < terms.length) {
    const child = terms[start]![0].slice(0, depth);
    let end = start + 1;
    while (end < terms.length && terms[end]![0].slice(0, depth) === child) end++;
    const group = terms.slice(start, end);
    if (child.length < depth) yield [child, group];
    else yield* splitChunks(group, child);
    start = end;
  }
}

/** A JSON object with its keys in the given order (JSON.stringify would put number-like keys first). */
function serializeEntries(entries: [string, string][]): string {
  return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(',')}}`;
}

function serializeDocument(document: IndexedDocument): string {
  const { url, title, collection, description, tags, columns, files } = document;
  const shown: SearchDocument = { url, title, collection, description, tags, columns, files };
  return JSON.stringify(shown);
}
