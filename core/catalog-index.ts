import type { CatalogModel, CollectionModel, DatasetModel, FileModel, FormatModel, StorageLocationModel } from './model.ts';
import { Derived, derivedKey, type ObjectMemo } from './derived.ts';
import { createSearchDocument, type SearchDocument } from './search.ts';
import { runAtOnce, type Sliced } from './slices.ts';
import { foldTagValue } from './tag-filters.ts';
import { StringTable } from './text.ts';

/** Build settings that documents depend on. */
export interface RenderSettings {
  baseUrl: string;
  storageBaseUrl: string;
}

/** A collection with lookups and search documents, in listing order. */
export interface CollectionEntry {
  collection: CollectionModel;
  datasetsBySlug: Map<string, DatasetModel>;
  /** Search documents in listing order, prepared on first use (a build that skips a collection never needs them). */
  readonly documents: SearchDocument[];
  /** Tag key → display values, one spelling per folded value, sorted. An object without prototype: use `Object.hasOwn`. */
  tags: Record<string, string[]>;
}

/** The catalog model with the lookups every answer needs. Built once by the generator and once at server start. */
export interface CatalogIndex {
  model: CatalogModel;
  settings: RenderSettings;
  collections: Map<string, CollectionEntry>;
  datasetsById: Map<number, { collection: CollectionModel; dataset: DatasetModel }>;
  formatsById: Map<number, FormatModel>;
  storageById: Map<number, StorageLocationModel>;
  /** What answers derive from this index once and keep as long as it lives (the STAC search index, …). */
  derived: Derived;
}

/** Search documents by dataset object. */
const SEARCH_DOCUMENTS = derivedKey<ObjectMemo<DatasetModel, SearchDocument>>('search documents');

/** The tokens of the index's search documents, each distinct one a single string; others may intern theirs here too. */
export const TOKEN_STRINGS = derivedKey<StringTable>('token strings');

/** Builds the lookups of a catalog model. */
export function createCatalogIndex(model: CatalogModel, settings: RenderSettings): CatalogIndex {
  return runAtOnce(catalogIndexSlices(model, settings));
}

/**
 * Builds the lookups of a catalog model, pausing every few dozen datasets. A server reload passes the index it
 * replaces, whose derived values the new one takes over for the datasets and files that did not change.
 */
export function* catalogIndexSlices(model: CatalogModel, settings: RenderSettings, previous?: CatalogIndex): Sliced<CatalogIndex> {
  const derived = new Derived(previous?.derived);
  const documentsByDataset = derived.memo(SEARCH_DOCUMENTS);
  const strings = derived.set(TOKEN_STRINGS, new StringTable());
  const collections = new Map<string, CollectionEntry>();
  const datasetsById = new Map<number, { collection: CollectionModel; dataset: DatasetModel }>();
  for (const collection of model.collections) {
    const datasetsBySlug = new Map<string, DatasetModel>();
    for (const dataset of collection.datasets) {
      datasetsBySlug.set(dataset.slug, dataset);
      datasetsById.set(dataset.id, { collection, dataset });
      if (datasetsBySlug.size % SLICE_DATASETS === 0) yield;
    }
    const tags = yield* collectTags(collection.datasets);
    let documents: SearchDocument[] | undefined;
    collections.set(collection.slug, {
      collection,
      datasetsBySlug,
      get documents() {
        return (documents ??= collection.datasets.map((dataset) => documentsByDataset.getOrMake(dataset, () => createSearchDocument(dataset, strings))));
      },
      tags,
    });
  }
  return {
    model,
    settings,
    collections,
    datasetsById,
    formatsById: new Map(model.formats.map((format) => [format.id, format])),
    storageById: new Map(model.storageLocations.map((location) => [location.id, location])),
    derived,
  };
}

/** Datasets between two pauses of sliced work over a collection. */
const SLICE_DATASETS = 64;

function* collectTags(datasets: DatasetModel[]): Sliced<Record<string, string[]>> {
  const byKey = new Map<string, Map<string, string>>();
  let seen = 0;
  for (const dataset of datasets) {
    if (++seen % SLICE_DATASETS === 0) yield;
    for (const [key, value] of Object.entries(dataset.tags)) {
      const values = byKey.get(key) ?? new Map<string, string>();
      byKey.set(key, values);
      for (const spelling of Array.isArray(value) ? value : [value]) {
        const folded = foldTagValue(spelling);
        const known = values.get(folded);
        if (known === undefined || spelling < known) values.set(folded, spelling);
      }
    }
  }
  // Keys come from records and are looked up with keys from requests: no prototype, so `constructor` is not a key.
  const tags: Record<string, string[]> = Object.create(null);
  for (const key of [...byKey.keys()].sort()) {
    tags[key] = [...byKey.get(key)!.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, spelling]) => spelling);
  }
  return tags;
}

/** Finds a file of a dataset by slug. */
export function findFile(dataset: DatasetModel, slug: string): FileModel | undefined {
  return dataset.files.find((file) => file.slug === slug);
}
