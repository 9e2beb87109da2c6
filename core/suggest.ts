/**
 * "Did you mean" for a misspelt name: the known name closest to it by edit distance, when it is close enough to be
 * a typo (at most a third of its letters, and at least one, changed). Written here rather than taken from a
 * package: the dynamic programme below is the whole of it, and the candidates are a record's few fields or a
 * catalog's slugs.
 */

/** The candidate a user most likely meant by `value`, or undefined when none is close. */
export function closestName(value: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.floor(value.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    if (name === value) continue;
    const distance = editDistance(value.toLowerCase(), name.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** ` (did you mean "x"?)` for the closest candidate, or an empty string. */
export function didYouMean(value: string, candidates: Iterable<string>): string {
  const name = closestName(value, candidates);
  return name === undefined ? '' : ` (did you mean "${name}"?)`;
}

/** Levenshtein distance: insertions, deletions and substitutions, each costing one. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
