/** What the search page shows, as kept in its URL: `/search/?q=term&collection=Name&tag=value`. */
export interface SearchState {
  /** The words typed, as typed. */
  query: string;
  /** Only datasets of this collection (its name), when set. */
  collection: string | undefined;
  /** Only datasets with this tag, when set. */
  tag: string | undefined;
}

/** Reads the search state from a page URL's query string. */
export function readSearchState(search: string): SearchState {
  const params = new URLSearchParams(search);
  return { query: params.get('q') ?? '', collection: params.get('collection') || undefined, tag: params.get('tag') || undefined };
}

/**
 * The page URL for a state, keeping any other parameter and the hash; an empty query drops `q`.
 * @example writeSearchUrl(new URL('https://x/search/'), { query: 'rivers', collection: undefined, tag: undefined }) // '/search/?q=rivers'
 */
export function writeSearchUrl(current: URL, state: SearchState): string {
  const params = new URLSearchParams(current.search);
  setParam(params, 'q', state.query.trim() === '' ? undefined : state.query);
  setParam(params, 'collection', state.collection);
  setParam(params, 'tag', state.tag);
  const query = params.toString();
  return `${current.pathname}${query ? `?${query}` : ''}${current.hash}`;
}

/**
 * The sentence the live region reads once results are in.
 * @example describeResultCount(12, 'cities') // '12 datasets match “cities”'
 */
export function describeResultCount(count: number, query: string): string {
  const term = `“${query.trim()}”`;
  if (count === 0) return `No dataset matches ${term}. Try fewer or shorter words.`;
  return `${count.toLocaleString('en-US')} ${count === 1 ? 'dataset matches' : 'datasets match'} ${term}`;
}

/** A line naming the active filters, such as `in Natural Earth, tagged “boundaries”`; empty without filters. */
export function describeFilters(state: SearchState): string {
  const parts = [state.collection ? `in ${state.collection}` : '', state.tag ? `tagged “${state.tag}”` : ''];
  return parts.filter((part) => part !== '').join(', ');
}

function setParam(params: URLSearchParams, name: string, value: string | undefined): void {
  if (value === undefined || value === '') params.delete(name);
  else params.set(name, value);
}
