import { z } from 'zod';

/** Timestamp without timezone, as the contract writes `<timestamp>`: `2026-11-22T08:30:00`. */
export const TimestampSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/, 'must look like 2026-11-22T08:30:00 (no timezone)')
  .meta({ id: 'Timestamp', description: 'ISO-like timestamp without timezone, in UTC.' });

/** Object of link names to absolute URLs. */
export const ApiLinkMapSchema = z
  .record(z.string(), z.string())
  .meta({ id: 'ApiLinkMap', description: 'Link names mapped to absolute URLs.' });

/** Numeric id from the id ledger: a positive integer, never changed or reused. */
export const IdSchema = z.number().int().positive();

/** Lower-case kebab-case slug used in paths. */
export const SlugSchema = z
  .string()
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be lower-case letters and digits separated by single hyphens, e.g. admin-0-countries');

/** `created_at` and `updated_at`, shared by every catalog resource. */
export const timestampFields = {
  created_at: TimestampSchema.optional().describe('When the record was first given an id.'),
  updated_at: TimestampSchema.optional().describe('When a data steward last changed the record.'),
};
