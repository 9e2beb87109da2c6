import type { z } from 'zod';
import { formatPath, safeParseWithFriendlyErrors, type InputIssue } from '../../schemas/parse.ts';
import { withCode, type BuildIssue } from '../errors.ts';
import { CollectionRecordSchema, type CollectionRecord } from '../../schemas/records/collection-record.ts';
import { DatasetRecordSchema, type DatasetRecord } from '../../schemas/records/dataset-record.ts';
import { FormatRecordSchema, type FormatRecord } from '../../schemas/records/format-record.ts';
import { StorageLocationRecordSchema, type StorageLocationRecord } from '../../schemas/records/storage-location-record.ts';
import type { RecordFile } from '../load/read-records.ts';

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

/** Tells the line of a field of a located record. */
export function locateField(origin: RecordOrigin, path: readonly PropertyKey[]): InputIssue['line'] {
  return origin.locate([...origin.base, ...path]);
}

/**
 * Parses every record file with its zod schema, collecting every issue of every file instead of stopping at the first.
 */
export function parseRecords(files: RecordFile[]): { records: ParsedRecords; issues: BuildIssue[] } {
  const records: ParsedRecords = { formats: [], storageLocations: [], collections: [], datasets: [], brokenSlugs: new Set() };
  const issues: BuildIssue[] = [];
  for (const file of files) {
    issues.push(...withCode('RecordSyntax', file.issues));
    if (file.issues.length > 0) continue;
    const parseAt = <T extends z.ZodType>(schema: T, value: unknown, base: PropertyKey[], brokenKey: string): Located<z.output<T>> | undefined => {
      const result = safeParseWithFriendlyErrors(schema, value, {
        source: file.source,
        locate: (path) => file.locate([...base, ...path]),
        describePath: (path) => formatPath([...base, ...path]),
      });
      if (result.ok) return { record: result.data, origin: { source: file.source, base, locate: file.locate } };
      issues.push(...withCode('RecordInvalid', result.issues));
      const slug = (value as { slug?: unknown } | null)?.slug;
      if (typeof slug === 'string') records.brokenSlugs.add(`${brokenKey}:${slug}`);
      return undefined;
    };
    const items = (value: unknown): unknown[] => {
      if (Array.isArray(value)) return value;
      issues.push({ code: 'RecordInvalid', source: file.source, line: 1, path: '', message: 'must be a list of records (each item starting with `- slug: …`)' });
      return [];
    };
    switch (file.kind) {
      case 'formats':
        items(file.value).forEach((value, index) => pushDefined(records.formats, parseAt(FormatRecordSchema, value, [index], 'format')));
        break;
      case 'storage-locations':
        items(file.value).forEach((value, index) =>
          pushDefined(records.storageLocations, parseAt(StorageLocationRecordSchema, value, [index], 'storage_location')));
        break;
      case 'collection':
        pushDefined(records.collections, parseAt(CollectionRecordSchema, file.value, [], 'collection'));
        break;
      case 'dataset':
        pushDefined(records.datasets, parseAt(DatasetRecordSchema, file.value, [], 'dataset'));
        break;
    }
  }
  return { records, issues };
}

function pushDefined<T>(list: T[], item: T | undefined): void {
  if (item !== undefined) list.push(item);
}
