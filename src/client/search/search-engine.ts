import { buildExcerpt, type ExcerptPart } from '../../../core/search/excerpt.ts';
import { SEARCH_FILES, SEARCH_INDEX_PATH, type SearchChunk, type SearchDocument, type SearchMeta } from '../../../core/search/format.ts';
import { listQueryChunks, prepareMeta, rankDocuments, type IndexQuery, type PreparedMeta } from '../../../core/search/rank.ts';
import { filterTerm, parseQuery } from '../../../core/search/terms.ts';

/** The index's metadata file, fetched once per page. */
export const SEARCH_META_URL = `${SEARCH_INDEX_PATH}${SEARCH_FILES.meta}`;

/** Only datasets of this collection (its name) or with this tag, when set. */
export interface SearchFilters {
  collection?: string | undefined;
  tag?: string | undefined;
}

/** What a result shows of a dataset; the excerpt is plain text runs, the matched words marked. */
export interface SearchResultView {
  url: string;
  title: string;
  collection: string;
  tags: string[];
  excerpt: ExcerptPart[];
}

/** One matching dataset; what it shows is fetched on demand, a small file per dataset. */
export interface SearchHit {
  id: number;
  score: number;
  load(): Promise<SearchResultView>;
}

/** The search index of the site, as the page uses it. */
export interface SearchEngine {
  /** Every dataset that matches all words (the last also as a prefix) and all filters, best first. */
  search(query: string, filters?: SearchFilters): Promise<SearchHit[]>;
  /** Starts fetching the chunks a query needs, so that the search after the typing pause finds them here. */
  preload(query: string, filters?: SearchFilters): void;
}

let loading: Promise<SearchEngine> | undefined;

/** Fetches the index's metadata once per page; chunks and result files are fetched by the searches. */
export function loadSearchEngine(): Promise<SearchEngine> {
  loading ??= fetchJson<SearchMeta>(SEARCH_META_URL).then((meta) => createEngine(prepareMeta(meta)));
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

function createEngine(meta: PreparedMeta): SearchEngine {
  // Every file is fetched once per page; a failed fetch is forgotten, so the next search tries again.
  const files = new Map<string, Promise<unknown>>();
  const load = <T>(path: string): Promise<T> => {
    let file = files.get(path);
    if (!file) {
      file = fetchJson<T>(`${SEARCH_INDEX_PATH}${path}`);
      files.set(path, file);
      file.catch(() => files.delete(path));
    }
    return file as Promise<T>;
  };
  const chunkPath = (key: string) => `${SEARCH_FILES.chunk(key)}?v=${meta.versions[key] ?? ''}`;
  const toQuery = (query: string, filters: SearchFilters = {}): IndexQuery => ({
    words: parseQuery(query),
    filters: [filters.collection && filterTerm('collection', filters.collection), filters.tag && filterTerm('tag', filters.tag)].filter((term): term is string => Boolean(term)),
  });

  return {
    async search(text, filters) {
      const query = toQuery(text, filters);
      const keys = listQueryChunks(meta, query);
      const chunks = new Map(await Promise.all(keys.map(async (key) => [key, await load<SearchChunk>(chunkPath(key))] as const)));
      return rankDocuments(meta, query, chunks).map(({ id, score }) => ({
        id,
        score,
        load: async () => {
          const document = await load<SearchDocument>(SEARCH_FILES.document(id));
          return { url: document.url, title: document.title, collection: document.collection, tags: document.tags, excerpt: buildExcerpt(document, query.words) };
        },
      }));
    },
    preload(text, filters) {
      for (const key of listQueryChunks(meta, toQuery(text, filters))) load(chunkPath(key)).catch(() => undefined);
    },
  };
}

async function fetchJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`the search index file ${url} answered ${response.status}`);
  return (await response.json()) as T;
}
