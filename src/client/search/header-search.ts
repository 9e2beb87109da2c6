import { PAGEFIND_DIR, PAGEFIND_LANGUAGE } from './pagefind.ts';

/**
 * Pagefind's files that every search needs, whatever the query; fetched early, the search page finds them in
 * its cache (checked in Chromium). The metadata's name changes with each build, so it is left to the page.
 */
const WARM_FILES = ['pagefind.js', `wasm.${PAGEFIND_LANGUAGE}.pagefind`];

/**
 * Progressive enhancement of a plain search form (a GET form to /search/): the first time its box gets focus,
 * the browser prefetches Pagefind's script and wasm at low priority, so the search page opens with them in
 * its cache. Pages that never see a focus in the box load nothing.
 */
export function prefetchSearchOnFocus(form: HTMLFormElement): void {
  form.addEventListener(
    'focusin',
    () => {
      for (const file of WARM_FILES) {
        const link = document.createElement('link');
        link.rel = 'prefetch';
        link.href = `${PAGEFIND_DIR}${file}`;
        document.head.append(link);
      }
    },
    { once: true },
  );
}
