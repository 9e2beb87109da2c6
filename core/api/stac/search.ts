import { TOKEN_STRINGS, type CatalogIndex } from '../../catalog-index.ts';
import type { DatasetModel, FileModel } from '../../model.ts';
import type { SearchDocument } from '../../search.ts';
import { foldText } from '../../text.ts';
import type { StacBbox } from '../../../schemas/stac.ts';
import { stacCollectionId, stacItemFacts, stacItemFilterFacts, type StacFileRef } from './documents.ts';
import { TextDigest } from './page-token.ts';
import { splitBox } from '../../geo/lon-extent.ts';
import { runAtOnce, type Sliced } from '../../slices.ts';
import { derivedKey, type ObjectMemo } from '../../derived.ts';
import { stacTextIndexSlices, scoreFreeText, type StacTextIndex } from './text-index.ts';

/**
 * STAC item search over the latest Item of every file, in memory. The index is built once per catalog snapshot
 * (on first use, then cached per CatalogIndex) as flat typed arrays, so a search is one pass over at most
 * 30,000 entries with no allocation per entry: measured in bench/stac-search-bench.ts.
 */

/** One searchable Item: the latest version of a file, and the file it is. */
export interface StacIndexEntry extends StacFileRef {
  /** The Item id: the file's slug. */
  id: string;
  collectionId: string;
  datetime: string;
  bbox: StacBbox | null;
}

/** The fields `sortby` accepts, by the names it accepts them under. */
export const STAC_SORT_FIELDS = {
  id: 'id',
  collection: 'collection',
  datetime: 'properties.datetime',
  'properties.datetime': 'properties.datetime',
  title: 'properties.title',
  'properties.title': 'properties.title',
  created: 'properties.created',
  'properties.created': 'properties.created',
  updated: 'properties.updated',
  'properties.updated': 'properties.updated',
  'table:row_count': 'properties.table:row_count',
  'properties.table:row_count': 'properties.table:row_count',
  description: 'properties.description',
  'properties.description': 'properties.description',
  version: 'properties.version',
  'properties.version': 'properties.version',
  'proj:code': 'properties.proj:code',
  'properties.proj:code': 'properties.proj:code',
} as const;

/** The names of the fields items sort on, as the queryables name them: what the sortables list. */
export const STAC_SORTABLES: readonly string[] = Object.keys(STAC_SORT_FIELDS).filter((name) => !name.startsWith('properties.'));

/** A field items can be sorted on, in its canonical name. */
export type StacSortField = (typeof STAC_SORT_FIELDS)[keyof typeof STAC_SORT_FIELDS];

/** One key of a sort. */
export interface StacSortKey {
  field: StacSortField;
  direction: 'asc' | 'desc';
}

/**
 * A geometry filter, decided for every entry before the search runs: GEOS tests the geometry against the entries'
 * `boxes` on a worker thread (runtime/geometry-intersects.ts), so the search only reads the verdicts.
 */
export interface FootprintFilter {
  /** Whether the geometry meets the footprint of the entry at this position. */
  meets(position: number): boolean;
  /** A digest of the geometry, which page tokens carry in its place: hashing it here would cost the main thread. */
  digest: string;
}

/** What a search asks for; every part is optional and the parts combine with AND. */
export interface StacSearchFilter {
  /** Only Items of these Collections. */
  collections?: readonly string[];
  /** Only Items with these ids. */
  ids?: readonly string[];
  /** [west, south, east, north]; west > east crosses ±180°. */
  bbox?: readonly [number, number, number, number];
  intersects?: FootprintFilter;
  /** Inclusive bounds in epoch milliseconds; null is open. */
  datetime?: { start: number | null; end: number | null };
  /** Free text: terms (OR), each a list of folded words that must all match (AND); no term is no filter. */
  q?: readonly (readonly string[])[];
  /** A CQL2 filter compiled to a test of positions (core/api/stac/filter.ts). */
  test?: (position: number) => boolean;
  sortby?: readonly StacSortKey[];
}

