import { Cql2Error, type Cql2Expression } from './expression.ts';
import { parseCql2Text } from './parse-text.ts';
import { readCql2Json } from './read-json.ts';

/** The encodings of a filter: CQL2 text, and CQL2 JSON (as text, or already parsed). */
export type Cql2Language = 'cql2-text' | 'cql2-json';

/**
 * Reads a filter in its encoding; throws a `Cql2Error` with the position or pointer of the first problem. `ilike`
 * reads the text encoding's ILIKE of the drafts (see `parseCql2Text`).
 */
export function readCql2Filter(filter: string, lang: Cql2Language, options: { ilike?: boolean } = {}): Cql2Expression {
  if (lang === 'cql2-text') return parseCql2Text(filter, options);
  let json: unknown;
  try {
    json = JSON.parse(filter);
  } catch (error) {
    throw new Cql2Error(`not JSON: ${(error as Error).message}`);
  }
  return readCql2Json(json);
}

/** A `Cql2Error` as one line for a 400: the encoding, the problem, and where in a JSON tree when the text has no position. */
export function describeCql2Error(error: Cql2Error, lang: Cql2Language): string {
  const where = error.pointer ? ` (at ${error.pointer} of the ${lang === 'cql2-json' ? 'JSON' : 'filter, as JSON'})` : '';
  return `(${lang}): ${error.message}${where}`;
}
