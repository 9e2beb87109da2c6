/** Formatting shared by the pages and their scripts: counts, sizes, shares, numbers and bounds. */
import type { DatasetTags } from '../schemas/dataset.ts';

const COUNT = new Intl.NumberFormat('en-US');

/** A count with thousands separators; an en dash when unknown. */
export function formatCount(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : COUNT.format(value);
}

/** Bytes in the largest unit that keeps the number readable: `812 bytes`, `684 kB`, `5.6 MB` (1 kB = 1,000 bytes). */
export function formatBytes(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  if (value < 1000) return `${value} bytes`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let amount = value / 1000;
  let unit = 0;
  while (amount >= 1000 && unit < units.length - 1) {
    amount /= 1000;
    unit += 1;
  }
  return `${amount < 10 ? amount.toFixed(1) : Math.round(amount)} ${units[unit]}`;
}

/** A share as a percentage with one decimal, or "0%" / "100%" exactly. */
export function formatShare(part: number | null | undefined, whole: number | null | undefined): string {
  if (part === null || part === undefined || !whole) return '–';
  if (part === 0) return '0%';
  if (part === whole) return '100%';
  return `${Math.max(0.1, Math.round((part / whole) * 1000) / 10)}%`;
}

/** A number as a dictionary shows it: integers exact, others to six significant digits. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  return Number.isInteger(value) ? COUNT.format(value) : String(Number(value.toPrecision(6)));
}

/** Bounds as "west, south, east, north" with a note when they cross the antimeridian. */
export function formatBounds(bounds: readonly number[] | null | undefined): string {
  if (!bounds || bounds.length !== 4) return '–';
  const text = bounds.map((value) => String(Number(value.toFixed(4)))).join(', ');
  return bounds[0]! > bounds[2]! ? `${text} (crosses the antimeridian)` : text;
}

/** Tags as key/value pairs in record order, array values spread out. */
export function listTagPairs(tags: DatasetTags | undefined): { key: string; value: string }[] {
  return Object.entries(tags ?? {}).flatMap(([key, value]) => (Array.isArray(value) ? value : [value]).map((item) => ({ key, value: item })));
}