/** The in-memory search index of one catalog snapshot. */
export interface StacSearchIndex {
  /** Entries in catalog order: collections as /api lists them, datasets in listing order, files in record order. */
  entries: StacIndexEntry[];
  /**
   * Eight numbers per entry: the footprint cut at ±180° into at most two boxes [west, south, east, north] with
   * west ≤ east; an absent box (or footprint) is NaN, which fails every comparison.
   */
  boxes: Float64Array;
  /** Item datetime per entry, epoch milliseconds. */
  times: Float64Array;
  /** The latest Item's other properties that a filter reads, per entry; NaN or null where the Item has none. */
  properties: {
    created: Float64Array;
    updated: Float64Array;
    rowCount: Float64Array;
    version: string[];
    crs: (string | null)[];
  };
  /** STAC Collection id → the range [first, end) of its entries, in catalog order of Collections. */
  collections: Map<string, Omit<StacFileRef, 'file'> & { first: number; end: number }>;
  /** Item id → the position of the entry with that id, or the positions when a slug repeats across datasets. */
  byItemId: Map<string, number | number[]>;
  /** A digest of what search answers depend on: page tokens carry it, so a token outlives no rebuild that changes them. */
  fingerprint: string;
}

const SEARCH_INDEX = derivedKey<StacSearchIndex>('STAC search index');
const TEXT_INDEX = derivedKey<StacTextIndex>('STAC free-text index');
/** The tokens of each file's own text, by file object. */
const FILE_TOKENS = derivedKey<ObjectMemo<FileModel, string[]>>('STAC tokens by file');

/** The search index of a catalog, built on first use and kept as long as the catalog index lives. */
export function stacSearchIndex(index: CatalogIndex): StacSearchIndex {
  return index.derived.get(SEARCH_INDEX) ?? runAtOnce(stacSearchIndexSlices(index));
}

/**
 * Builds the search index and its free-text index of a catalog now, rather than on the first search that needs
 * them: at 10,000 datasets that takes seconds, which no request should wait for.
 */
export function warmStacSearch(index: CatalogIndex): void {
  runAtOnce(warmStacSearchSlices(index));
}

/**
 * `warmStacSearch` in slices, for a server that keeps answering while it builds them: at 100,000 datasets the two
 * indexes take seconds, and a reload builds them before its snapshot is served (server/catalog.ts).
 */
export function* warmStacSearchSlices(index: CatalogIndex): Sliced<void> {
  const search = index.derived.get(SEARCH_INDEX) ?? (yield* stacSearchIndexSlices(index));
  if (!index.derived.get(TEXT_INDEX)) yield* textIndexSlices(index, search);
}

/**
 * The facts of each file's latest Item, by file object, with the catalog's format types they were read with (a
 * file's schema source is picked by its format's type). A server reload takes over the files of the model parts
 * that did not change, and their facts with them: at 100,000 datasets, reading them took most of the index.
 */
const FILE_FACTS = derivedKey<ObjectMemo<FileModel, ReturnType<typeof stacItemFacts> & { formats: string }>>('STAC facts by file');

/** Entries between two pauses of sliced work. */
const SLICE_ENTRIES = 128;

/**
 * Builds the search index of a catalog, pausing every few dozen datasets, and keeps it with the catalog index. The
 * steps stay small because a step that allocates also does the marking that V8 charges to that allocation: at
 * 100,000 datasets, steps of a thousand entries took up to 0.45 s during a reload.
 */
