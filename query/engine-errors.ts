/** A QueryError to answer with: status, stable code and a message that holds no SQL, path or setting. */
export interface SafeError {
  status: number;
  code: string;
  message: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Engine error classes and what the client is told; the engine's own text is never passed on. */
const CLASSES: [RegExp, SafeError][] = [
  [/^INTERRUPT|Interrupted/i, { status: 504, code: 'query_timeout', message: 'The query ran past its deadline and was stopped.' }],
  [/^Out of Memory Error/i, { status: 422, code: 'query_out_of_memory', message: 'The query needs more memory than a query may use; filter, aggregate or select fewer columns.' }],
  [/^Binder Error/i, { status: 422, code: 'query_binder_error', message: 'A column or function is unknown, or used with the wrong types.' }],
  [/^Catalog Error/i, { status: 422, code: 'query_unknown_name', message: 'The query names a table, view or function that does not exist for it.' }],
  [/^(Conversion|Invalid Input) Error/i, { status: 422, code: 'query_conversion_error', message: 'A value could not be converted to the type the query asks for.' }],
  [/^Out of Range Error/i, { status: 422, code: 'query_out_of_range', message: 'A value is out of range for its type (an overflow, or a date out of bounds).' }],
  [/^Parser Error/i, { status: 400, code: 'sql_syntax_error', message: 'The SQL could not be parsed.' }],
  [/^Permission Error/i, { status: 422, code: 'query_not_permitted', message: 'The query tried to reach something outside its sources.' }],
  [/^Not implemented Error/i, { status: 422, code: 'query_not_supported', message: 'The query uses a feature the engine does not support.' }],
];

/**
 * Turns an engine error into a safe QueryError. Only an identifier the user wrote (a column name the binder
 * could not find) is quoted back; everything else in the engine's message may hold SQL or paths and is dropped.
 */
export function toSafeError(error: unknown): SafeError {
  const text = error instanceof Error ? error.message : String(error);
  for (const [pattern, safe] of CLASSES) {
    if (!pattern.test(text)) continue;
    const column = /Referenced column "([^"]+)" not found/.exec(text)?.[1];
    if (safe.code === 'query_binder_error' && column && IDENTIFIER.test(column)) {
      return { ...safe, message: `Column "${column}" is not in the tables the query reads; check its name in the schema route.` };
    }
    return safe;
  }
  return { status: 422, code: 'query_failed', message: 'The query could not be executed.' };
}
