import type { DatasetModel } from '../../model.ts';
import { SEARCH_WEIGHTS, type SearchDocument } from '../../search.ts';
import { tokenize } from '../../text.ts';
import type { StacFileRef } from './documents.ts';

/**
 * The free-text index of STAC item search: every token of the datasets' search documents and of each Item's own
 * file, with the documents that hold it. Built once per catalog snapshot, so a search costs a binary search per
 * word plus the postings of the tokens it matches, never a scan of every document's tokens per word.
 */

/**
 * How much an Item's own file weighs in free-text search: above the dataset's other files (so of two files of a
 * matching dataset, the one whose name matches ranks first), below its tags.
 */
export const OWN_FILE_WEIGHT = SEARCH_WEIGHTS.files + 1;

/**
 * Tokens and postings in compressed rows. A unit is a dataset (0 … datasetCount − 1) or an Item's own file
 * (datasetCount + the Item's position); a posting holds the weight of the heaviest field of the unit with the token.
 */
export interface StacTextIndex {
  /** Distinct tokens in code-unit order, so the tokens a word is a prefix of are one run. */
  tokens: string[];
  /** Postings of token i are [postingStart[i], postingStart[i + 1]). */
  postingStart: Int32Array;
  postingUnit: Int32Array;
  postingWeight: Int32Array;
  /** The dataset unit of each Item. */
  datasetOf: Int32Array;
  datasetCount: number;
}

/** Builds the index of Items (in search order) from their datasets' search documents and their own files. */
export function buildStacTextIndex(items: readonly { ref: StacFileRef }[], documents: ReadonlyMap<DatasetModel, SearchDocument>): StacTextIndex {
  const datasetUnits = new Map<DatasetModel, number>();
  const datasetOf = new Int32Array(items.length);
  items.forEach(({ ref }, position) => {
    let unit = datasetUnits.get(ref.dataset);
    if (unit === undefined) datasetUnits.set(ref.dataset, (unit = datasetUnits.size));
    datasetOf[position] = unit;
  });
  const datasetCount = datasetUnits.size;
  const datasetDocuments = [...datasetUnits.keys()].map((dataset) => documents.get(dataset)?.fields ?? []);
  const ownTokens = items.map(({ ref: { file } }) => tokenize(`${file.name} ${file.slug} ${file.layer_name ?? ''}`));
  // Postings are gathered as (token id, unit, weight) triples into arrays sized once: at 10,000 datasets there are
  // over a million, and growing arrays that large costs more in garbage collection than the rest of the build.
  let capacity = 0;
  for (const fields of datasetDocuments) for (const field of fields) capacity += field.tokens.length;
  for (const tokens of ownTokens) capacity += tokens.length;
  const tokenOf = new Int32Array(capacity);
  const unitOf = new Int32Array(capacity);
  const weightOf = new Int32Array(capacity);
  let count = 0;
  const ids = new Map<string, number>();
  // Per token id, the unit of its last posting and where that is: a unit's repeated token keeps its heaviest weight.
  const lastUnit = new Int32Array(capacity).fill(-1);
  const lastAt = new Int32Array(capacity);
  const post = (unit: number, token: string, weight: number) => {
    let id = ids.get(token);
    if (id === undefined) ids.set(token, (id = ids.size));
    if (lastUnit[id] === unit) {
      weightOf[lastAt[id]!] = Math.max(weightOf[lastAt[id]!]!, weight);
      return;
    }
    lastUnit[id] = unit;
    lastAt[id] = count;
    tokenOf[count] = id;
    unitOf[count] = unit;
    weightOf[count++] = weight;
  };
  datasetDocuments.forEach((fields, unit) => {
    for (const field of fields) for (const token of field.tokens) post(unit, token, field.weight);
  });
  ownTokens.forEach((tokens, position) => {
    for (const token of tokens) post(datasetCount + position, token, OWN_FILE_WEIGHT);
  });
  const tokens = [...ids.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rankOf = new Int32Array(tokens.length);
  tokens.forEach((token, rank) => (rankOf[ids.get(token)!] = rank));
  const postingStart = new Int32Array(tokens.length + 1);
  for (let at = 0; at < count; at++) postingStart[rankOf[tokenOf[at]!]! + 1]!++;
  for (let rank = 0; rank < tokens.length; rank++) postingStart[rank + 1]! += postingStart[rank]!;
  const fill = postingStart.slice(0, tokens.length);
  const postingUnit = new Int32Array(count);
  const postingWeight = new Int32Array(count);
  for (let at = 0; at < count; at++) {
    const slot = fill[rankOf[tokenOf[at]!]!]!++;
    postingUnit[slot] = unitOf[at]!;
    postingWeight[slot] = weightOf[at]!;
  }
  return { tokens, postingStart, postingUnit, postingWeight, datasetOf, datasetCount };
}

/**
 * Free-text scores of every Item: the best score of any term (terms are alternatives, as the free-text extension
 * says); a term scores the sum of its words' scores when every word matches, else 0. A word scores, on the Item's
 * dataset and on its own file, the weight of the heaviest field with a token it is a prefix of, doubled when the
 * token is the word itself; the Item takes the better of the two. This is /api's `scoreDocument`, read from the
 * index: equal scores, so equal ranking.
 */
export function scoreFreeText(index: StacTextIndex, terms: readonly (readonly string[])[]): Int32Array {
  const items = index.datasetOf.length;
  const units = new Int32Array(index.datasetCount + items);
  const touched: number[] = [];
  const best = new Int32Array(items);
  const sum = new Int32Array(items);
  for (const term of terms) {
    sum.fill(0);
    term.forEach((word, order) => {
      scoreUnits(index, word, units, touched);
      for (let position = 0; position < items; position++) {
        if (order > 0 && sum[position] === 0) continue;
        const score = Math.max(units[index.datasetOf[position]!]!, units[index.datasetCount + position]!);
        sum[position] = score === 0 ? 0 : sum[position]! + score;
      }
      for (const unit of touched) units[unit] = 0;
      touched.length = 0;
    });
    for (let position = 0; position < items; position++) if (sum[position]! > best[position]!) best[position] = sum[position]!;
  }
  return best;
}

/** Writes the score of one word into every unit that has a token starting with it, listing the units it wrote. */
function scoreUnits(index: StacTextIndex, word: string, units: Int32Array, touched: number[]): void {
  const { tokens, postingStart, postingUnit, postingWeight } = index;
  for (let at = lowerBound(tokens, word); at < tokens.length && tokens[at]!.startsWith(word); at++) {
    const factor = tokens[at]!.length === word.length ? 2 : 1;
    for (let posting = postingStart[at]!; posting < postingStart[at + 1]!; posting++) {
      const unit = postingUnit[posting]!;
      const score = factor * postingWeight[posting]!;
      if (units[unit] === 0) touched.push(unit);
      if (score > units[unit]!) units[unit] = score;
    }
  }
}

/** The first position whose token is not below `word`, in code-unit order. */
function lowerBound(tokens: readonly string[], word: string): number {
  let low = 0;
  let high = tokens.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (tokens[middle]! < word) low = middle + 1;
    else high = middle;
  }
  return low;
}
