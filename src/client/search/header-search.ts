import { SEARCH_META_URL } from './search-engine.ts';

/**
 * Progressive enhancement of a plain search form (a GET form to /search/): the first time its box gets focus,
 * the browser prefetches the search index's metadata at low priority, so the search page opens with it in
 * its cache. Pages that never see a focus in the box load nothing.
 */
export function prefetchSearchOnFocus(form: HTMLFormElement): void {
  form.addEventListener(
    'focusin',
    () => {
      const link = document.createElement('link');
      link.rel = 'prefetch';
      link.href = SEARCH_META_URL;
      document.head.append(link);
    },
    { once: true },
  );
}
