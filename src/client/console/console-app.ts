/**
 * The SQL console: sources, editor, mode, and the result (table, pages, map), wired to the markup of
 * ConsoleApp.astro. A shared link restores its sources and SQL; the query runs when the person presses Run, so
 * opening a link never starts work (or a 35 MB download) that its reader has not seen.
 */
import { createErrorView, type ConsoleError } from './error-view.ts';
import { createModeChoice, type ModeChoice } from './mode-choice.ts';
import { createQueryClient, QueryCallError, type QueryClient } from './query-client.ts';
import { createServerCursor, turnPage, type ResultCursor } from './result-cursor.ts';
import { createResultMap, type ResultMap } from './result-map.ts';
import { createResultView, describePage } from './result-view.ts';
import { formatBytes } from '../../format.ts';
import { resolveSourceLink, toSourceLink, toSourceReference, type ConsoleSource } from './source-catalog.ts';
import { createSourcePanel, type SourcePanel } from './source-panel.ts';
import { createSqlEditor, type SqlEditor } from './sql-editor.ts';
import { formatConsoleLink, parseConsoleLink } from './url-state.ts';
import type { BrowserQueryError } from './browser-query.ts';

/** Most geometries in-browser SQL draws on the map. */
const MAX_MAP_FEATURES = 20_000;

/** Settings the page passes on the console element (`data-query-origin`, `data-browser-sql-limit`). */
export interface ConsoleSettings {
  /** '' for the query service on this site, or its origin. */
  queryOrigin: string;
  /** Largest file in-browser SQL reads, in bytes. */
  browserLimitBytes: number;
}

/** The console on one page: the long-lived state of sources, editor, mode and the result being browsed. */
export class ConsoleApp {
  readonly #root: HTMLElement;
  readonly #settings: ConsoleSettings;
  readonly #client: QueryClient;
  readonly #panel: SourcePanel;
  readonly #editor: SqlEditor;
  readonly #mode: ModeChoice;
  readonly #view: ReturnType<typeof createResultView>;
  readonly #errors: ReturnType<typeof createErrorView>;
  readonly #map: ResultMap;
  readonly #status: HTMLElement;
  readonly #pageSize: HTMLSelectElement;
  #cursor: ResultCursor | null = null;
  /** Counts runs and page turns, so an answer that arrives after a newer request is dropped. */
  #generation = 0;
  /** The restoring of a link's sources, which a Run pressed meanwhile waits for. */
  #restoring: Promise<void> = Promise.resolve();

