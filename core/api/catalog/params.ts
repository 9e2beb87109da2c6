import { z } from 'zod';
import { DEFAULT_COLUMN_LIMIT, DEFAULT_LIST_LIMIT, MAX_COLUMN_LIMIT } from '../../constants.ts';
import { MAX_TILE_ZOOM } from '../../geo/mvt-tile-math.ts';
import { parseTagFilters, serializeTagFilters, type TagFilters } from '../../tag-filters.ts';
import { tokenize } from '../../text.ts';
import { SlugSchema } from '../../../schemas/common.ts';
import { QueryResultSchema } from '../../../schemas/query.ts';

/** A slug path parameter. */
export const slugParam = (what: string) => SlugSchema.describe(`Slug of the ${what}.`);

/** `{sourceId}` of a source's download-zip: a source's numeric id, as its file's metadata lists it. */
export const SourceIdParam = z.int().min(1).describe('Numeric id of one source of the file, as its metadata lists it.');

/** `{id}` of `GET /api/datasets/{id}`: one spelling per id, so `01` is refused rather than served twice. */
export const DatasetIdParam = z.int().min(1).describe('Numeric dataset id, in decimal without leading zeros.');

/** Search words; the canonical form is the distinct folded words, sorted. */
const searchText = (description: string) =>
  z.string().transform((text) => [...new Set(tokenize(text))].sort().join(' ') || undefined).describe(description);

/**
 * A comma-separated set of names from `allowed`, written back as `canonical` gives it. Order, repeats and blanks
 * do not matter.
 */
function nameSet<const N extends string, const C extends string>(allowed: readonly N[], canonical: (names: Set<N>) => C | undefined, accepted: readonly C[]) {
  return z
    .string()
    .transform((text, ctx) => {
      const names = new Set(text.split(',').map((name) => name.trim()).filter(Boolean));
      const unknown = [...names].filter((name) => !(allowed as readonly string[]).includes(name));
      const value = unknown.length === 0 ? canonical(names as Set<N>) : undefined;
      if (names.size > 0 && value === undefined) {
        ctx.issues.push({ code: 'custom', input: text, message: `accepts ${accepted.map((name) => `"${name}"`).join(' or ')}; got "${text.slice(0, 80)}"` });
        return z.NEVER;
      }
      return value;
    })
    .meta({ enum: [...accepted] });
}

/** `tag_filters`: parsed into a Map of folded values, written back sorted. */
const TagFiltersParam = z
  .codec(z.string(), z.custom<TagFilters>((value) => value instanceof Map).optional(), {
    decode: (text, ctx) => {
      if (text.trim() === '') return undefined;
      const parsed = parseTagFilters(text);
      if (parsed.ok) return parsed.filters;
      ctx.issues.push({ code: 'custom', input: text, message: parsed.detail });
      return z.NEVER;
    },
    encode: (filters) => (filters ? serializeTagFilters(filters) : ''),
  })
  .describe('key:value pairs separated by commas; values of one key match any of them, different keys must all match. The tags route lists keys and values.');

const includeUrls = z.boolean().default(false).describe('true adds source download URLs.');
const trimmed = (description: string) => z.string().transform((text) => text.trim() || undefined).describe(description);

/** Query parameters of `GET /api/collections`. */
export const COLLECTIONS_QUERY = {
  include: nameSet(['datasets', 'files'], (names) => (!names.has('datasets') ? undefined : names.has('files') ? 'datasets,files' : 'datasets'), ['datasets', 'datasets,files'])
    .describe('datasets adds compact datasets to each collection; datasets,files adds their files too.'),
};

/** Query parameters of `GET /api/collections/{slug}`. */
export const LISTING_QUERY = {
  search: searchText('Words to find: every word must match a word of the dataset, whole or as a prefix; case and accents are ignored.'),
  query: searchText('Alias of search.'),
  tag_filters: TagFiltersParam,
  limit: z.int().min(1).default(DEFAULT_LIST_LIMIT).describe(`Page size; ${DEFAULT_LIST_LIMIT} when omitted.`),
  offset: z.int().min(0).nullable().default(0).describe('Datasets to skip.'),
  include: z.enum(['files']).describe('files adds compact file summaries.'),
  include_urls: includeUrls,
  omit: nameSet(['description'], (names) => (names.has('description') ? 'description' : undefined), ['description']).describe('description omits dataset descriptions.'),
};

/** Query parameters of the tags route. */
export const TAGS_QUERY = { tag_key: trimmed('Only this key; a key the collection does not use gives no tags.') };

/** Query parameters of dataset detail. */
export const DATASET_QUERY = { include_urls: includeUrls };

/** Query parameters of the schema route. Either paging parameter turns paging on; the other then takes its default. */
export const SCHEMA_QUERY = {
  version: trimmed('Source version; the newest schema-capable one when omitted.'),
  column_offset: z.int().min(0).nullable().describe('Columns to skip; turns paging on (0 when only column_limit is given).'),
  column_limit: z.int().min(1).max(MAX_COLUMN_LIMIT).nullable()
    .describe(`Columns per page, 1 to ${MAX_COLUMN_LIMIT}; turns paging on (${DEFAULT_COLUMN_LIMIT} when only column_offset is given).`),
};

/** The conditional request header of every catalog route: ETags are content hashes. */
export const CONDITIONAL_HEADERS = {
  'If-None-Match': z.string().optional().describe('ETags of documents you hold; when one names this document, the answer is 304 without body.'),
};

/** `{query_id}` of the query routes: the pattern of QueryResult.query_id. */
export const QueryIdParam = QueryResultSchema.shape.query_id.describe('The query_id of a QueryResult.');

/** The query token, as QueryResult.query_token. */
export const QueryTokenSchema = QueryResultSchema.shape.query_token;

/** Path parameters of the tile route: canonical decimal integers only (no `01`, `0x1`, `1e0`, `+1`). */
export const TILE_PATH = {
  query_id: QueryIdParam,
  z: z.int().min(0).max(MAX_TILE_ZOOM).describe(`Zoom, 0 to ${MAX_TILE_ZOOM}.`),
  x: z.int().min(0).max(2 ** MAX_TILE_ZOOM - 1).describe('Column, 0 to 2^z - 1.'),
  y: z.int().min(0).max(2 ** MAX_TILE_ZOOM - 1).describe('Row, 0 to 2^z - 1.'),
};
