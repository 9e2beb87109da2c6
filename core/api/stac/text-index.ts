import type { DatasetModel, FileModel } from '../../model.ts';
import { SEARCH_WEIGHTS, type SearchDocument } from '../../search.ts';
import { tokenize, type StringTable } from '../../text.ts';
import { runAtOnce, sortSlices, type Sliced } from '../../slices.ts';
import { growArray } from '../../typed-arrays.ts';
import { ObjectMemo } from '../../derived.ts';
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
  /** The field weights are small integers (core/search.ts SEARCH_WEIGHTS), so a byte holds one. */
  postingWeight: Uint8Array;
  /** The dataset unit of each Item. */
  datasetOf: Int32Array;
  datasetCount: number;
}

function fileTokens(file: FileModel): string[] {
  return tokenize(`${file.name} ${file.slug} ${file.layer_name ?? ''}`);
}

/** Items, units or postings between two pauses of sliced work. */
const SLICE_STEPS = 512;

/** Builds the index of Items (in search order) from their datasets' search documents and their own files. */
export function buildStacTextIndex(items: readonly StacFileRef[], documents: ReadonlyMap<DatasetModel, SearchDocument>): StacTextIndex {
  return runAtOnce(stacTextIndexSlices(items, documents));
}

/**
 * `buildStacTextIndex`, pausing every few hundred steps. `tokensOfFile` keeps the tokens of each file's own text
 * by file object: a server reload passes that of the index it replaces, whose unchanged files it takes over.
 * `strings`, when given, makes equal tokens one string.
 */
