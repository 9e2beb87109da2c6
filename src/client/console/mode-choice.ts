/**
 * Where queries run: on the query service, or in this browser. On static hosting no query service answers, so
 * the browser becomes the default and the note under the choice says why.
 */
import { probeQueryService } from './query-client.ts';
import { formatBytes } from '../../format.ts';
import type { ConsoleMode } from './url-state.ts';

/** The mode radios and their note. */
export interface ModeChoice {
  current(): ConsoleMode;
  /** Selects `mode`; `note` replaces the explanation under the choice. */
  select(mode: ConsoleMode, note?: string): void;
  /** Whether a query service answered the probe (null while it has not answered yet). */
  serviceAvailable(): boolean | null;
}

/** Options of {@link createModeChoice}. */
export interface ModeChoiceOptions {
  origin: string;
  browserLimitBytes: number;
  /** The mode a shared link asks for; null probes the service and picks. */
  requested: ConsoleMode | null;
}

/** Wires the radios (`input[name="console-mode"]`) and the note (`[data-mode-note]`) inside `root`. */
export function createModeChoice(root: HTMLElement, { origin, browserLimitBytes, requested }: ModeChoiceOptions): ModeChoice {
  const radios = [...root.querySelectorAll<HTMLInputElement>('input[name="console-mode"]')];
  const note = root.querySelector<HTMLElement>('[data-mode-note]')!;
  const where = origin === '' ? 'this site' : origin;
  const limit = formatBytes(browserLimitBytes);
  let available: boolean | null = null;
  let chosen = requested !== null;

  const describe = (mode: ConsoleMode) => mode === 'server'
    ? `Queries run on the query service at ${where}, which pages through results and maps them with tiles.`
    : `Queries run in this browser with DuckDB-wasm (about 35 MB, loaded on the first run), on files up to ${limit}. Spatial functions (ST_…) are not available here.`;
  const show = (mode: ConsoleMode, text?: string) => {
    for (const radio of radios) radio.checked = radio.value === mode;
    note.textContent = text ?? describe(mode);
  };
  for (const radio of radios) {
    radio.addEventListener('change', () => {
      chosen = true;
      show(radio.value as ConsoleMode);
    });
  }

  show(requested ?? 'server', requested ? undefined : `Checking for a query service at ${where}…`);
  void probeQueryService(origin).then((answered) => {
    available = answered;
    // A person who already chose keeps the choice.
    if (chosen) return;
    if (answered) show('server');
    else show('browser', `No query service answered at ${where} (the site may be on static hosting), so queries run in this browser with DuckDB-wasm, on files up to ${limit}.`);
  });

  return {
    current: () => (radios.find((radio) => radio.checked)?.value === 'browser' ? 'browser' : 'server'),
    select: (mode, text) => {
      chosen = true;
      show(mode, text);
    },
    serviceAvailable: () => available,
  };
}
