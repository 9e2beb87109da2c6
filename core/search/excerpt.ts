import { foldText } from '../text.ts';
import type { SearchDocument } from './format.ts';
import { MIN_PREFIX_LENGTH, type QueryWord } from './terms.ts';

/** A run of excerpt text; `marked` runs are words the query matched. Plain text, never HTML. */
export interface ExcerptPart {
  text: string;
  marked: boolean;
}

/** Words an excerpt shows, as Pagefind's default. */
const EXCERPT_WORDS = 24;
/** Words shown before the first match, so it reads in context. */
const LEAD_WORDS = 5;
/** Words in the original text: combining marks included, so `é` written as `e` + accent stays one word. */
const WORD = /[\p{L}\p{M}\p{N}_]+/gu;

/**
 * The text a result's excerpt is cut from: the description, then its columns, files and tags, so a
 * dataset found by a column name shows that name. List items are set apart by ` · `.
 */
export function describeDocument(document: SearchDocument): string {
  const lists = [listLine('Columns', document.columns), listLine('Files', document.files), listLine('Tags', document.tags)];
  return [document.description.trim(), lists.filter((line) => line !== '').join(' — ')].filter((part) => part !== '').join('\n');
}

/**
 * About 24 words of a dataset's text around the first word the query matched, matched words marked; the
 * start of the text when nothing in it matched (a title match). `…` shows where the text was cut.
 * @example buildExcerpt(document, parseQuery('flood')) // [{ text: 'Areas at risk of ', marked: false }, { text: 'flooding', marked: true }, ...]
 */
export function buildExcerpt(document: SearchDocument, words: readonly QueryWord[], length = EXCERPT_WORDS): ExcerptPart[] {
  const text = describeDocument(document);
  const spans = [...text.matchAll(WORD)].map((match) => ({ start: match.index, end: match.index + match[0].length, marked: matchesQuery(match[0], words) }));
  if (spans.length === 0) return text === '' ? [] : [{ text, marked: false }];
  const first = Math.max(0, spans.findIndex((span) => span.marked));
  const from = Math.max(0, Math.min(first - LEAD_WORDS, spans.length - length));
  const shown = spans.slice(from, from + length);
  const start = from === 0 ? 0 : shown[0]!.start;
  const end = from + length >= spans.length ? text.length : shown.at(-1)!.end;
  const parts: ExcerptPart[] = [];
  const push = (part: string, marked: boolean) => {
    if (part === '') return;
    const last = parts.at(-1);
    if (last && last.marked === marked) last.text += part;
    else parts.push({ text: part, marked });
  };
  if (start > 0) push('… ', false);
  let position = start;
  for (const span of shown) {
    if (!span.marked) continue;
    push(text.slice(position, span.start), false);
    push(text.slice(span.start, span.end), true);
    position = span.end;
  }
  push(text.slice(position, end), false);
  if (end < text.length) push(' …', false);
  return parts;
}

/** A word of the text matches when it, or a part of it between underscores, starts with a query word. */
function matchesQuery(word: string, query: readonly QueryWord[]): boolean {
  const folded = foldText(word).replace(/^_+|_+$/g, '');
  const pieces = folded.includes('_') ? [folded, ...folded.split('_')] : [folded];
  return query.some(({ text }) => pieces.some((piece) => (text.length >= MIN_PREFIX_LENGTH ? piece.startsWith(text) : piece === text)));
}

function listLine(label: string, items: readonly string[]): string {
  return items.length > 0 ? `${label}: ${items.join(' · ')}` : '';
}
