import { foldText } from './text.ts';

/** Parsed tag filters: tag key → accepted values (folded), both sorted. */
export type TagFilters = Record<string, string[]>;

const KEY = /^[a-z][a-z0-9_]*$/;

/** Folds a tag value for matching: accents and case removed, inner whitespace collapsed. */
export function foldTagValue(value: string): string {
  return foldText(value).trim().replace(/\s+/g, ' ');
}

/**
 * Parses `tag_filters`: comma-separated `key:value` pairs, split at the first colon. Values match
 * case- and accent-insensitively. Several values of one key match any of them; different keys must all match.
 * @example parseTagFilters('categories:boundaries,categories:coastlines,inventory:Natural Earth')
 */
export function parseTagFilters(text: string): { ok: true; filters: TagFilters } | { ok: false; detail: string } {
  const filters: Record<string, Set<string>> = {};
  for (const part of text.split(',')) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const colon = trimmed.indexOf(':');
    const key = colon > 0 ? trimmed.slice(0, colon).trim().toLowerCase() : '';
    const value = colon > 0 ? foldTagValue(trimmed.slice(colon + 1)) : '';
    if (!KEY.test(key) || value === '') {
      return { ok: false, detail: `"tag_filters" must be comma-separated key:value pairs such as categories:boundaries; "${trimmed.slice(0, 80)}" is not one. Keys and values are listed by /api/collections/{slug}/datasets/tags.` };
    }
    (filters[key] ??= new Set()).add(value);
  }
  const sorted: TagFilters = {};
  for (const key of Object.keys(filters).sort()) sorted[key] = [...filters[key]!].sort();
  return { ok: true, filters: sorted };
}

/** Writes filters back in canonical form: keys sorted, values sorted, `key:value` joined by commas. */
export function serializeTagFilters(filters: TagFilters): string {
  return Object.entries(filters).flatMap(([key, values]) => values.map((value) => `${key}:${value}`)).join(',');
}

/** Whether a dataset's folded tags satisfy every key of the filters. */
export function matchesTagFilters(foldedTags: Record<string, string[]>, filters: TagFilters): boolean {
  for (const key in filters) {
    const values = foldedTags[key];
    if (values === undefined || !values.some((value) => filters[key]!.includes(value))) return false;
  }
  return true;
}