  constructor(root: HTMLElement, settings: ConsoleSettings) {
    const find = <T extends Element>(selector: string) => root.querySelector<T>(selector)!;
    this.#root = root;
    this.#settings = settings;
    this.#client = createQueryClient(settings.queryOrigin);
    const link = parseConsoleLink(location.search);
    this.#status = find('[data-status]');
    this.#pageSize = find('[data-page-size]');
    this.#errors = createErrorView(find('[data-error]'));
    this.#view = createResultView(root, (direction) => void this.#turn(direction));
    this.#map = createResultMap(find('[data-map]'), find('[data-map-status]'));
    this.#mode = createModeChoice(root, { origin: settings.queryOrigin, browserLimitBytes: settings.browserLimitBytes, requested: link.mode });
    this.#editor = createSqlEditor(find('[data-sql]'), { onRun: () => void this.run(), onEdit: () => this.#editor.mark(null) });
    this.#panel = createSourcePanel(root, { browserLimitBytes: settings.browserLimitBytes, onChange: (sources) => this.#onSources(sources) });
    find<HTMLFormElement>('[data-query-form]').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.run();
    });
    find('[data-copy-link]').addEventListener('click', () => void this.#copyLink());
    if (link.sql) this.#editor.setValue(link.sql);
    if (link.sources.length) this.#restoring = this.#restore(link.sources).catch(() => undefined);
    root.dataset.state = 'idle';
  }

  /** Runs the editor's SQL over the picked sources in the chosen mode. */
  async run(): Promise<void> {
    // Run pressed before a link's sources are back runs over them, not over none ("Add a source first").
    await this.#restoring;
    const sql = this.#editor.value();
    const sources = this.#panel.list();
    const generation = ++this.#generation;
    this.#errors.clear();
    this.#editor.mark(null);
    this.#panel.mark(null);
    if (sql.trim() === '') return this.#fail({ code: 'sql_empty', message: 'Write a SELECT statement first.' }, sql);
    const mode = this.#mode.current();
    if (mode === 'server' && sources.length === 0) {
      return this.#fail({ code: 'no_sources', message: 'Add a source first: pick a dataset, a file and a version above; its alias is the table name in the SQL.' }, sql);
    }
    history.replaceState(history.state, '', `${location.pathname}${formatConsoleLink({ sources: sources.map(toSourceLink), sql, mode: mode === 'browser' ? 'browser' : null })}${location.hash}`);
    this.#setState('running', mode === 'server' ? `Running on the query service at ${this.#client.where}…` : 'Running in this browser…');
    const started = performance.now();
    try {
      if (mode === 'server') await this.#runOnServer(sources, sql, generation);
      else await this.#runInBrowser(sources, sql, generation);
      if (generation !== this.#generation || !this.#cursor) return;
      const seconds = ((performance.now() - started) / 1000).toFixed(2);
      this.#setState('done', `${describePage(this.#cursor.page)} First rows on screen ${seconds} s after Run.`);
    } catch (error) {
      if (generation === this.#generation) this.#fail(toConsoleError(error), sql);
    }
  }

  async #runOnServer(sources: readonly ConsoleSource[], sql: string, generation: number): Promise<void> {
    const pageSize = Number(this.#pageSize.value);
    const result = await this.#client.run({ sources: sources.map(toSourceReference), sql, limit: pageSize });
    if (generation !== this.#generation) return;
    this.#show(createServerCursor(this.#client, result, pageSize));
    const configuration = result.map_configuration;
    if (configuration) void this.#map.showTiles(configuration, result.query_token, this.#client.bounds(configuration, result.query_token));
    else this.#map.hide();
  }

  async #runInBrowser(sources: readonly ConsoleSource[], sql: string, generation: number): Promise<void> {
    const limit = this.#settings.browserLimitBytes;
    const tooLarge = sources.find((source) => source.version.bytes === null || source.version.bytes > limit);
    if (tooLarge) {
      const size = tooLarge.version.bytes === null ? 'of unknown size' : formatBytes(tooLarge.version.bytes);
      this.#panel.mark(tooLarge.alias);
      throw Object.assign(new Error(`Source ${tooLarge.alias} is ${size}; in-browser SQL reads files up to ${formatBytes(limit)}. Run it on the query service instead.`), { code: 'too_large_for_browser' });
    }
    const progress = (message: string) => {
      if (generation === this.#generation) this.#status.textContent = message;
    };
    const { loadBrowserEngine } = await import('./browser-engine.ts');
    const engine = await loadBrowserEngine(progress);
    await engine.load(sources, progress);
    const query = await engine.run(sql);
    const pageSize = Number(this.#pageSize.value);
    const first = await query.page(0, pageSize);
    if (generation !== this.#generation) return;
    this.#show({ page: first, earlier: [], fetch: (offset) => query.page(offset, pageSize) });
    if (!query.geometryColumn) return this.#map.hide();
    void query.features(MAX_MAP_FEATURES).then((features) => {
      if (generation === this.#generation) void this.#map.showFeatures(features, query.totalRows);
    });
  }

  #show(cursor: ResultCursor): void {
    this.#cursor = cursor;
    this.#view.show(cursor.page, cursor.earlier.length > 0);
  }

  async #turn(direction: -1 | 1): Promise<void> {
    const cursor = this.#cursor;
    if (!cursor) return;
    const generation = ++this.#generation;
    const pressed = document.activeElement;
    this.#view.busy();
    this.#setState('running', direction === 1 ? 'Loading the next page…' : 'Loading the previous page…');
    try {
      await turnPage(cursor, direction);
      if (generation !== this.#generation) return;
      this.#show(cursor);
      this.#setState('done', describePage(cursor.page));
      // A pager button that became disabled loses focus; keep the person in the results instead.
      if (pressed instanceof HTMLButtonElement && pressed.disabled) this.#root.querySelector<HTMLElement>('[data-results-title]')?.focus();
    } catch (error) {
      if (generation !== this.#generation) return;
      this.#show(cursor);
      this.#fail(toConsoleError(error), this.#editor.value());
    }
  }

  #fail(error: ConsoleError, sql: string): void {
    const aliases = this.#panel.list().map((source) => source.alias);
    const canUseBrowser = this.#panel.list().every((source) => source.version.bytes !== null && source.version.bytes <= this.#settings.browserLimitBytes);
    const location = this.#errors.show(error, sql, aliases, {
      reveal: (range) => this.#editor.reveal(range),
      ...(canUseBrowser ? { useBrowser: () => { this.#mode.select('browser'); void this.run(); } } : {}),
    });
    if (location.range) this.#editor.mark(location.range);
    if (location.alias !== undefined) this.#panel.mark(location.alias);
    this.#setState('error', 'The query failed; the error is shown above the Run button.');
  }

  #setState(state: 'idle' | 'running' | 'done' | 'error', message: string): void {
    this.#root.dataset.state = state;
    this.#root.querySelector('[data-results]')?.setAttribute('aria-busy', String(state === 'running'));
    this.#status.textContent = message;
  }

  #onSources(sources: ConsoleSource[]): void {
    this.#editor.setSources(sources);
    this.#panel.mark(null);
    if (this.#editor.value().trim() === '' && sources.length === 1) this.#editor.setValue(`SELECT *\nFROM ${sources[0]!.alias}`);
  }

  async #restore(links: ReturnType<typeof parseConsoleLink>['sources']): Promise<void> {
    this.#status.textContent = 'Restoring the sources of the link…';
    const settled = await Promise.allSettled(links.map(resolveSourceLink));
    const sources = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    const missing = settled.flatMap((outcome, index) => (outcome.status === 'rejected' ? [`${links[index]!.alias} (${(outcome.reason as Error).message})`] : []));
    this.#panel.replace(sources);
    this.#editor.setSources(sources);
    this.#status.textContent = missing.length
      ? `Some sources of the link could not be restored: ${missing.join('; ')}.`
      : `The link's ${sources.length === 1 ? 'source and query are' : `${sources.length} sources and query are`} restored; press Run to run it.`;
  }

  async #copyLink(): Promise<void> {
    const sources = this.#panel.list().map(toSourceLink);
    const mode = this.#mode.current() === 'browser' ? 'browser' : null;
    history.replaceState(history.state, '', `${location.pathname}${formatConsoleLink({ sources, sql: this.#editor.value(), mode })}`);
    try {
      await navigator.clipboard.writeText(location.href);
      this.#status.textContent = 'The link to this query is copied.';
    } catch {
      this.#status.textContent = 'The address bar now holds the link to this query; copy it from there.';
    }
  }
}

function toConsoleError(error: unknown): ConsoleError {
  if (error instanceof QueryCallError) return { code: error.code, message: error.message, status: error.status, retryAfter: error.retryAfter };
  // By name: an instanceof check would pull the in-browser engine's module into the console's first chunk.
  if (error instanceof Error && error.name === 'BrowserQueryError') return { code: 'duckdb_error', message: error.message, position: (error as BrowserQueryError).position };
  const code = (error as { code?: unknown }).code;
  return { code: typeof code === 'string' ? code : 'browser_error', message: error instanceof Error ? error.message : String(error) };
}
