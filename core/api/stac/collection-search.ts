import type { Cql2PropertyType } from '../../cql2/check.ts';
import { compileCql2Test } from '../../cql2/evaluate.ts';
import { foldText } from '../../text.ts';
import type { CatalogIndex } from '../../catalog-index.ts';
import type { TimeInterval } from '../extent-params.ts';
import { createLiteralTests, type StacFilter } from './filter.ts';
import { createBoxTest, stacSearchIndex, stacTextIndex, type StacSearchIndex } from './search.ts';
import { scoreFreeText } from './text-index.ts';

/**
 * STAC API Collection Search: the Collections (datasets) filtered by what their Items hold. A Collection meets a
 * `bbox`, a `datetime` or a spatial filter when one of its Items does, and matches free text by its best Item, so the
 * answers agree with item search over the same Items.
 */

/** The queryables of Collections, with their types. */
export const STAC_COLLECTION_QUERYABLES: ReadonlyMap<string, Cql2PropertyType> = new Map<string, Cql2PropertyType>([
  ['id', 'string'], ['title', 'string'], ['description', 'string'], ['license', 'string'], ['geometry', 'geometry'],
]);

/** The fields Collections sort on. */
export const STAC_COLLECTION_SORT_FIELDS = ['id', 'title'] as const;

/** One key of a Collection sort. */
export interface StacCollectionSortKey {
  field: (typeof STAC_COLLECTION_SORT_FIELDS)[number];
  direction: 'asc' | 'desc';
}

/** What a Collection search asks for; every part optional, combined with AND. */
export interface StacCollectionSearch {
  bbox?: readonly number[];
  datetime?: TimeInterval;
  q?: readonly (readonly string[])[];
  /** A read filter (core/api/stac/filter.ts) and GEOS's verdicts for its geometry literals, per Item. */
  filter?: { filter: StacFilter; hits: (Uint8Array | undefined)[] };
  sortby?: readonly StacCollectionSortKey[];
}

/** The Collections a search matches, as their ids in answer order: by the sort keys, else best free-text match, else catalog order. */
export function searchStacCollections(index: CatalogIndex, request: StacCollectionSearch): string[] {
  const search = stacSearchIndex(index);
  const collections = [...search.collections.entries()].map(([id, range]) => ({ id, ...range }));
  const anyItem = (range: { first: number; end: number }, test: (position: number) => boolean) => {
    for (let position = range.first; position < range.end; position++) if (test(position)) return true;
    return false;
  };
  const box = request.bbox && createBoxTest(search, request.bbox);
  const start = request.datetime?.start ?? -Infinity;
  const end = request.datetime?.end ?? Infinity;
  const scores = request.q && request.q.length > 0 ? scoreFreeText(stacTextIndex(index, search), request.q) : undefined;
  const test = request.filter && createCollectionFilterTest(search, collections, request.filter);
  const matched: { id: string; order: number; score: number; title: string }[] = [];
  collections.forEach((range, order) => {
    if (box && !anyItem(range, box)) return;
    if (request.datetime && !anyItem(range, (position) => search.times[position]! >= start && search.times[position]! <= end)) return;
    let score = 0;
    if (scores) {
      for (let position = range.first; position < range.end; position++) score = Math.max(score, scores[position]!);
      if (score === 0) return;
    }
    if (test && !test(order)) return;
    matched.push({ id: range.id, order, score, title: foldText(range.dataset.name) });
  });
  const keys = request.sortby ?? [];
  matched.sort((a, b) => {
    for (const { field, direction } of keys) {
      const [x, y] = field === 'id' ? [a.id, b.id] : [a.title, b.title];
      if (x !== y) return (x < y ? -1 : 1) * (direction === 'asc' ? 1 : -1);
    }
    return keys.length === 0 && scores ? b.score - a.score || a.order - b.order : a.order - b.order;
  });
  return matched.map((entry) => entry.id);
}

/** A filter's test of Collections (by their order): properties of the dataset, geometry by any of its Items. */
function createCollectionFilterTest(search: StacSearchIndex, collections: { id: string; first: number; end: number; dataset: { name: string; description?: string; license?: string } }[], { filter, hits }: NonNullable<StacCollectionSearch['filter']>) {
  const meets = createLiteralTests(search, filter, hits);
  return compileCql2Test<number>(filter.expression, {
    properties: STAC_COLLECTION_QUERYABLES,
    read: (name, order) => {
      const { id, dataset } = collections[order]!;
      return name === 'id' ? id : name === 'title' ? dataset.name : name === 'description' ? (dataset.description ?? null) : (dataset.license ?? null);
    },
    meets: (literal, order) => {
      const { first, end } = collections[order]!;
      for (let position = first; position < end; position++) if (meets[literal]!(position)) return true;
      return false;
    },
  });
}
