import { MAX_FIELD_PATH_LENGTH, MAX_FIELDS } from '../../../schemas/stac-api.ts';

/**
 * The STAC API Fields extension on item search: which fields of each Item to return. `include` and `exclude` are
 * dotted paths (`properties.datetime`); missing (undefined), empty and null differ as the extension's table says.
 */
export interface StacFields {
  include?: string[] | null;
  exclude?: string[] | null;
}

/** The fields of a valid Item, which a search asking for no field in particular returns (rule 1 of the extension). */
const DEFAULT_FIELDS = ['type', 'stac_version', 'id', 'geometry', 'bbox', 'links', 'assets', 'properties.datetime'];


/** Reads the GET spelling: comma-separated paths, `-` before one to exclude, `+` or nothing to include. */
export function readFieldsText(text: string): { ok: true; value: StacFields } | { ok: false; detail: string } {
  const paths = text.split(',').map((path) => path.trim()).filter(Boolean);
  if (paths.length > MAX_FIELDS) return { ok: false, detail: `names ${paths.length} fields; at most ${MAX_FIELDS} are allowed` };
  const long = paths.find((path) => path.length > MAX_FIELD_PATH_LENGTH);
  if (long) return { ok: false, detail: `names a field longer than ${MAX_FIELD_PATH_LENGTH} characters` };
  const include = paths.filter((path) => !path.startsWith('-')).map((path) => path.replace(/^\+/, ''));
  const exclude = paths.filter((path) => path.startsWith('-')).map((path) => path.slice(1));
  // A GET with only excluded fields takes them from the default set (rule 4), as an empty include does in a POST.
  return { ok: true, value: { include: include.length > 0 ? include : null, exclude } };
}

/** Writes fields back as the GET parameter, for next links. */
export function writeFieldsText(fields: StacFields): string {
  return [...(fields.include ?? []), ...(fields.exclude ?? []).map((path) => `-${path}`)].join(',');
}

/**
 * An Item with the fields a search asked for: the included paths (or every field, when `include` is missing and
 * something is excluded, or the default set), less the excluded ones, the more specific path and then `include`
 * winning (rules 5 to 7).
 */
export function projectFields(item: Record<string, unknown>, fields: StacFields): Record<string, unknown> {
  const include = fields.include && fields.include.length > 0 ? fields.include : undefined;
  const exclude = fields.exclude ?? [];
  const everything = !include && fields.include === undefined && exclude.length > 0;
  const defaults = (item.properties as Record<string, unknown> | undefined)?.datetime === null
    ? [...DEFAULT_FIELDS, 'properties.start_datetime', 'properties.end_datetime'] : DEFAULT_FIELDS;
  const kept = include ?? defaults;
  const projected = everything ? structuredClone(item) : pickPaths(item, kept);
  // Only what was asked for wins over an exclusion (rule 6); the default set does not.
  const asked = include ?? [];
  for (const path of exclude) {
    if (asked.includes(path)) continue;
    deletePath(projected, path);
    // A more specific path that is included comes back (rule 5.1).
    for (const inner of asked) if (inner.startsWith(`${path}.`)) copyPath(item, projected, inner);
  }
  return projected;
}

function pickPaths(item: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = Object.create(null);
  for (const path of paths) copyPath(item, picked, path);
  return picked;
}

/** Copies the value at a dotted path, creating the objects on the way; nothing when the item has none there. */
function copyPath(from: Record<string, unknown>, to: Record<string, unknown>, path: string): void {
  const keys = path.split('.');
  let source: unknown = from;
  for (const key of keys) {
    if (source === null || typeof source !== 'object' || Array.isArray(source) || !Object.hasOwn(source, key)) return;
    source = (source as Record<string, unknown>)[key];
  }
  let target = to;
  keys.slice(0, -1).forEach((key) => {
    const next = Object.hasOwn(target, key) ? target[key] : undefined;
    target = (next !== null && typeof next === 'object' && !Array.isArray(next) ? next : (target[key] = Object.create(null))) as Record<string, unknown>;
  });
  target[keys.at(-1)!] = structuredClone(source);
}

function deletePath(target: Record<string, unknown>, path: string): void {
  const keys = path.split('.');
  let parent: unknown = target;
  for (const key of keys.slice(0, -1)) {
    if (parent === null || typeof parent !== 'object' || !Object.hasOwn(parent, key)) return;
    parent = (parent as Record<string, unknown>)[key];
  }
  if (parent !== null && typeof parent === 'object') delete (parent as Record<string, unknown>)[keys.at(-1)!];
}
