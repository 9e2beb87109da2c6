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
