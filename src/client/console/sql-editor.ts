/**
 * The SQL editor: the page's plain <textarea> works at once; CodeMirror (SQL highlighting, completion of
 * aliases and columns) replaces it once a person comes to the editor, and the textarea stays if it fails to load.
 */
import type { ConsoleSource } from './source-catalog.ts';

/** A span of the SQL, as string indices (UTF-16 code units, as the query service reports offsets). */
export interface SqlRange {
  from: number;
  to: number;
}

/** What the console app asks of the editor, whichever implementation is behind it. */
export interface SqlEditor {
  value(): string;
  setValue(sql: string): void;
  /** Tables and columns to complete. */
  setSources(sources: readonly ConsoleSource[]): void;
  /** Highlights the span an error names (its whole line at least), or clears the highlight. */
  mark(range: SqlRange | null): void;
  /** Moves the caret to `range`, selects it and focuses the editor. */
  reveal(range: SqlRange): void;
  focus(): void;
}

/** Options of {@link createSqlEditor}. */
export interface SqlEditorOptions {
  /** Ctrl+Enter or Cmd+Enter. */
  onRun: () => void;
  /** Every edit; the console clears a stale error mark. */
  onEdit?: () => void;
}

/**
 * Wraps the page's textarea now and upgrades it to CodeMirror when a person comes to it: the pointer over it, or
 * focus (a click, Tab, or the console focusing it). Loading CodeMirror with the page held its main thread for
 * seconds on a phone-class CPU (Lighthouse counted most of the console's 5 s of blocking time there), and a person
 * reading a shared query needs none of it: the textarea shows the SQL, runs it with Ctrl+Enter and keeps the link's
 * SQL, and CodeMirror starts from what it holds.
 * @example const editor = createSqlEditor(textarea, { onRun: run }); editor.setValue('SELECT 1');
 */
export function createSqlEditor(textarea: HTMLTextAreaElement, options: SqlEditorOptions): SqlEditor {
  let current: SqlEditor = createTextareaEditor(textarea, options);
  let sources: readonly ConsoleSource[] = [];
  let marked: SqlRange | null = null;
  let upgrading = false;

  const upgrade = () => {
    if (upgrading) return;
    upgrading = true;
    import('./codemirror-editor.ts')
      .then(({ createCodeMirrorEditor }) => {
        const focused = document.activeElement === textarea;
        const selection = { from: textarea.selectionStart, to: textarea.selectionEnd };
        const upgraded = createCodeMirrorEditor(textarea, options);
        upgraded.setSources(sources);
        upgraded.mark(marked);
        current = upgraded;
        // The caret stays where the person put it in the textarea.
        if (focused) upgraded.reveal(selection);
      })
      .catch((error: unknown) => console.warn('The SQL editor stays a plain text box:', error));
  };
  textarea.addEventListener('focus', upgrade, { once: true });
  textarea.addEventListener('pointerenter', upgrade, { once: true });

  return {
    value: () => current.value(),
    setValue: (sql) => current.setValue(sql),
    setSources: (next) => {
      sources = next;
      current.setSources(next);
    },
    mark: (range) => {
      marked = range;
      current.mark(range);
    },
    reveal: (range) => current.reveal(range),
    focus: () => current.focus(),
  };
}

function createTextareaEditor(textarea: HTMLTextAreaElement, { onRun, onEdit }: SqlEditorOptions): SqlEditor {
  // Once CodeMirror takes over, the textarea is hidden, so these listeners fall silent by themselves.
  textarea.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      onRun();
    }
  });
  textarea.addEventListener('input', () => onEdit?.());
  return {
    value: () => textarea.value,
    setValue: (sql) => {
      textarea.value = sql;
    },
    setSources: () => {},
    mark: (range) => textarea.setAttribute('aria-invalid', String(range !== null)),
    reveal: (range) => {
      textarea.focus();
      textarea.setSelectionRange(range.from, Math.max(range.from, range.to));
    },
    focus: () => textarea.focus(),
  };
}
