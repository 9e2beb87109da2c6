import { didYouMean } from '../core/suggest.ts';
import type { z } from 'zod';

/** One problem found in an input: where it is and what is wrong. */
export interface InputIssue {
  /** The file, parameter group or body the value came from, e.g. `catalog-data/datasets/x.yaml`. */
  source: string;
  /** 1-based line in `source`, when the input is a text file. */
  line?: number;
  /** Field path in dot notation, e.g. `files[0].formats[1].format`. */
  path: string;
  message: string;
}

/** Options of the parse helpers. */
export interface ParseOptions {
  /** Names the input in messages: a file path, `query string`, `request body`, `settings`. */
  source: string;
  /** Maps a zod path to the line it came from (records carry YAML positions). */
  locate?: (path: PropertyKey[]) => number | undefined;
  /** Renders a path for the message; defaults to dot/bracket notation. */
  describePath?: (path: PropertyKey[]) => string;
}

/** Raised by `parseWithFriendlyErrors`; `issues` lists every problem and `cause` keeps the zod error. */
export class InputError extends Error {
  readonly issues: InputIssue[];
  constructor(issues: InputIssue[], options?: { cause?: unknown }) {
    super(issues.map(formatIssue).join('\n'), options);
    this.name = 'InputError';
    this.issues = issues;
  }
}

/** Renders a path such as `files[0].formats[1].format`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out || '(root)';
}

/** Renders an issue as `file:line: field: message`. */
export function formatIssue(issue: InputIssue): string {
  const where = issue.line === undefined ? issue.source : `${issue.source}:${issue.line}`;
  return issue.path === '' ? `${where}: ${issue.message}` : `${where}: ${issue.path}: ${issue.message}`;
}

/** Parses `value`, returning the data or every issue with its location. Never throws for invalid input. */
export function safeParseWithFriendlyErrors<T extends z.ZodType>(
  schema: T,
  value: unknown,
  options: ParseOptions,
): { ok: true; data: z.output<T> } | { ok: false; issues: InputIssue[]; error: z.ZodError } {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, data: result.data };
  const describe = options.describePath ?? formatPath;
  const issues = result.error.issues.flatMap((issue): InputIssue[] => {
    // An unknown key is reported on its parent object; point at each key itself instead.
    if (issue.code !== 'unrecognized_keys') {
      const line = options.locate?.(issue.path);
      return [{ source: options.source, ...(line === undefined ? {} : { line }), path: describe(issue.path), message: issue.message }];
    }
    const known = fieldsAt(schema, issue.path);
    return issue.keys.map((key) => {
      const path = [...issue.path, key];
      const line = options.locate?.(path);
      const hint = didYouMean(key, known) || ' (check its spelling)';
      return { source: options.source, ...(line === undefined ? {} : { line }), path: describe(path), message: `unknown field${hint}` };
    });
  });
  return { ok: false, issues, error: result.error };
}

/**
 * Parses `value` with `schema`. On failure throws an `InputError` naming the source and every field path,
 * with the zod error as its cause.
 * @example parseWithFriendlyErrors(QueryRequestSchema, body, { source: 'request body' })
 */
export function parseWithFriendlyErrors<T extends z.ZodType>(schema: T, value: unknown, options: ParseOptions): z.output<T> {
  const result = safeParseWithFriendlyErrors(schema, value, options);
  if (result.ok) return result.data;
  throw new InputError(result.issues, { cause: result.error });
}

/** What zod keeps of a schema's definition that `fieldsAt` walks. */
interface SchemaDef {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDef } }>;
  element?: { _zod: { def: SchemaDef } };
  innerType?: { _zod: { def: SchemaDef } };
  in?: { _zod: { def: SchemaDef } };
  options?: { _zod: { def: SchemaDef } }[];
  valueType?: { _zod: { def: SchemaDef } };
  getter?: () => { _zod: { def: SchemaDef } };
}

/**
 * The field names an object may have at `path` of a value `schema` checks, for "did you mean": the path is
 * followed through objects, arrays, records, optional, default, pipe, lazy and union wrappers; a union answers the
 * fields of all its members. Empty where the path leads to no object.
 */
export function fieldsAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const unwrap = (def: SchemaDef): SchemaDef[] => {
    if (def.innerType) return unwrap(def.innerType._zod.def);
    if (def.type === 'pipe' && def.in) return unwrap(def.in._zod.def);
    if (def.type === 'lazy' && def.getter) return unwrap(def.getter()._zod.def);
    if (def.type === 'union' && def.options) return def.options.flatMap((option) => unwrap(option._zod.def));
    return [def];
  };
  let defs = unwrap((schema as unknown as { _zod: { def: SchemaDef } })._zod.def);
  for (const part of path) {
    defs = defs.flatMap((def) => {
      const next = def.type === 'object' ? def.shape?.[String(part)] : def.type === 'array' ? def.element : def.type === 'record' ? def.valueType : undefined;
      return next ? unwrap(next._zod.def) : [];
    });
  }
  return [...new Set(defs.flatMap((def) => (def.type === 'object' && def.shape ? Object.keys(def.shape) : [])))];
}
