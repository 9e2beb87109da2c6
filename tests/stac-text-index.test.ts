import { describe, expect, it } from 'vitest';
import type { CollectionModel, DatasetModel, FileModel } from '../core/model.ts';
import type { SearchDocument } from '../core/search.ts';
import { buildStacTextIndex, OWN_FILE_WEIGHT } from '../core/api/stac/text-index.ts';

/** Datasets with words of their own and shared ones, one file each: thousands of distinct tokens. */
function catalog(datasets: number) {
  const collection = {} as CollectionModel;
  const items: { collection: CollectionModel; dataset: DatasetModel; file: FileModel }[] = [];
  const documents = new Map<DatasetModel, SearchDocument>();
  for (let at = 0; at < datasets; at++) {
    const file = { name: `file${at}`, slug: `f${at}`, layer_name: null } as unknown as FileModel;
    const dataset = { files: [file] } as unknown as DatasetModel;
    items.push({ collection, dataset, file });
    // `own` in the name (weight 8) and again in the description (weight 1): its posting keeps the heavier weight.
    documents.set(dataset, { dataset, foldedTags: {}, fields: [
      { weight: 8, tokens: [`own${at}`, 'shared'] },
      { weight: 1, tokens: [`own${at}`, `desc${at % 7}`] },
    ] });
  }
  return { items, documents };
}

function postingsOf(index: ReturnType<typeof buildStacTextIndex>, token: string): [number, number][] {
  const rank = index.tokens.indexOf(token);
  if (rank < 0) return [];
  const postings: [number, number][] = [];
  for (let at = index.postingStart[rank]!; at < index.postingStart[rank + 1]!; at++) postings.push([index.postingUnit[at]!, index.postingWeight[at]!]);
  return postings;
}

describe('the STAC free-text index', () => {
  const datasets = 6000;
  const { items, documents } = catalog(datasets);
  const index = buildStacTextIndex(items, documents);

  it('lists every distinct token once, in code-unit order', () => {
    expect(index.tokens.length).toBe(new Set(index.tokens).size);
    expect(index.tokens).toEqual([...index.tokens].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(index.tokens.length).toBe(datasets * 3 + 1 + 7);
  });

  it.each([0, 1023, 1024, 4095, 5999])('gives the token of dataset %i one posting at its heaviest weight, and its file its own', (at) => {
    expect(postingsOf(index, `own${at}`)).toEqual([[at, 8]]);
    expect(postingsOf(index, `file${at}`)).toEqual([[datasets + at, OWN_FILE_WEIGHT]]);
  });

  it('gives a shared token a posting in every dataset', () => {
    expect(postingsOf(index, 'shared')).toHaveLength(datasets);
    expect(postingsOf(index, 'desc3').map(([unit]) => unit)).toEqual(Array.from({ length: datasets }, (_, at) => at).filter((at) => at % 7 === 3));
  });
});
