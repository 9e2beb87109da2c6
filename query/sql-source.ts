/** One word or symbol of SQL text outside strings, quoted identifiers and comments. */
interface SqlToken {
  kind: 'word' | 'symbol' | 'literal';
  text: string;
  /** Index just past the token in the SQL. */
  end: number;
}

const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/;
const DOLLAR_TAG = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/;

/** Index just past the quote that closes the literal opened at `start` (`''` escapes; `\` too when `backslash`). */
function skipQuoted(sql: string, start: number, quote: string, backslash: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const char = sql[i];
    if (backslash && char === '\\') i += 2;
    else if (char === quote && sql[i + 1] === quote) i += 2;
    else if (char === quote) return i + 1;
    else i++;
  }
  return sql.length;
}

/** Index just past the (nestable) block comment opened at `start`. */
function skipBlockComment(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql.startsWith('/*', i)) {
      depth++;
      i += 2;
    } else if (sql.startsWith('*/', i)) {
      i += 2;
      if (--depth === 0) return i;
    } else i++;
  }
  return sql.length;
}

/**
 * Splits SQL into tokens the way DuckDB's (PostgreSQL) lexer does, far enough to count statements and spot
 * keywords: strings (`'…'`, `E'…'`, `$tag$…$tag$`), quoted identifiers and comments become opaque.
 */
function* scanSql(sql: string): Generator<SqlToken> {
  let i = 0;
  while (i < sql.length) {
    const char = sql[i]!;
    const next = sql[i + 1];
    if (/\s/.test(char)) i++;
    else if (char === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (char === '/' && next === '*') i = skipBlockComment(sql, i);
    else if (char === "'" || char === '"') {
      const end = skipQuoted(sql, i, char, false);
      yield { kind: char === "'" ? 'literal' : 'word', text: sql.slice(i, end), end };
      i = end;
    } else if ((char === 'E' || char === 'e') && next === "'") {
      const end = skipQuoted(sql, i + 1, "'", true);
      yield { kind: 'literal', text: sql.slice(i, end), end };
      i = end;
    } else if (char === '$' && DOLLAR_TAG.test(sql.slice(i, i + 64))) {
      const tag = DOLLAR_TAG.exec(sql.slice(i, i + 64))![0];
      const close = sql.indexOf(tag, i + tag.length);
      const end = close < 0 ? sql.length : close + tag.length;
      yield { kind: 'literal', text: sql.slice(i, end), end };
      i = end;
    } else if (WORD_START.test(char)) {
      let end = i + 1;
      while (end < sql.length && WORD_PART.test(sql[end]!)) end++;
      yield { kind: 'word', text: sql.slice(i, end), end };
      i = end;
    } else {
      yield { kind: 'symbol', text: char, end: i + 1 };
      i++;
    }
  }
}

/** How many non-empty statements `;` separates in `sql`. */
export function countStatements(sql: string): number {
  let count = 0;
  let empty = true;
  for (const token of scanSql(sql)) {
    if (token.text === ';' && token.kind === 'symbol') {
      if (!empty) count++;
      empty = true;
    } else empty = false;
  }
  return empty ? count : count + 1;
}

/**
 * `sql` cut after its last token that is not a `;`: final semicolons go, and the comments and blanks around
 * them, so the statement can sit inside parentheses. Semicolons and dashes inside strings, quoted names and
 * (nested) comments are left alone, as DuckDB's lexer leaves them.
 * @example stripTrailingSemicolons('SELECT 1 /* note; -- see *\/ ;') // 'SELECT 1'
 */
export function stripTrailingSemicolons(sql: string): string {
  let end = 0;
  for (const token of scanSql(sql)) if (token.kind !== 'symbol' || token.text !== ';') end = token.end;
  return sql.slice(0, end);
}

/** Whether `sql` says `WITH RECURSIVE`, which the parser does not mark when no CTE refers to itself. */
export function saysWithRecursive(sql: string): boolean {
  let previous = '';
  for (const token of scanSql(sql)) {
    const word = token.kind === 'word' ? token.text.toLowerCase() : '';
    if (previous === 'with' && word === 'recursive') return true;
    previous = word;
  }
  return false;
}

/**
 * The user's SQL as DuckDB sees it. Syntax tree locations are UTF-8 byte offsets, while parse errors count
 * code points; these helpers read the text at the former and turn the latter into a JavaScript index.
 */
export class SqlSource {
  readonly #sql: string;
  #bytes: Buffer | undefined;

  constructor(sql: string) {
    this.#sql = sql;
  }

  get #utf8(): Buffer {
    return (this.#bytes ??= Buffer.from(this.#sql, 'utf8'));
  }

  /** The string index (UTF-16 code units, as JavaScript counts) of code point `offset`, as DuckDB reports errors. */
  indexOfCodePoint(offset: number): number | undefined {
    if (!Number.isSafeInteger(offset) || offset < 0) return undefined;
    let index = 0;
    let count = 0;
    for (const char of this.#sql) {
      if (count === offset) return index;
      index += char.length;
      count++;
    }
    return count === offset ? index : undefined;
  }

  /** Up to `length` characters of the text that starts at byte `offset` (empty when outside). */
  textAt(offset: unknown, length = 64): string {
    if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) return '';
    return this.#utf8.subarray(offset, offset + length * 4).toString('utf8').slice(0, length);
  }
}