export function* stacTextIndexSlices(
  items: readonly StacFileRef[],
  documents: ReadonlyMap<DatasetModel, SearchDocument>,
  tokensOfFile = new ObjectMemo<FileModel, string[]>(),
  strings?: StringTable,
): Sliced<StacTextIndex> {
  const ownTokensOf = (file: FileModel) => (strings ? fileTokens(file).map((token) => strings.intern(token)) : fileTokens(file));
  const datasetUnits = new Map<DatasetModel, number>();
  const datasetOf = new Int32Array(items.length);
  const ownTokens: string[][] = [];
  for (let position = 0; position < items.length; position++) {
    const { dataset, file } = items[position]!;
    let unit = datasetUnits.get(dataset);
    if (unit === undefined) datasetUnits.set(dataset, (unit = datasetUnits.size));
    datasetOf[position] = unit;
    ownTokens.push(tokensOfFile.getOrMake(file, ownTokensOf));
    if (position % SLICE_STEPS === SLICE_STEPS - 1) yield;
  }
  const datasetCount = datasetUnits.size;
  const datasetDocuments = [...datasetUnits.keys()].map((dataset) => documents.get(dataset)?.fields ?? []);
  yield;
  // Postings are gathered as (token id, unit, weight) triples into arrays sized once: at 10,000 datasets there are
  // over a million, and growing arrays that large costs more in garbage collection than the rest of the build.
  let capacity = 0;
  for (const fields of datasetDocuments) for (const field of fields) capacity += field.tokens.length;
  for (const tokens of ownTokens) capacity += tokens.length;
  const tokenOf = new Int32Array(capacity);
  const unitOf = new Int32Array(capacity);
  const weightOf = new Uint8Array(capacity);
  yield;
  let count = 0;
  const ids = new Map<string, number>();
  // Per token id, the unit of its last posting and where that is: a unit's repeated token keeps its heaviest weight.
  // Grown with the distinct tokens, which are far fewer than the postings (a reload allocates as little as it can).
  let lastUnit = new Int32Array(1024).fill(-1);
  let lastAt = new Int32Array(1024);
  const post = (unit: number, token: string, weight: number) => {
    let id = ids.get(token);
    if (id === undefined) {
      ids.set(token, (id = ids.size));
      if (id === lastUnit.length) {
        lastUnit = growArray(lastUnit, id * 2, -1);
        lastAt = growArray(lastAt, id * 2);
      }
    }
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
  for (let unit = 0; unit < datasetCount; unit++) {
    for (const field of datasetDocuments[unit]!) for (const token of field.tokens) post(unit, token, field.weight);
    if (unit % 128 === 127) yield;
  }
  for (let position = 0; position < ownTokens.length; position++) {
    for (const token of ownTokens[position]!) post(datasetCount + position, token, OWN_FILE_WEIGHT);
    if (position % SLICE_STEPS === SLICE_STEPS - 1) yield;
  }
  const tokens = yield* sortSlices([...ids.keys()], (a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rankOf = new Int32Array(tokens.length);
  tokens.forEach((token, rank) => (rankOf[ids.get(token)!] = rank));
  yield;
  const postingStart = new Int32Array(tokens.length + 1);
  for (let at = 0; at < count; at++) {
    postingStart[rankOf[tokenOf[at]!]! + 1]!++;
    if (at % (16 * SLICE_STEPS) === 16 * SLICE_STEPS - 1) yield;
  }
  for (let rank = 0; rank < tokens.length; rank++) postingStart[rank + 1]! += postingStart[rank]!;
  yield;
  const fill = postingStart.slice(0, tokens.length);
  const postingUnit = new Int32Array(count);
  const postingWeight = new Uint8Array(count);
  for (let at = 0; at < count; at++) {
    const slot = fill[rankOf[tokenOf[at]!]!]!++;
    postingUnit[slot] = unitOf[at]!;
    postingWeight[slot] = weightOf[at]!;
    if (at % (16 * SLICE_STEPS) === 16 * SLICE_STEPS - 1) yield;
  }
  return { tokens, postingStart, postingUnit, postingWeight, datasetOf, datasetCount };
}

/**
 * Buffers of one index's searches, made on its first search and kept: a search then allocates nothing in
 * proportion to the catalog. At 100,000 datasets a search used to make four arrays of every Item and a list of
 * every unit it touched, and collecting them on a heap of several GB took most of its time.
 */
interface Scratch {
  /** Score of each unit for the word being scored; 0 for none. */
  units: Int32Array;
  /** The units written for that word, `unitCount` of them, cleared before the next word. */
  touchedUnits: Int32Array;
  /** The Items of each dataset unit: those of unit u are items[start[u]] … items[start[u + 1] − 1]. */
  start: Int32Array;
  items: Int32Array;
  /** The running sum of the current term per Item, and the Items it holds (those matching every word so far). */
  sum: Int32Array;
  alive: Int32Array;
  /** Whether an Item was reached already for the current word (a search count, so nothing is cleared). */
  reached: Int32Array;
  /** The answer, and the Items it is non-zero for, cleared at the next search. */
  best: Int32Array;
  scored: Int32Array;
  scoredCount: number;
  /** Counts calls to mark `reached`. */
  mark: number;
}

const scratches = new WeakMap<StacTextIndex, Scratch>();

function scratchOf(index: StacTextIndex): Scratch {
  let scratch = scratches.get(index);
  if (!scratch) {
    const items = index.datasetOf.length;
    const start = new Int32Array(index.datasetCount + 1);
    for (let position = 0; position < items; position++) start[index.datasetOf[position]! + 1]!++;
    for (let unit = 0; unit < index.datasetCount; unit++) start[unit + 1]! += start[unit]!;
    const fill = start.slice(0, index.datasetCount);
    const byDataset = new Int32Array(items);
    for (let position = 0; position < items; position++) byDataset[fill[index.datasetOf[position]!]!++] = position;
    scratch = {
      units: new Int32Array(index.datasetCount + items), touchedUnits: new Int32Array(index.datasetCount + items), start, items: byDataset,
      sum: new Int32Array(items), alive: new Int32Array(items), reached: new Int32Array(items), best: new Int32Array(items), scored: new Int32Array(items), scoredCount: 0, mark: 0,
    };
    scratches.set(index, scratch);
  }
  return scratch;
}

/**
 * Free-text scores of every Item: the best score of any term (terms are alternatives, as the free-text extension
 * says); a term scores the sum of its words' scores when every word matches, else 0. A word scores, on the Item's
 * dataset and on its own file, the weight of the heaviest field with a token it is a prefix of, doubled when the
 * token is the word itself; the Item takes the better of the two. This is /api's `scoreDocument`, read from the
 * index: equal scores, so equal ranking.
 *
 * The work follows the postings a search's words reach and the Items they match, not the catalog's size. The
 * answer is the index's own buffer: read it before the next search of the same index.
 */
export function scoreFreeText(index: StacTextIndex, terms: readonly (readonly string[])[]): Int32Array {
  const scratch = scratchOf(index);
  const { units, touchedUnits, start, items, sum, alive, best, scored, reached } = scratch;
  const { datasetOf, datasetCount } = index;
  for (let at = 0; at < scratch.scoredCount; at++) best[scored[at]!] = 0;
  scratch.scoredCount = 0;
  for (const term of terms) {
    let aliveCount = 0;
    for (let order = 0; order < term.length; order++) {
      const unitCount = scoreUnits(index, term[order]!, units, touchedUnits);
      if (order === 0) {
        // Every Item the word reaches, through its dataset or its own file, once; it scores the better of the two.
        // The mark starts again before it outgrows the Int32Array (after 2^31 searches of a long-lived server).
        if (scratch.mark === 0x7fffffff) {
          reached.fill(0);
          scratch.mark = 0;
        }
        const mark = ++scratch.mark;
        for (let at = 0; at < unitCount; at++) {
          const unit = touchedUnits[at]!;
          if (unit >= datasetCount) {
            const position = unit - datasetCount;
            if (reached[position] === mark) continue;
            reached[position] = mark;
            sum[position] = Math.max(units[datasetOf[position]!]!, units[unit]!);
            alive[aliveCount++] = position;
            continue;
          }
          for (let slot = start[unit]!; slot < start[unit + 1]!; slot++) {
            const position = items[slot]!;
            if (reached[position] === mark) continue;
            reached[position] = mark;
            sum[position] = Math.max(units[unit]!, units[datasetCount + position]!);
            alive[aliveCount++] = position;
          }
        }
      } else {
        // Only Items that matched every earlier word can still match the term.
        let kept = 0;
        for (let at = 0; at < aliveCount; at++) {
          const position = alive[at]!;
          const score = Math.max(units[datasetOf[position]!]!, units[datasetCount + position]!);
          if (score === 0) continue;
          sum[position]! += score;
          alive[kept++] = position;
        }
        aliveCount = kept;
      }
      for (let at = 0; at < unitCount; at++) units[touchedUnits[at]!] = 0;
    }
    for (let at = 0; at < aliveCount; at++) {
      const position = alive[at]!;
      if (sum[position]! <= best[position]!) continue;
      if (best[position] === 0) scored[scratch.scoredCount++] = position;
      best[position] = sum[position]!;
    }
  }
  return best;
}

/**
 * Writes the score of one word into every unit that has a token starting with it, and lists the units it wrote in
 * `touched`; answers how many.
 */
function scoreUnits(index: StacTextIndex, word: string, units: Int32Array, touched: Int32Array): number {
  const { tokens, postingStart, postingUnit, postingWeight } = index;
  let count = 0;
  for (let at = lowerBound(tokens, word); at < tokens.length && tokens[at]!.startsWith(word); at++) {
    const factor = tokens[at]!.length === word.length ? 2 : 1;
    for (let posting = postingStart[at]!; posting < postingStart[at + 1]!; posting++) {
      const unit = postingUnit[posting]!;
      const score = factor * postingWeight[posting]!;
      if (units[unit] === 0) touched[count++] = unit;
      if (score > units[unit]!) units[unit] = score;
    }
  }
  return count;
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
