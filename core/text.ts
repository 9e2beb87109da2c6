/**
 * Folds text for matching and sorting: Unicode compatibility decomposition, accents removed, lower case.
 * @example foldText('Côte d’Ivoire') // 'cote d’ivoire'
 */
export function foldText(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
}

/**
 * Splits folded text into search tokens: runs of letters and digits. Everything else separates tokens.
 * @example tokenize('São Tomé & Príncipe, 1:110m') // ['sao', 'tome', 'principe', '1', '110m']
 */
export function tokenize(text: string): string[] {
  return foldText(text).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * One string object for each distinct text given to it: `intern` gives back the first of equal strings. Tokens
 * and parsed JSON give each occurrence a string of its own, and a catalog repeats its words many times.
 */
export class StringTable {
  readonly #strings = new Map<string, string>();

  intern(text: string): string {
    const known = this.#strings.get(text);
    if (known !== undefined) return known;
    this.#strings.set(text, text);
    return text;
  }
}
