import { loadSearchEngine, type SearchHit } from './search-engine.ts';
import { renderResult } from './render-result.ts';
import { describeFilters, describeResultCount, readSearchState, writeSearchUrl, type SearchState } from './search-state.ts';

/** Results shown at first and added by each "Show more": each one costs a small fetch. */
const PAGE_SIZE = 10;
/** Wait after the last key before searching; the index chunks of the words are preloaded meanwhile. */
const DEBOUNCE_MS = 120;
const HINT = 'Type a word to search every dataset: a title, a place, a tag, a column or a file name.';

/** The elements of SearchApp.astro that the app drives, found by their `data-search-*` attributes. */
interface SearchElements {
  form: HTMLFormElement;
  input: HTMLInputElement;
  filters: HTMLElement;
  status: HTMLElement;
  results: HTMLOListElement;
  more: HTMLButtonElement;
}

/**
 * Runs the search page: results update as the person types, `q` stays in the URL, and a live region says
 * how many datasets match. `root.dataset.state` is `idle`, `searching`, `done` or `error`, for tests.
 */
export function startSearchApp(root: HTMLElement): void {
  const elements = findElements(root);
  const state = readSearchState(location.search);
  let hits: SearchHit[] = [];
  let shown = 0;
  // Each search takes a new generation; an answer that arrives after a newer search started is dropped.
  let generation = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const filters = () => ({ collection: state.collection, tag: state.tag });

  async function run(): Promise<void> {
    clearTimeout(timer);
    const mine = ++generation;
    history.replaceState(history.state, '', writeSearchUrl(new URL(location.href), state));
    const typed = state.query;
    const query = typed.trim();
    // The previous results stay, dimmed, until the new ones replace them: no flash of an empty list per key.
    elements.more.hidden = true;
    if (query === '') {
      showHits([]);
      elements.status.textContent = HINT;
      root.dataset.state = 'idle';
      return;
    }
    root.dataset.state = 'searching';
    try {
      const engine = await loadSearchEngine();
      // Untrimmed: a space after the last word says it is finished, so longer words that start with it score less.
      const found = await engine.search(typed, filters());
      if (mine !== generation) return;
      showHits(found);
      elements.status.textContent = describeResultCount(hits.length, query);
      await appendResults(mine);
      if (mine === generation) root.dataset.state = 'done';
    } catch (error) {
      if (mine !== generation) return;
      showHits([]);
      elements.status.textContent = `Search could not run: ${error instanceof Error ? error.message : String(error)}. Reload the page to try again.`;
      root.dataset.state = 'error';
    }
  }

  function showHits(next: SearchHit[]): void {
    hits = next;
    shown = 0;
    elements.results.replaceChildren();
    elements.more.hidden = true;
  }

  /** Appends the next page of results in rank order, each as soon as its data (and those above it) arrived. */
  async function appendResults(mine: number): Promise<HTMLLIElement[]> {
    // Hidden while a page loads, so a second click cannot start the same page again.
    elements.more.hidden = true;
    const loading = hits.slice(shown, shown + PAGE_SIZE).map((hit) => hit.load());
    const items: HTMLLIElement[] = [];
    for (const data of loading) {
      const loaded = await data;
      if (mine !== generation) return items;
      const item = renderResult(loaded);
      elements.results.append(item);
      items.push(item);
      shown += 1;
    }
    updateMore();
    return items;
  }

  function updateMore(): void {
    const left = hits.length - shown;
    elements.more.hidden = left <= 0;
    elements.more.textContent = `Show ${Math.min(left, PAGE_SIZE)} more of ${hits.length.toLocaleString('en-US')}`;
  }

  elements.input.value = state.query;
  showFilters(elements.filters, state);
  elements.input.addEventListener('input', () => {
    state.query = elements.input.value;
    clearTimeout(timer);
    timer = setTimeout(() => void run(), DEBOUNCE_MS);
    if (state.query.trim() === '') return;
    // Fetch the words' index chunks while the person is still typing; no file is fetched twice.
    loadSearchEngine().then((engine) => engine.preload(state.query, filters())).catch(() => undefined);
  });
  elements.form.addEventListener('submit', (event) => {
    event.preventDefault();
    state.query = elements.input.value;
    void run();
  });
  elements.more.addEventListener('click', async () => {
    const items = await appendResults(generation);
    // Focus moves to the first new result so a keyboard user carries on reading where the list grew.
    items[0]?.querySelector('a')?.focus();
  });
  root.querySelector('[data-search-hint]')?.removeAttribute('hidden');
  // Fetch the index's metadata at once, so a query only has its own chunks left to load.
  loadSearchEngine().catch(() => undefined);
  void run();
}

function findElements(root: HTMLElement): SearchElements {
  const find = <T extends Element>(name: string, type: new () => T): T => {
    const element = root.querySelector(`[data-search-${name}]`);
    if (!(element instanceof type)) throw new Error(`the search page has no ${name} element`);
    return element;
  };
  return {
    form: find('form', HTMLFormElement),
    input: find('input', HTMLInputElement),
    filters: find('filters', HTMLElement),
    status: find('status', HTMLElement),
    results: find('results', HTMLOListElement),
    more: find('more', HTMLButtonElement),
  };
}

/** Names the filters from the URL, with a link that drops them; hidden when there are none. */
function showFilters(target: HTMLElement, state: SearchState): void {
  const text = describeFilters(state);
  target.hidden = text === '';
  if (text === '') return;
  const link = document.createElement('a');
  link.href = writeSearchUrl(new URL(location.href), { ...state, collection: undefined, tag: undefined });
  link.textContent = 'Search every dataset';
  target.replaceChildren(`Showing datasets ${text}. `, link);
}