function* stacSearchIndexSlices(index: CatalogIndex): Sliced<StacSearchIndex> {
  const entries: StacIndexEntry[] = [];
  const collections: StacSearchIndex['collections'] = new Map();
  const formats = JSON.stringify(index.model.formats.map((format) => [format.id, format.format_type]));
  const factsOfFile = index.derived.memo(FILE_FACTS);
  // Not kept with the facts: at 100,000 datasets the columns below take 12 MB, and Items' timestamps as strings twice that.
  const properties = { created: [] as number[], updated: [] as number[], rowCount: [] as number[], version: [] as string[], crs: [] as (string | null)[] };
  for (const collection of index.model.collections) {
    for (const dataset of collection.datasets) {
      const collectionId = stacCollectionId(collection, dataset);
      const first = entries.length;
      for (const file of dataset.files) {
        let facts = factsOfFile.get(file);
        if (facts?.formats !== formats) facts = factsOfFile.set(file, { ...stacItemFacts(index, { collection, dataset, file }), formats });
        entries.push({ collection, dataset, file, id: file.slug, collectionId, datetime: facts.datetime, bbox: facts.bbox });
        const more = stacItemFilterFacts(index, file);
        properties.created.push(Date.parse(more.created));
        properties.updated.push(Date.parse(more.updated));
        properties.rowCount.push(more.rowCount ?? Number.NaN);
        properties.version.push(more.version);
        properties.crs.push(more.crs);
      }
      collections.set(collectionId, { collection, dataset, first, end: entries.length });
      if (collections.size % 32 === 0) yield;
    }
  }
  const boxes = new Float64Array(entries.length * 8).fill(Number.NaN);
  const times = new Float64Array(entries.length);
  const byItemId = new Map<string, number | number[]>();
  const digest = new TextDigest();
  for (let position = 0; position < entries.length; position++) {
    const entry = entries[position]!;
    if (entry.bbox) writeBoxes(boxes, position * 8, entry.bbox);
    times[position] = Date.parse(entry.datetime);
    const same = byItemId.get(entry.id);
    if (same === undefined) byItemId.set(entry.id, position);
    else if (typeof same === 'number') byItemId.set(entry.id, [same, position]);
    else same.push(position);
    const { dataset, file } = entry;
    digest.update(`${position === 0 ? '' : '\n'}${entry.collectionId}/${entry.id}/${entry.datetime}/${entry.bbox}/${dataset.updated_at}/${file.updated_at}/${file.name}/${file.description ?? ''}`);
    digest.update(`/${properties.created[position]}/${properties.updated[position]}/${properties.rowCount[position]}/${properties.version[position]}/${properties.crs[position]}`);
    if (position % SLICE_ENTRIES === SLICE_ENTRIES - 1) yield;
  }
  return index.derived.get(SEARCH_INDEX) ?? index.derived.set(SEARCH_INDEX, {
    entries, boxes, times, collections, byItemId, fingerprint: digest.digest(),
    properties: { ...properties, created: Float64Array.from(properties.created), updated: Float64Array.from(properties.updated), rowCount: Float64Array.from(properties.rowCount) },
  });
}

/** Writes a box as one or two boxes that do not cross ±180°. */
function writeBoxes(target: Float64Array, at: number, [west, south, east, north]: readonly number[]): void {
  const pieces = splitBox(west!, south!, east!, north!);
  pieces.forEach((piece, index) => target.set(piece, at + index * 4));
}

/**
 * The entries a search matches, as positions in result order: by the sort keys when given, else best free-text
 * score first when searching text, else catalog order; ties always in catalog order. The answer is held in the
 * index's own buffer: read it before the next search of the same index.
 */
export function searchStacItems(index: CatalogIndex, filter: StacSearchFilter): Int32Array {
  const search = stacSearchIndex(index);
  const candidates = candidatePositions(search, filter);
  const spatial = spatialTest(search, filter);
  const { times } = search;
  const start = filter.datetime?.start ?? -Infinity;
  const end = filter.datetime?.end ?? Infinity;
  const scores = filter.q && filter.q.length > 0 ? scoreFreeText(stacTextIndex(index, search), filter.q) : undefined;
  const total = candidates ? candidates.length : search.entries.length;
  // Matches go into an array of every entry, made once per index: a bbox or a common word may match most of
  // them, and arrays of every entry made per search cost garbage collections of the whole heap at 100,000 datasets.
  const buffers = searchBuffers(search);
  const matched = buffers.matched;
  let count = 0;
  for (let at = 0; at < total; at++) {
    const position = candidates ? candidates[at]! : at;
    if (spatial && !spatial(position)) continue;
    const time = times[position]!;
    if (!(time >= start && time <= end)) continue;
    if (scores && scores[position] === 0) continue;
    if (filter.test && !filter.test(position)) continue;
    matched[count++] = position;
  }
  const order = matched.subarray(0, count);
  if (filter.sortby && filter.sortby.length > 0) return sortPositions(order, filter.sortby.map((key) => ({ ranks: sortRanks(search, key.field), sign: key.direction === 'asc' ? 1 : -1 })));
  if (scores) return sortByScore(order, scores, buffers.sorted);
  return order;
}

