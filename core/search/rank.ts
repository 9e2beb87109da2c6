import { decodeLength, decodePostings } from './codec.ts';
import { createChunkLookup, SEARCH_FORMAT, type ChunkLookup, type SearchChunk, type SearchMeta } from './format.ts';
import { MIN_PREFIX_LENGTH, type QueryWord } from './terms.ts';

/** BM25's term-frequency saturation and length normalisation, at their usual values. */
const K1 = 1.2;
const B = 0.75;
/** Share of a full match that a longer word scores: the word being typed nearly all, a finished word half. */
const PREFIX_SCORE = { typing: 0.9, finished: 0.5 } as const;

/** `meta.json` made ready for queries: decoded lengths and the chunk lookup. */
export interface PreparedMeta {
  count: number;
  averageLength: number;
  /** Weighted length of each document, by id. */
  lengths: Float32Array;
  chunks: ChunkLookup;
  /** The hash each chunk's URL carries. */
  versions: Readonly<Record<string, string>>;
}

/** A query as the index answers it: folded words, and filter terms (terms.ts `filterTerm`) that must all hold. */
export interface IndexQuery {
  words: readonly QueryWord[];
  filters: readonly string[];
}

/** One matching dataset and its score; higher is better. */
export interface RankedHit {
  id: number;
  score: number;
}

/** Decodes `meta.json` once per page; throws on a file of another format, which the page reports. */
export function prepareMeta(meta: SearchMeta): PreparedMeta {
  if (meta.format !== SEARCH_FORMAT) throw new Error(`the search index is ${String(meta.format)}, this page reads ${SEARCH_FORMAT}`);
  const lengths = new Float32Array(meta.lengths.length);
  for (let id = 0; id < lengths.length; id++) lengths[id] = decodeLength(meta.lengths[id]!);
  return { count: meta.count, averageLength: meta.averageLength || 1, lengths, chunks: createChunkLookup(Object.keys(meta.chunks)), versions: meta.chunks };
}

/** Keys of the chunks a query needs, each once. */
export function listQueryChunks(meta: PreparedMeta, query: IndexQuery): string[] {
  const keys = new Set<string>();
  for (const word of query.words) for (const key of meta.chunks.chunksFor(word.text, word.text.length >= MIN_PREFIX_LENGTH)) keys.add(key);
  for (const filter of query.filters) for (const key of meta.chunks.chunksFor(filter, false)) keys.add(key);
  return [...keys];
}

/**
 * Ranks the datasets that match every word and every filter, best first (ties by id, so the order is
 * stable). A word scores BM25 over its best matching term in each dataset: the word itself, or a longer term
 * that starts with it at a share of the score. `chunks` must hold every chunk of `listQueryChunks`.
 */
export function rankDocuments(meta: PreparedMeta, query: IndexQuery, chunks: ReadonlyMap<string, SearchChunk>): RankedHit[] {
  if (query.words.length === 0) return [];
  const perWord = query.words.map((word) => scoreWord(meta, word, chunks));
  const required = query.filters.map((filter) => new Set(lookUpTerm(meta, filter, chunks)?.ids ?? []));
  perWord.sort((a, b) => a.size - b.size);
  const [narrowest, ...others] = perWord;
  const hits: RankedHit[] = [];
  for (const [id, first] of narrowest!) {
    let score = first;
    for (const other of others) {
      const more = other.get(id);
      if (more === undefined) {
        score = -1;
        break;
      }
      score += more;
    }
    if (score >= 0 && required.every((ids) => ids.has(id))) hits.push({ id, score });
  }
  return hits.sort((a, b) => b.score - a.score || a.id - b.id);
}

/**
 * Each dataset one word matches, with its BM25 score: the best of the word's matching terms in the dataset,
 * times the rarity of the word, counted over every dataset it matches. (A term's own rarity would lift a rare
 * longer word such as `harbour_count` above a title that says `harbour`.)
 */
function scoreWord(meta: PreparedMeta, word: QueryWord, chunks: ReadonlyMap<string, SearchChunk>): Map<number, number> {
  const scores = new Map<number, number>();
  const prefix = word.text.length >= MIN_PREFIX_LENGTH;
  for (const key of meta.chunks.chunksFor(word.text, prefix)) {
    const chunk = chunks.get(key);
    if (!chunk) throw new Error(`the search chunk ${key} was not loaded`);
    for (const term in chunk) {
      const exact = term === word.text;
      if (!exact && !(prefix && term.startsWith(word.text))) continue;
      const share = exact ? 1 : word.typing ? PREFIX_SCORE.typing : PREFIX_SCORE.finished;
      const { ids, weights } = decodePostings(chunk[term]!);
      for (let index = 0; index < ids.length; index++) {
        const id = ids[index]!;
        const weight = weights[index]!;
        const norm = K1 * (1 - B + (B * (meta.lengths[id] ?? meta.averageLength)) / meta.averageLength);
        const score = (share * weight * (K1 + 1)) / (weight + norm);
        if (score > (scores.get(id) ?? 0)) scores.set(id, score);
      }
    }
  }
  const idf = Math.log(1 + (meta.count - scores.size + 0.5) / (scores.size + 0.5));
  for (const [id, score] of scores) scores.set(id, score * idf);
  return scores;
}

function lookUpTerm(meta: PreparedMeta, term: string, chunks: ReadonlyMap<string, SearchChunk>): { ids: Uint32Array } | undefined {
  for (const key of meta.chunks.chunksFor(term, false)) {
    const list = chunks.get(key)?.[term];
    if (list !== undefined) return decodePostings(list);
  }
  return undefined;
}
