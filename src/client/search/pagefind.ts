import { SITE_PATHS } from '../../../core/site/paths.ts';

/** Folder of Pagefind's index in the site; its `pagefind.js` finds the other files next to itself. */
export const PAGEFIND_DIR = `${SITE_PATHS.assets}pagefind/`;

/** The one language of the index: every record is indexed as English, whatever `<html lang>` says. */
export const PAGEFIND_LANGUAGE = 'en';

/** The script the search page imports at run time. */
export const PAGEFIND_URL = `${PAGEFIND_DIR}pagefind.js`;

/** Meta fields the index builder (generator/emit/site/search-index.ts) stores with each dataset. */
export type DatasetMeta = {
  title?: string;
  collection?: string;
  /** Tags joined by `TAG_SEPARATOR`. */
  tags?: string;
};

/** Separates the tags inside the one `tags` meta string (Pagefind meta values are strings); a tag holds no line break. */
export const TAG_SEPARATOR = '\n';

/** One loaded result: the part of Pagefind's fragment the page shows. */
export interface PagefindResultData {
  url: string;
  /** Text around the match with `<mark>` around matched words; other HTML is escaped by Pagefind. */
  excerpt: string;
  meta: DatasetMeta;
}

/** One hit; its data is loaded on demand, a small file per dataset. */
export interface PagefindResult {
  id: string;
  score: number;
  data(): Promise<PagefindResultData>;
}

/** What a search returns: every hit, best first. */
export interface PagefindSearch {
  results: PagefindResult[];
  unfilteredResultCount: number;
}

/** Options of one search: filter values by filter name (`collection`, `tag`). */
export interface PagefindSearchOptions {
  filters?: Record<string, string | string[]>;
}

/** The part of Pagefind's browser API (pagefind.js 1.6) this site uses. */
export interface PagefindModule {
  options(options: Record<string, unknown>): Promise<void>;
  init(): Promise<void>;
  search(term: string, options?: PagefindSearchOptions): Promise<PagefindSearch>;
  preload(term: string, options?: PagefindSearchOptions): Promise<void>;
}

let loading: Promise<PagefindModule> | undefined;

/**
 * Loads Pagefind once per page and starts fetching its wasm and metadata, so that they are ready by the
 * time the person has typed a word. pagefind.js is written by the build, not bundled: it is imported from
 * its URL at run time.
 */
export function loadPagefind(): Promise<PagefindModule> {
  loading ??= (async () => {
    const pagefind = (await import(/* @vite-ignore */ PAGEFIND_URL)) as PagefindModule;
    // Result URLs are site paths; without a base URL Pagefind would put them under the bundle's folder.
    // No web worker: over 10,000 datasets the main thread gave the first result sooner in every run of
    // bench/search-bench.ts, with one script less to fetch; the build does not ship the worker.
    await pagefind.options({ baseUrl: '/', excerptLength: 24, noWorker: true });
    await pagefind.init();
    return pagefind;
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
