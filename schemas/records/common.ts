import { z } from 'zod';
import { SlugSchema, TimestampSchema } from '../common.ts';

/** A version as stewards write it: `2.0.2` or `3`; numbers become strings. */
export const RecordVersionSchema = z
  .union([z.string().min(1), z.number()])
  .transform((value) => String(value))
  // A version is one path segment of the STAC tree (`…/versions/{version}`).
  .refine((value) => !/[/\\\0]/.test(value) && value !== '.' && value !== '..', 'must not contain "/" or "\\", nor be "." or ".."')
  .describe('Version of the stored data, e.g. 2.0.2.');

/** Free text written by a data steward; surrounding whitespace is trimmed. */
export const ProseSchema = z.string().trim().min(1, 'must not be empty');

/** Slug written in a record. */
export const RecordSlugSchema = SlugSchema;

/** `updated_at` as a steward writes it. */
export const RecordTimestampSchema = TimestampSchema;
