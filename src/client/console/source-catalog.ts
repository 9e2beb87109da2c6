/**
 * The catalog as the console sees it: the compact dataset list for the picker, each dataset's queryable files
 * and versions, and the sources a person has picked. Documents are fetched once per page.
 */
import { foldText } from '../../../core/text.ts';
import type { SourceReference } from '../../../schemas/query.ts';
import type { SiteQueryFile, SiteQuerySources, SiteQueryVersion } from '../../../schemas/site.ts';
import type { SourceLink } from './url-state.ts';

/** Address of the compact list of every dataset. */
export const DATASET_LIST_URL = '/_site/datasets.json';

/** One dataset in the picker, with its folded text for filtering. */
export interface DatasetEntry {
  collection: string;
  dataset: string;
  name: string;
  collectionName: string;
  folded: string;
}

/** A source picked for a query: what the request, the link, the completions and the in-browser engine need. */
export interface ConsoleSource {
  alias: string;
  collection: SiteQuerySources['collection'];
  dataset: SiteQuerySources['dataset'];
  file: Pick<SiteQueryFile, 'id' | 'slug' | 'name'>;
  version: SiteQueryVersion;
}

let datasetList: Promise<DatasetEntry[]> | undefined;
const querySources = new Map<string, Promise<SiteQuerySources>>();

/** The dataset list, fetched on first use; a failed fetch is retried on the next call. */
export function loadDatasetList(): Promise<DatasetEntry[]> {
  datasetList ??= import('./site-documents.ts')
    .then(({ fetchDatasetList }) => fetchDatasetList(DATASET_LIST_URL))
    .then(({ datasets }) => datasets.map(([collection, dataset, name, collectionName]) => ({
      collection, dataset, name, collectionName, folded: foldText(`${name} ${collectionName} ${collection} ${dataset}`),
    })));
  datasetList.catch(() => { datasetList = undefined; });
  return datasetList;
}

/**
 * The datasets whose text holds every word of `query`, at most `max` of them, in list order (by name).
 * @example filterDatasets(entries, 'nat cap', 50) // national capitals first…
 */
export function filterDatasets(entries: readonly DatasetEntry[], query: string, max: number): { matches: DatasetEntry[]; total: number } {
  const words = foldText(query).split(/\s+/).filter(Boolean);
  const matches: DatasetEntry[] = [];
  let total = 0;
  for (const entry of entries) {
    if (!words.every((word) => entry.folded.includes(word))) continue;
    total++;
    if (matches.length < max) matches.push(entry);
  }
  return { matches, total };
}

/** A dataset's queryable files and versions (`/collections/{c}/datasets/{d}/query-sources.json`). */
export function loadQuerySources(collection: string, dataset: string): Promise<SiteQuerySources> {
  const url = `/collections/${encodeURIComponent(collection)}/datasets/${encodeURIComponent(dataset)}/query-sources.json`;
  let loaded = querySources.get(url);
  if (!loaded) {
    loaded = import('./site-documents.ts').then(({ fetchQuerySources }) => fetchQuerySources(url));
    loaded.catch(() => querySources.delete(url));
    querySources.set(url, loaded);
  }
  return loaded;
}

/** Turns a source of a shared link back into a picked source; throws a message a person can act on. */
export async function resolveSourceLink(link: SourceLink): Promise<ConsoleSource> {
  const document = await loadQuerySources(link.collection, link.dataset).catch(() => {
    throw new Error(`dataset ${link.collection}/${link.dataset} is not in this catalog`);
  });
  const file = document.files.find((candidate) => candidate.slug === link.file);
  if (!file) throw new Error(`dataset ${link.dataset} has no file ${link.file}`);
  const version = link.version === null ? file.versions[0] : file.versions.find((candidate) => candidate.version === link.version);
  if (!version) throw new Error(`file ${link.file} has no queryable version ${link.version ?? ''}`.trim());
  return { alias: link.alias, collection: document.collection, dataset: document.dataset, file, version };
}

/** The link form of a picked source. */
export function toSourceLink(source: ConsoleSource): SourceLink {
  return { alias: source.alias, collection: source.collection.slug, dataset: source.dataset.slug, file: source.file.slug, version: source.version.version };
}

/** The query service's reference to a picked source. */
export function toSourceReference(source: ConsoleSource): SourceReference {
  return {
    alias: source.alias,
    collection_id: source.collection.id,
    dataset_id: source.dataset.id,
    file_id: source.file.id,
    file_source_id: source.version.file_source_id,
  };
}
