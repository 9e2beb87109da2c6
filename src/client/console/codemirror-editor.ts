/**
 * The CodeMirror 6 form of the SQL editor, loaded by `import()` from sql-editor.ts: SQL highlighting,
 * completion of the sources' aliases and columns, Ctrl/Cmd+Enter to run, and a highlight on the line an error
 * names. Tab is left to the browser so keyboard users can leave the editor.
 */
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap, type Completion } from '@codemirror/autocomplete';
import { PostgreSQL, sql, type SQLNamespace } from '@codemirror/lang-sql';
import { bracketMatching, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { Compartment, EditorState, StateEffect, StateField, type Range } from '@codemirror/state';
import { Decoration, EditorView, drawSelection, keymap, lineNumbers, placeholder, type DecorationSet } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import type { ConsoleSource } from './source-catalog.ts';
import type { SqlEditor, SqlEditorOptions, SqlRange } from './sql-editor.ts';

const setErrorMark = StateEffect.define<SqlRange | null>();

/** Token colours from console.css custom properties, so highlighting follows the site's light and dark schemes. */
const SQL_HIGHLIGHT = HighlightStyle.define([
  { tag: [tags.keyword, tags.operatorKeyword], color: 'var(--console-sql-keyword)' },
  { tag: tags.string, color: 'var(--console-sql-string)' },
  { tag: [tags.number, tags.bool, tags.null], color: 'var(--console-sql-number)' },
  { tag: [tags.typeName, tags.standard(tags.name)], color: 'var(--console-sql-type)' },
  { tag: [tags.lineComment, tags.blockComment], color: 'var(--console-muted)', fontStyle: 'italic' },
  { tag: tags.invalid, color: 'var(--console-error)' },
]);

/** The error highlight: a class on each line of the range and on the range itself; any edit clears it. */
const errorMark = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, transaction) {
    if (transaction.docChanged) marks = Decoration.none;
    for (const effect of transaction.effects) {
      if (effect.is(setErrorMark)) marks = effect.value === null ? Decoration.none : decorateRange(transaction.state, effect.value);
    }
    return marks;
  },
  provide: (field) => EditorView.decorations.from(field),
});

function decorateRange(state: EditorState, range: SqlRange): DecorationSet {
  const from = Math.min(Math.max(0, range.from), state.doc.length);
  const to = Math.min(Math.max(from, range.to), state.doc.length);
  const marks: Range<Decoration>[] = [];
  for (let line = state.doc.lineAt(from).number; line <= state.doc.lineAt(to).number; line++) {
    marks.push(Decoration.line({ class: 'console-error-line' }).range(state.doc.line(line).from));
  }
  if (to > from) marks.push(Decoration.mark({ class: 'console-error-span' }).range(from, to));
  return Decoration.set(marks, true);
}

/** Replaces `textarea` (kept hidden, and in step) with a CodeMirror editor. */
export function createCodeMirrorEditor(textarea: HTMLTextAreaElement, { onRun, onEdit }: SqlEditorOptions): SqlEditor {
  const language = new Compartment();
  const labelledBy = textarea.labels?.[0]?.id;
  const describedBy = textarea.getAttribute('aria-describedby');
  const view = new EditorView({
    parent: textarea.parentElement!,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        lineNumbers(),
        drawSelection(),
        bracketMatching(),
        closeBrackets(),
        autocompletion(),
        syntaxHighlighting(SQL_HIGHLIGHT),
        language.of(sql({ dialect: PostgreSQL, upperCaseKeywords: true })),
        history(),
        keymap.of([{ key: 'Mod-Enter', run: () => (onRun(), true) }, ...closeBracketsKeymap, ...completionKeymap, ...historyKeymap, ...defaultKeymap]),
        errorMark,
        placeholder(textarea.placeholder),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({
          'aria-multiline': 'true',
          ...(labelledBy ? { 'aria-labelledby': labelledBy } : { 'aria-label': 'SQL' }),
          ...(describedBy ? { 'aria-describedby': describedBy } : {}),
        }),
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          textarea.value = update.state.doc.toString();
          onEdit?.();
        }),
      ],
    }),
  });
  textarea.hidden = true;
  textarea.parentElement!.classList.add('console-editor-upgraded');
  // A click on the <label> focused the textarea; point it at the editor now.
  textarea.labels?.[0]?.addEventListener('click', () => view.focus());

  return {
    value: () => view.state.doc.toString(),
    setValue: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    setSources: (sources) => view.dispatch({ effects: language.reconfigure(sql(createSqlConfig(sources))) }),
    mark: (range) => view.dispatch({ effects: setErrorMark.of(range) }),
    reveal: (range) => {
      const from = Math.min(range.from, view.state.doc.length);
      view.dispatch({ selection: { anchor: from, head: Math.min(Math.max(from, range.to), view.state.doc.length) }, scrollIntoView: true });
      view.focus();
    },
    focus: () => view.focus(),
  };
}

function createSqlConfig(sources: readonly ConsoleSource[]) {
  const schema: SQLNamespace = {};
  for (const source of sources) {
    const columns: Completion[] = source.version.columns.map((column) => ({ label: column.name, type: 'property', detail: column.type }));
    schema[source.alias] = { self: { label: source.alias, type: 'type', detail: source.file.name }, children: columns };
  }
  return { dialect: PostgreSQL, upperCaseKeywords: true, schema, ...(sources.length === 1 ? { defaultTable: sources[0]!.alias } : {}) };
}
