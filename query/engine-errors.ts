import { describeQueryError, type QueryErrorBody, type QueryErrorCode } from './errors.ts';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Engine error classes and the catalog code the client is told; the engine's own text is never passed on. */
const CLASSES: [RegExp, QueryErrorCode][] = [
  [/^INTERRUPT|Interrupted/i, 'query_timeout'],
  [/^Out of Memory Error/i, 'query_out_of_memory'],
  [/^Binder Error/i, 'query_binder_error'],
  [/^Catalog Error/i, 'query_unknown_name'],
  [/^(Conversion|Invalid Input) Error/i, 'query_conversion_error'],
  [/^Out of Range Error/i, 'query_out_of_range'],
  [/^Parser Error/i, 'sql_syntax_error'],
  [/^Permission Error/i, 'query_not_permitted'],
  [/^Not implemented Error/i, 'query_not_supported'],
];

/**
 * Turns an engine error into a safe QueryError. Only an identifier the user wrote (a column name the binder
 * could not find) is quoted back; everything else in the engine's message may hold SQL or paths and is dropped.
 */
export function toSafeError(error: unknown): QueryErrorBody {
  const text = error instanceof Error ? error.message : String(error);
  for (const [pattern, code] of CLASSES) {
    if (!pattern.test(text)) continue;
    const column = /Referenced column "([^"]+)" not found/.exec(text)?.[1];
    if (code === 'query_binder_error' && column && IDENTIFIER.test(column)) return describeQueryError(code, column);
    return describeQueryError(code);
  }
  return describeQueryError('query_failed');
}
