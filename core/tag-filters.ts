import { foldText } from './text.ts';

/**
 * Parsed tag filters: tag key → accepted values (folded), both sorted. A Map, because its keys come from the
 * request: a key such as `constructor` or `__proto__` must be an ordinary key, not a property of Object.
 */
export type TagFilters = ReadonlyMap<string, readonly string[]>;

const KEY = /^[a-z][a-z0-9_]*$/;

/** Folds a tag value for matching: accents and case removed, inner whitespace collapsed. */
export function foldTagValue(value: string): string {
  return foldText(value).trim().replace(/\s+/g, ' ');
}

/**
 * Parses tag filters: comma-separated `key:value` pairs, split at the first colon. Values match
 * case- and accent-insensitively. Several values of one key match any of them; different keys must all match.
 * On failure, `detail` completes a sentence that starts with the parameter's name.
 * @example parseTagFilters('categories:boundaries,categories:coastlines,inventory:Natural Earth')
 */
export function parseTagFilters(text: string): { ok: true; filters: TagFilters } | { ok: false; detail: string } {
  const filters = new Map<string, Set<string>>();
  for (const part of text.split(',')) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const colon = trimmed.indexOf(':');
    const key = colon > 0 ? trimmed.slice(0, colon).trim().toLowerCase() : '';
    const value = colon > 0 ? foldTagValue(trimmed.slice(colon + 1)) : '';
    if (!KEY.test(key) || value === '') {
      return { ok: false, detail: `must be comma-separated key:value pairs such as categories:boundaries; "${trimmed.slice(0, 80)}" is not one. Keys and values are listed by /api/collections/{slug}/datasets/tags.` };
    }
    const values = filters.get(key) ?? new Set<string>();
    filters.set(key, values.add(value));
  }
  return { ok: true, filters: new Map([...filters.keys()].sort().map((key) => [key, [...filters.get(key)!].sort()])) };
}

/** Writes filters back in canonical form: keys sorted, values sorted, `key:value` joined by commas. */
export function serializeTagFilters(filters: TagFilters): string {
  return [...filters].flatMap(([key, values]) => values.map((value) => `${key}:${value}`)).join(',');
}

/** Whether a dataset's folded tags satisfy every key of the filters. */
export function matchesTagFilters(foldedTags: Readonly<Record<string, string[]>>, filters: TagFilters): boolean {
  for (const [key, wanted] of filters) {
    const values = Object.hasOwn(foldedTags, key) ? foldedTags[key] : undefined;
    if (values === undefined || !values.some((value) => wanted.includes(value))) return false;
  }
  return true;
}