const answerBuffers = new WeakMap<StacSearchIndex, { matched: Int32Array; sorted: Int32Array }>();

/** The arrays a search of this index writes its answer into: what it answers is read before the next search. */
function searchBuffers(search: StacSearchIndex): { matched: Int32Array; sorted: Int32Array } {
  let made = answerBuffers.get(search);
  if (!made) answerBuffers.set(search, (made = { matched: new Int32Array(search.entries.length), sorted: new Int32Array(search.entries.length) }));
  return made;
}

/**
 * The positions the collections and ids filters leave, in catalog order; undefined when neither is given (every
 * entry). Collections are contiguous ranges, so the collections filter costs nothing per excluded entry.
 */
function candidatePositions(search: StacSearchIndex, filter: StacSearchFilter): number[] | undefined {
  if (!filter.collections && !filter.ids) return undefined;
  const ranges = filter.collections?.flatMap((id) => search.collections.get(id) ?? []);
  const inRange = (position: number) => !ranges || ranges.some((range) => position >= range.first && position < range.end);
  if (filter.ids) {
    const positions = [...new Set(filter.ids.flatMap((id) => search.byItemId.get(id) ?? []))].filter(inRange);
    return positions.sort((a, b) => a - b);
  }
  return ranges!.sort((a, b) => a.first - b.first).flatMap((range, index, all) =>
    index > 0 && all[index - 1] === range ? [] : Array.from({ length: range.end - range.first }, (_, offset) => range.first + offset));
}

/**
 * The spatial test of a search, or undefined without one. A bbox is compared box against box (closed
 * intervals: a touching box meets); an `intersects` geometry was tested before the search. Entries without a
 * footprint never match a spatial filter.
 */
function spatialTest(search: StacSearchIndex, filter: StacSearchFilter): ((position: number) => boolean) | undefined {
  if (filter.intersects) return (position) => filter.intersects!.meets(position);
  return filter.bbox ? createBoxTest(search, filter.bbox) : undefined;
}

/** Whether an entry's footprint meets a box (four numbers, or six with heights), closed intervals, both cut at ±180°. */
export function createBoxTest(search: StacSearchIndex, bbox: readonly number[]): (position: number) => boolean {
  const [west, south, east, north] = bbox.length === 6 ? [bbox[0]!, bbox[1]!, bbox[3]!, bbox[4]!] : [bbox[0]!, bbox[1]!, bbox[2]!, bbox[3]!];
  const query = Float64Array.from(splitBox(west, south, east, north).flat());
  const { boxes } = search;
  return (position) => {
    for (let piece = position * 8; piece < position * 8 + 8; piece += 4) {
      const west = boxes[piece]!;
      const south = boxes[piece + 1]!;
      const east = boxes[piece + 2]!;
      const north = boxes[piece + 3]!;
      for (let at = 0; at < query.length; at += 4) {
        if (west <= query[at + 2]! && east >= query[at]! && south <= query[at + 3]! && north >= query[at + 1]!) return true;
      }
    }
    return false;
  };
}

/**
 * The free-text index of a search index, built on the first free-text search of a snapshot and kept with it. The
 * datasets' search documents are the ones /api's search scores, so both rank alike.
 */
export function stacTextIndex(index: CatalogIndex, search: StacSearchIndex = stacSearchIndex(index)): StacTextIndex {
  return index.derived.get(TEXT_INDEX) ?? runAtOnce(textIndexSlices(index, search));
}

/** Builds the free-text index of a search index, pausing after each collection's documents and every few thousand steps. */
function* textIndexSlices(index: CatalogIndex, search: StacSearchIndex): Sliced<StacTextIndex> {
  const documents = new Map<DatasetModel, SearchDocument>();
  for (const entry of index.collections.values()) {
    for (const document of entry.documents) documents.set(document.dataset, document);
    yield;
  }
  return index.derived.get(TEXT_INDEX) ?? index.derived.set(TEXT_INDEX, yield* stacTextIndexSlices(search.entries, documents, index.derived.memo(FILE_TOKENS), index.derived.get(TOKEN_STRINGS)));
}

