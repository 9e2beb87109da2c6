import { foldText, tokenize } from '../text.ts';

/**
 * Words as the full-text index sees them: folded like the API's `search` parameter (core/text.ts), but an
 * identifier such as `feature_code` stays whole as well, so a column name is found as the name it is.
 */
const WORD = /[\p{L}\p{N}_]+/gu;

/** How much one occurrence of a word counts in each field of a dataset; a description word counts 1. */
export const FIELD_WEIGHTS = {
  /** Five times a description word, as Pagefind weighs titles. */
  title: 5,
  tags: 3,
  /** A whole column name: an identifier a person types on purpose. Its parts count as `columnPart`. */
  column: 2,
  columnPart: 1,
  collection: 1,
  files: 1,
  description: 1,
} as const;

/** One query word: folded, and whether it may match as the start of a longer word. */
export interface QueryWord {
  text: string;
  /** The last word of a query still being typed: a prefix match scores nearly as much as an exact one. */
  typing: boolean;
}

/** A word shorter than this matches whole words only: a one-letter prefix would fetch a large part of the index. */
export const MIN_PREFIX_LENGTH = 2;

/** Words of a query kept at most: more words only narrow the results further. */
const MAX_QUERY_WORDS = 8;

/**
 * The words of a text as index terms: each folded word whole, and apart, the parts of those that are
 * identifiers with underscores.
 * @example listTerms('Feature_code, São Tomé') // { words: ['feature_code', 'sao', 'tome'], parts: ['feature', 'code'] }
 */
export function listTerms(text: string): { words: string[]; parts: string[] } {
  const words = listWords(text);
  const parts = words.filter((word) => word.includes('_')).flatMap((word) => tokenize(word));
  return { words, parts };
}

/**
 * The distinct words of a query, in the order typed. The last one is `typing` unless a space follows it.
 * @example parseQuery('Flood zo') // [{ text: 'flood', typing: false }, { text: 'zo', typing: true }]
 */
export function parseQuery(query: string): QueryWord[] {
  const words = [...new Set(listWords(query))].slice(0, MAX_QUERY_WORDS);
  const finished = /\s$/.test(query);
  return words.map((text, index) => ({ text, typing: !finished && index === words.length - 1 }));
}

/**
 * A filter value as the index stores it: `:c:` or `:t:` and the folded value. Index words never hold a
 * colon, so a filter term can never be matched by a typed word.
 */
export function filterTerm(kind: 'collection' | 'tag', value: string): string {
  return `:${kind === 'collection' ? 'c' : 't'}:${foldText(value).trim().replace(/\s+/g, ' ')}`;
}

function listWords(text: string): string[] {
  // ASCII folds to lower case alone; most catalog text is ASCII, and normalising it is the build's largest cost.
  const found = (ASCII.test(text) ? text.toLowerCase() : foldText(text)).match(WORD) ?? [];
  const words: string[] = [];
  for (const match of found) {
    const word = match.includes('_') ? match.replace(/^_+|_+$/g, '') : match;
    if (word !== '') words.push(word);
  }
  return words;
}

const ASCII = /^[\x00-\x7f]*$/;
