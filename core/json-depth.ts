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
 * Why JSON text nests too deep, or undefined when it does not: one pass over its characters, skipping strings,
 * that stops at the first bracket past `max`. It does not check that the text is JSON; JSON.parse does that next.
 * @example findJsonDepthProblem('[[[1]]]', 2) // 'nests arrays and objects more than 2 deep; at most 2 levels are allowed'
 */
export function findJsonDepthProblem(text: string, max = MAX_JSON_DEPTH): string | undefined {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (++depth > max) return `nests arrays and objects more than ${max} deep; at most ${max} levels are allowed`;
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) depth--;
  }
  return undefined;
}
