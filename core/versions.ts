/**
 * Orders versions newest first: numeric parts compare as numbers, so 2.10 is newer than 2.9, and
 * 2024-06 newer than 2023-12. Ties on all parts fall back to plain string order, so the order is total.
 * @example ['1.1.4', '2.0.2'].sort(compareVersionsNewestFirst) // ['2.0.2', '1.1.4']
 */
export function compareVersionsNewestFirst(a: string, b: string): number {
  const partsA = a.split(/[^0-9A-Za-z]+/);
  const partsB = b.split(/[^0-9A-Za-z]+/);
  for (let index = 0; index < Math.max(partsA.length, partsB.length); index++) {
    const partA = partsA[index] ?? '';
    const partB = partsB[index] ?? '';
    if (partA === partB) continue;
    const numberA = /^\d+$/.test(partA) ? Number(partA) : Number.NaN;
    const numberB = /^\d+$/.test(partB) ? Number(partB) : Number.NaN;
    if (!Number.isNaN(numberA) && !Number.isNaN(numberB)) return numberB - numberA;
    return partA < partB ? 1 : -1;
  }
  return a === b ? 0 : a < b ? 1 : -1;
}
