import { randomBytes } from 'node:crypto';
import { base64url, CompactEncrypt, compactDecrypt, errors } from 'jose';
import { z } from 'zod';
import { SourceReferenceSchema, type SourceReference } from '../schemas/query.ts';
import { queryFailure } from './errors.ts';

/** What a query token stands for: everything needed to run the query again on any replica. */
export interface TokenPayload {
  qid: string;
  sql: string;
  sources: SourceReference[];
  limit: number;
  geometry_column?: string;
  result_crs?: string;
  /** The version of each source's data when the query ran (`ResolvedSource.version`), in the order of `sources`. */
  data?: string[];
}

/** Keys by id; the first encrypts. */
export interface TokenKeys {
  current: { kid: string; key: Uint8Array };
  all: Map<string, Uint8Array>;
  /** True when the key was generated for this process because none was configured. */
  generated: boolean;
}

/** Version of the plaintext layout below; a token of another version is invalid. */
const FORMAT = 1;

/**
 * The plaintext's first line: the query's settings, with each source as a compact tuple. The SQL follows the
 * newline as raw UTF-8, not as a JSON string: JSON would escape control characters six-fold, and a contract-valid
 * 8 KiB SQL made tokens of 22–64 KB that no client could send back in a header. This way the token grows by
 * 4/3 of the SQL's bytes at most (about 12 KB for the largest query).
 */
const HeaderSchema = z.strictObject({
  v: z.literal(FORMAT),
  qid: z.string(),
  exp: z.number().int(),
  src: z.array(z.tuple([z.string(), z.number(), z.number(), z.number(), z.number()])),
  limit: z.number().int(),
  gc: z.string().optional(),
  crs: z.string().optional(),
  data: z.array(z.string()).optional(),
});

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads GEOSHELF_QUERY_KEYS (`kid:key,kid:key`, keys 32 bytes in base64url). With none, generates a random key
 * for this process: tokens then only work on this process, which is fine for `npm start` but not for a fleet.
 */
export function readTokenKeys(setting: string): TokenKeys {
  const pairs = setting.split(',').map((pair) => pair.trim()).filter(Boolean);
  if (pairs.length === 0) {
    const key = new Uint8Array(randomBytes(32));
    return { current: { kid: 'process', key }, all: new Map([['process', key]]), generated: true };
  }
  const all = new Map<string, Uint8Array>();
  for (const pair of pairs) {
    const separator = pair.indexOf(':');
    const kid = pair.slice(0, separator);
    const key = separator > 0 ? base64url.decode(pair.slice(separator + 1)) : new Uint8Array();
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(kid) || key.length !== 32) {
      throw new Error('GEOSHELF_QUERY_KEYS must be comma-separated kid:key pairs, each key 32 bytes in base64url (for example: node -e "console.log(\'k1:\' + require(\'crypto\').randomBytes(32).toString(\'base64url\'))")');
    }
    all.set(kid, key);
  }
  const [kid, key] = [...all.entries()][0]!;
  return { current: { kid, key }, all, generated: false };
}

/** A random query id: 24 characters of base64url (144 bits). */
export function createQueryId(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * Encrypts a query into a compact JWE (`dir` + `A256GCM`, with `kid`), bound to its query id and valid for
 * `ttlSeconds` from `now` (seconds since the epoch). Never compressed (DESIGN.md decision 5).
 */
export async function createToken(payload: TokenPayload, keys: TokenKeys, ttlSeconds: number, now = Math.floor(Date.now() / 1000)): Promise<string> {
  const header: z.infer<typeof HeaderSchema> = {
    v: FORMAT,
    qid: payload.qid,
    exp: now + ttlSeconds,
    src: payload.sources.map((source) => [source.alias, source.collection_id, source.dataset_id, source.file_id, source.file_source_id]),
    limit: payload.limit,
    ...(payload.geometry_column === undefined ? {} : { gc: payload.geometry_column }),
    ...(payload.result_crs === undefined ? {} : { crs: payload.result_crs }),
    ...(payload.data === undefined ? {} : { data: payload.data }),
  };
  const plaintext = encoder.encode(`${JSON.stringify(header)}\n${payload.sql}`);
  return new CompactEncrypt(plaintext).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: keys.current.kid }).encrypt(keys.current.key);
}

/**
 * Decrypts a token and checks it belongs to `queryId`. Each failure has its own catalog code:
 * `token_missing`, `token_expired`, `token_invalid` (tampered, unknown key, not a token) or `token_query_mismatch`.
 */
export async function readToken(token: string | null | undefined, queryId: string, keys: TokenKeys, now = Date.now() / 1000): Promise<TokenPayload> {
  if (!token) throw queryFailure('token_missing');
  let plaintext: string;
  try {
    const result = await compactDecrypt(token, async (header) => {
      const key = header.kid === undefined ? undefined : keys.all.get(header.kid);
      if (!key) throw new errors.JWEInvalid('unknown key');
      return key;
    }, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
    plaintext = decoder.decode(result.plaintext);
  } catch {
    throw queryFailure('token_invalid');
  }
  const newline = plaintext.indexOf('\n');
  const header = newline < 0 ? undefined : HeaderSchema.safeParse(safeJson(plaintext.slice(0, newline)));
  if (!header?.success) throw queryFailure('token_invalid');
  const { qid, exp, src, limit, gc, crs, data } = header.data;
  if (exp <= now) throw queryFailure('token_expired');
  if (qid !== queryId) throw queryFailure('token_query_mismatch');
  const sources = src.map(([alias, collection_id, dataset_id, file_id, file_source_id]) => SourceReferenceSchema.safeParse({ alias, collection_id, dataset_id, file_id, file_source_id }));
  if (sources.some((source) => !source.success)) throw queryFailure('token_invalid');
  return {
    qid,
    sql: plaintext.slice(newline + 1),
    sources: sources.map((source) => source.data!),
    limit,
    ...(gc === undefined ? {} : { geometry_column: gc }),
    ...(crs === undefined ? {} : { result_crs: crs }),
    ...(data === undefined ? {} : { data }),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
