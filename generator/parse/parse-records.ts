import type { z } from 'zod';
import { formatPath, safeParseWithFriendlyErrors } from '../../schemas/parse.ts';
import { CollectionRecordSchema, type CollectionRecord } from '../../schemas/records/collection-record.ts';
import { DatasetRecordSchema, type DatasetRecord } from '../../schemas/records/dataset-record.ts';
import { FormatRecordSchema, type FormatRecord } from '../../schemas/records/format-record.ts';
import { StorageLocationRecordSchema, type StorageLocationRecord } from '../../schemas/records/storage-location-record.ts';
import { withCode, type BuildIssue } from '../errors.ts';
import type { RecordFile, RecordKind } from '../load/read-records.ts';

/** Where a parsed record came from, so later stages can point at a file and line. */
export interface RecordOrigin {
  source: string;
  /** Field path of the record inside its file (`[3]` for the fourth item of a list file). */
  base: PropertyKey[];
  locate: (path: readonly PropertyKey[]) => number | undefined;
}

/** A record with its origin. */
export interface Located<T> {
  record: T;
  origin: RecordOrigin;
}

/** Every record of the catalog, parsed and typed. */
export interface ParsedRecords {
  formats: Located<FormatRecord>[];
  storageLocations: Located<StorageLocationRecord>[];
  collections: Located<CollectionRecord>[];
  datasets: Located<DatasetRecord>[];
  /** Slugs of records that failed to parse, so references to them are not reported a second time as dangling. */
  brokenSlugs: Set<string>;
}

/** The records parsed from one file: their values and their paths inside it. Only valid files are cached. */
export interface ParsedFile {
  records: { base: PropertyKey[]; record: unknown }[];
}

/** Parsed files by `<path>:<sha256>`, carried from one build to the next. */
export type ParseCache = Map<string, ParsedFile>;

const SCHEMAS: Record<RecordKind, z.ZodType> = {
  formats: FormatRecordSchema,
  'storage-locations': StorageLocationRecordSchema,
  collection: CollectionRecordSchema,
  dataset: DatasetRecordSchema,
};

const BROKEN_PREFIX: Record<RecordKind, string> = { formats: 'format', 'storage-locations': 'storage_location', collection: 'collection', dataset: 'dataset' };

/** Tells the line of a field of a located record. */
export function locateField(origin: RecordOrigin, path: readonly PropertyKey[]): number | undefined {
  return origin.locate([...origin.base, ...path]);
}

/**
 * Parses every record file with its zod schema, collecting every issue of every file instead of stopping at the
 * first. A file whose text is in `cache` is taken from it without parsing; `cache` ends up holding exactly the
 * valid files of this run.
 */
export function parseRecords(files: RecordFile[], cache: ParseCache = new Map()): { records: ParsedRecords; issues: BuildIssue[]; cache: ParseCache } {
  const records: ParsedRecords = { formats: [], storageLocations: [], collections: [], datasets: [], brokenSlugs: new Set() };
  const issues: BuildIssue[] = [];
  const nextCache: ParseCache = new Map();
  for (const file of files) {
    const cacheKey = `${file.source}:${file.sha256}`;
    const cached = cache.get(cacheKey);
    const { parsed, complete } = cached ? { parsed: cached, complete: true } : parseFile(file, issues, records.brokenSlugs);
    if (complete) nextCache.set(cacheKey, parsed);
    const locate = (path: readonly PropertyKey[]) => file.document().locate(path);
    for (const { base, record } of parsed.records) {
      const located = { record, origin: { source: file.source, base, locate } } as Located<never>;
      if (file.kind === 'formats') records.formats.push(located);
      else if (file.kind === 'storage-locations') records.storageLocations.push(located);
      else if (file.kind === 'collection') records.collections.push(located);
      else records.datasets.push(located);
    }
  }
  return { records, issues, cache: nextCache };
}

/** Parses one file, reporting its problems; `complete` tells whether every record in it was valid. */
function parseFile(file: RecordFile, issues: BuildIssue[], brokenSlugs: Set<string>): { parsed: ParsedFile; complete: boolean } {
  const document = file.document();
  if (document.issues.length > 0) {
    issues.push(...withCode('RecordSyntax', document.issues));
    return { parsed: { records: [] }, complete: false };
  }
  const list = file.kind === 'formats' || file.kind === 'storage-locations';
  if (list && !Array.isArray(document.value)) {
    issues.push({ code: 'RecordInvalid', source: file.source, line: 1, path: '', message: 'must be a list of records (each item starting with `- slug: …`)' });
    return { parsed: { records: [] }, complete: false };
  }
  const items = list ? (document.value as unknown[]).map((value, index) => ({ value, base: [index] as PropertyKey[] })) : [{ value: document.value, base: [] as PropertyKey[] }];
  const parsed: ParsedFile = { records: [] };
  let complete = true;
  for (const { value, base } of items) {
    const result = safeParseWithFriendlyErrors(SCHEMAS[file.kind], value, {
      source: file.source,
      locate: (path) => document.locate([...base, ...path]),
      describePath: (path) => formatPath([...base, ...path]),
    });
    if (result.ok) {
      parsed.records.push({ base, record: result.data });
      continue;
    }
    complete = false;
    issues.push(...withCode('RecordInvalid', result.issues));
    const slug = (value as { slug?: unknown } | null)?.slug;
    if (typeof slug === 'string') brokenSlugs.add(`${BROKEN_PREFIX[file.kind]}:${slug}`);
  }
  return { parsed, complete };
}