const rankCache = new WeakMap<StacSearchIndex, Map<StacSortField, Int32Array>>();

/**
 * The rank of every entry on a sort field (equal values share a rank), computed once per field: sorting a result
 * then compares integers, not strings.
 */
function sortRanks(search: StacSearchIndex, field: StacSortField): Int32Array {
  const cached = rankCache.get(search) ?? new Map<StacSortField, Int32Array>();
  rankCache.set(search, cached);
  const known = cached.get(field);
  if (known) return known;
  const { properties } = search;
  const keys: (string | number)[] = search.entries.map((entry, position) => {
    switch (field) {
      case 'id': return entry.id;
      case 'collection': return entry.collectionId;
      case 'properties.datetime': return search.times[position]!;
      case 'properties.created': return properties.created[position]!;
      case 'properties.updated': return properties.updated[position]!;
      case 'properties.table:row_count': return properties.rowCount[position]!;
      case 'properties.title': return foldText(entry.file.name);
      case 'properties.description': return entry.file.description ? foldText(entry.file.description) : Number.NaN;
      case 'properties.version': return properties.version[position]!;
      case 'properties.proj:code': return properties.crs[position] ?? Number.NaN;
    }
  });
  const compare = field === 'properties.version' || field === 'properties.proj:code' ? compareNumbersWithin : compareValues;
  // An entry without the value (NaN) has no rank: it sorts after the others either way (`sortPositions`).
  const order = keys.map((_, position) => position).filter((position) => !Number.isNaN(keys[position])).sort((a, b) => compare(keys[a]!, keys[b]!));
  const ranks = new Int32Array(keys.length).fill(MISSING);
  order.forEach((position, rank) => {
    const previous = order[rank - 1];
    ranks[position] = rank > 0 && keys[previous!] === keys[position] ? ranks[previous!]! : rank;
  });
  cached.set(field, ranks);
  return ranks;
}

function compareValues(a: string | number, b: string | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Versions and CRS codes compare by the numbers in them ("2.10.0" after "2.9.1", "EPSG:32633" after "EPSG:4326"),
 * the rest of the text by the root collation, which no locale changes.
 */
const NUMBERS_WITHIN = new Intl.Collator('und', { numeric: true, sensitivity: 'variant' });
function compareNumbersWithin(a: string | number, b: string | number): number {
  return NUMBERS_WITHIN.compare(String(a), String(b)) || compareValues(a, b);
}

/** The rank of an entry that has no value for a sort field. */
const MISSING = -1;

/**
 * Sorts positions by keys (rank per entry, sign 1 ascending, −1 descending), an entry without a value after those
 * with one in either direction, ties in catalog order.
 */
function sortPositions(positions: Int32Array, keys: { ranks: Int32Array; sign: number }[]): Int32Array {
  return positions.sort((a, b) => {
    for (const { ranks, sign } of keys) {
      const rankA = ranks[a]!;
      const rankB = ranks[b]!;
      if (rankA === rankB) continue;
      if (rankA === MISSING) return 1;
      if (rankB === MISSING) return -1;
      return sign * (rankA - rankB);
    }
    return a - b;
  });
}

/**
 * Positions (in catalog order) by score, best first, ties in catalog order: a counting sort, since scores are small
 * integers, so ranking every Item costs two passes rather than a comparison sort.
 */
function sortByScore(positions: Int32Array, scores: Int32Array, into: Int32Array): Int32Array {
  let best = 0;
  for (let at = 0; at < positions.length; at++) best = Math.max(best, scores[positions[at]!]!);
  const starts = new Int32Array(best + 2);
  for (let at = 0; at < positions.length; at++) starts[best - scores[positions[at]!]! + 1]!++;
  for (let score = 1; score < starts.length; score++) starts[score]! += starts[score - 1]!;
  const sorted = into.subarray(0, positions.length);
  for (let at = 0; at < positions.length; at++) {
    const position = positions[at]!;
    sorted[starts[best - scores[position]!]!++] = position;
  }
  return sorted;
}
