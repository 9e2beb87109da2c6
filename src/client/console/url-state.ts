/**
 * The console's shareable state in the page address: `?source=alias:collection/dataset/file@version&sql=…`.
 * Sources are named by slugs and version labels rather than numeric ids, so a link stays readable and keeps
 * working after a rebuild that renumbers nothing but could.
 */

/** A table name a query may use (the query service's `SourceReference.alias` pattern). */
export const ALIAS_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Most sources one query may read (`QueryRequest.sources`). */
export const MAX_SOURCES = 8;

/** Where a query runs: on the query service, or in this browser with DuckDB-wasm. */
export type ConsoleMode = 'server' | 'browser';

/** A source as a link names it; `version` null means the newest. */
export interface SourceLink {
  alias: string;
  collection: string;
  dataset: string;
  file: string;
  version: string | null;
}

/** Everything a shared link restores. `mode` null leaves the choice to the console. */
export interface ConsoleLinkState {
  sources: SourceLink[];
  sql: string;
  mode: ConsoleMode | null;
}

/**
 * Reads a source written by {@link formatSourceLink}; null when it is not one.
 * @example parseSourceLink('c:geonames/cities/cities-1000@3.1.0') // { alias: 'c', collection: 'geonames', … }
 */
export function parseSourceLink(text: string): SourceLink | null {
  const match = /^([^:]+):([^/]+)\/([^/]+)\/([^/@]+)(?:@(.+))?$/.exec(text);
  if (!match || !ALIAS_PATTERN.test(match[1]!)) return null;
  const [, alias, collection, dataset, file, version] = match as unknown as [string, string, string, string, string, string | undefined];
  return { alias, collection, dataset, file, version: version ?? null };
}

/** Writes a source as `alias:collection/dataset/file@version`. */
export function formatSourceLink(link: SourceLink): string {
  const path = `${link.alias}:${link.collection}/${link.dataset}/${link.file}`;
  return link.version === null ? path : `${path}@${link.version}`;
}

/** Reads the console state from a query string (`location.search`); unreadable sources are skipped. */
export function parseConsoleLink(search: string): ConsoleLinkState {
  const params = new URLSearchParams(search);
  const sources = params.getAll('source').map(parseSourceLink).filter((link) => link !== null).slice(0, MAX_SOURCES);
  const mode = params.get('mode');
  return { sources, sql: params.get('sql') ?? '', mode: mode === 'browser' || mode === 'server' ? mode : null };
}

/**
 * Writes the console state as a query string that stays readable: `/`, `:`, `@`, `,` and `*` stay as they are,
 * spaces become `+`.
 * @example formatConsoleLink({ sources: [link], sql: 'SELECT count(*) FROM c', mode: null })
 * // '?source=c:geonames/cities/cities-1000@3.1.0&sql=SELECT+count(*)+FROM+c'
 */
export function formatConsoleLink(state: ConsoleLinkState): string {
  const pairs = state.sources.map((link) => ['source', formatSourceLink(link)]);
  if (state.sql.trim() !== '') pairs.push(['sql', state.sql]);
  if (state.mode !== null) pairs.push(['mode', state.mode]);
  if (pairs.length === 0) return '';
  return `?${pairs.map(([name, value]) => `${name}=${encodeQueryValue(value!)}`).join('&')}`;
}

function encodeQueryValue(value: string): string {
  return encodeURIComponent(value)
    .replace(/%20/g, '+')
    .replace(/%(2F|3A|40|2C)/gi, (escape) => decodeURIComponent(escape));
}

/**
 * A default alias for a file slug: a valid table name, different from the ones taken.
 * @example suggestAlias('cities-1000', ['cities_1000']) // 'cities_1000_2'
 */
export function suggestAlias(slug: string, taken: readonly string[]): string {
  let base = slug.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 56) || 't';
  if (!/^[a-z_]/.test(base)) base = `t_${base}`;
  const used = new Set(taken.map((alias) => alias.toLowerCase()));
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) if (!used.has(`${base}_${n}`)) return `${base}_${n}`;
}
