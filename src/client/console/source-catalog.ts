/**
 * The catalog as the console sees it: the datasets a person looks for in the picker (through the site's full-text
 * index), each dataset's queryable files and versions, and the sources a person has picked. Documents are fetched
 * once per page.
 */
import type { SourceReference } from '../../../schemas/query.ts';
import type { SiteQueryFile, SiteQuerySources, SiteQueryVersion } from '../../../schemas/site.ts';
import type { SourceLink } from './url-state.ts';

/** One dataset in the picker. */
export interface DatasetEntry {
  collection: string;
  dataset: string;
  name: string;
  collectionName: string;
}

/** A source picked for a query: what the request, the link, the completions and the in-browser engine need. */
export interface ConsoleSource {
  alias: string;
  collection: SiteQuerySources['collection'];
  dataset: SiteQuerySources['dataset'];
  file: Pick<SiteQueryFile, 'id' | 'slug' | 'name'>;
  version: SiteQueryVersion;
}

const querySources = new Map<string, Promise<SiteQuerySources>>();

/**
 * The datasets that match every word of `query` (a word of two letters or more also as the start of a longer one)
 * in their name, collection, tags, columns or files, best first: at most `max` of them, and how many match. The
 * site's full-text index answers, so the picker fetches the index chunks of the words typed and one small file per
 * dataset listed, whatever the size of the catalog (a list of every dataset was 1.3 MB compressed at 100,000).
 * @example await searchDatasets('nat cap', 20) // { matches: [{ name: 'National capitals', … }, …], total: … }
 */
export async function searchDatasets(query: string, max: number): Promise<{ matches: DatasetEntry[]; total: number }> {
  const { loadSearchEngine } = await import('../search/search-engine.ts');
  const hits = await (await loadSearchEngine()).search(query);
  const views = await Promise.all(hits.slice(0, max).map((hit) => hit.load()));
  const matches = views.flatMap(({ url, title, collection }) => {
    const slugs = /^\/collections\/([^/]+)\/datasets\/([^/]+)\/$/.exec(url);
    return slugs ? [{ collection: decodeURIComponent(slugs[1]!), dataset: decodeURIComponent(slugs[2]!), name: title, collectionName: collection }] : [];
  });
  return { matches, total: hits.length };
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
