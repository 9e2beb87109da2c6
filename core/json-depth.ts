/**
 * Deepest nesting of arrays and objects a JSON request body (or a JSON parameter) may have. No request of geoshelf
 * needs more than 8 (a GeometryCollection's polygon inside a STAC search body); V8's JSON.parse spends about 4 µs per
 * level of nesting, so 1 MiB of `[[[[…` held the event loop for about a second before this limit.
 */
export const MAX_JSON_DEPTH = 32;

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * A scanner of JSON text given in pieces (UTF-8 bytes as they arrive, or text): each call answers why the text so
 * far nests deeper than `max`, or undefined. Strings are skipped, escapes included, across pieces too. It does not
 * check that the text is JSON; JSON.parse does that next. Bytes can be scanned as they are, since every byte of a
 * multi-byte UTF-8 character is above 0x7f, so never a bracket, a quote or a backslash.
 * @example const scan = createJsonDepthScanner(2); scan('[['); scan('[1]]]') // 'nests arrays and objects more than 2 deep; …'
 */
export function createJsonDepthScanner(max = MAX_JSON_DEPTH): (piece: Uint8Array | string) => string | undefined {
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** Reads one character code; answers false when the depth passes `max`. */
  const step = (code: number): boolean => {
    if (inString) {
      if (escaped) escaped = false;
      else if (code === BACKSLASH) escaped = true;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_ARRAY || code === OPEN_OBJECT) return ++depth <= max;
    else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) depth--;
    return true;
  };
  return (piece) => {
    const text = typeof piece === 'string';
    for (let index = 0; index < piece.length; index++) {
      if (!step(text ? piece.charCodeAt(index) : piece[index]!)) return `nests arrays and objects more than ${max} deep; at most ${max} levels are allowed`;
    }
    return undefined;
  };
}

/**
 * Why JSON text nests deeper than `max`, or undefined when it does not: one pass that stops at the first bracket
 * past the limit.
 * @example findJsonDepthProblem('[[[1]]]', 2) // 'nests arrays and objects more than 2 deep; at most 2 levels are allowed'
 */
export function findJsonDepthProblem(text: string, max = MAX_JSON_DEPTH): string | undefined {
  return createJsonDepthScanner(max)(text);
}
