/**
 * Where an error points: a span of the SQL (a syntax error's offset, an unknown table, column or function) or
 * a source (`sources[1]`, an alias). Reads the query service's messages (query/errors.ts) and DuckDB's own,
 * which in-browser SQL shows as they are.
 */
import type { SqlRange } from './sql-editor.ts';

/** What an error names. Line and column are 1-based. */
export interface ErrorLocation {
  range?: SqlRange;
  line?: number;
  column?: number;
  /** The alias of the source the error is about. */
  alias?: string;
}

/** An error to locate: a code, its message, and an offset in the SQL when the engine gave one. */
export interface LocatableError {
  code: string;
  message: string;
  position?: number | undefined;
}

/**
 * Locates an error in the SQL and the sources.
 * @example locateError({ code: 'sql_syntax_error', message: '… syntax error at character offset 9.' }, 'SELECT * FORM c', ['c'])
 * // { range: { from: 9, to: 13 }, line: 1, column: 10 }
 */
export function locateError({ code, message, position }: LocatableError, sql: string, aliases: readonly string[]): ErrorLocation {
  if (position !== undefined) return withLineColumn(sql, spanOfWord(sql, position));
  const source = /sources\[(\d+)\]/.exec(message);
  if (source) {
    const alias = aliases[Number(source[1])];
    return alias === undefined ? {} : { alias };
  }
  const offset = /character offset (\d+)/.exec(message);
  if (offset) return withLineColumn(sql, spanOfWord(sql, Number(offset[1])));
  const nearWord = /syntax error at or near "([^"]+)"/i.exec(message);
  if (nearWord) return withRange(sql, findWord(sql, nearWord[1]!, false));
  if (code === 'duplicate_alias') {
    const alias = /alias "([^"]+)"/.exec(message)?.[1];
    return alias === undefined ? {} : { alias };
  }
  const table = /^Table "([^"]+)" is not one of/.exec(message)?.[1] ?? /Table with name "?([^\s"]+?)"? does not exist/i.exec(message)?.[1];
  if (table !== undefined) return withRange(sql, findWord(sql, table, true));
  const column = /^Column "([^"]+)" is not in the tables/.exec(message)?.[1] ?? /Referenced column "([^"]+)" not found/i.exec(message)?.[1];
  if (column !== undefined) return withRange(sql, findWord(sql, column, false));
  const call = /^Function (\w+) is not allowed/.exec(message)?.[1] ?? /^Function "(\w+)" needs/.exec(message)?.[1]
    ?? /Scalar Function with name (\w+) does not exist/i.exec(message)?.[1];
  if (call !== undefined) return withRange(sql, findWord(sql, call, false));
  return {};
}

/** 1-based line and column of a string index. */
export function lineColumnAt(sql: string, index: number): { line: number; column: number } {
  const before = sql.slice(0, Math.max(0, Math.min(index, sql.length)));
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: before.length - lineStart + 1 };
}

function withRange(sql: string, range: SqlRange | null): ErrorLocation {
  return range === null ? {} : withLineColumn(sql, range);
}

function withLineColumn(sql: string, range: SqlRange): ErrorLocation {
  return { range, ...lineColumnAt(sql, range.from) };
}

/** The word (or single character) that starts at `offset`, where DuckDB's parser stopped. */
function spanOfWord(sql: string, offset: number): SqlRange {
  const from = Math.min(offset, sql.length);
  const word = /^[\p{L}\p{N}_$]+/u.exec(sql.slice(from))?.[0];
  return { from, to: from + (word?.length ?? (from < sql.length ? 1 : 0)) };
}

/**
 * The first place `name` appears as a whole identifier, bare or double-quoted, outside strings and comments;
 * for tables, an occurrence after FROM or JOIN wins.
 */
function findWord(sql: string, name: string, asTable: boolean): SqlRange | null {
  const masked = maskLiterals(sql);
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const word = `(?:"${escaped}"|(?<![\\p{L}\\p{N}_$])${escaped}(?![\\p{L}\\p{N}_$]))`;
  const patterns = asTable ? [new RegExp(`\\b(?:from|join)\\s+(${word})`, 'iu'), new RegExp(`(${word})`, 'iu')] : [new RegExp(`(${word})`, 'iu')];
  for (const pattern of patterns) {
    const match = pattern.exec(masked);
    if (match) {
      const from = match.index + match[0].length - match[1]!.length;
      return { from, to: from + match[1]!.length };
    }
  }
  return null;
}

/** Blanks out string literals and comments, keeping every index where it was. */
function maskLiterals(sql: string): string {
  return sql.replace(/'(?:[^']|'')*'|--[^\n]*|\/\*[\s\S]*?\*\//g, (text) => ' '.repeat(text.length));
}
