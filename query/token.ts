import { randomBytes } from 'node:crypto';
import { base64url, EncryptJWT, errors, jwtDecrypt } from 'jose';
import { z } from 'zod';
import { SourceReferenceSchema } from '../schemas/query.ts';
import { queryError } from '../server/errors.ts';

/** What a query token carries, encrypted: everything needed to run the query again on any instance. */
export const TokenPayloadSchema = z.strictObject({
  qid: z.string(),
  sql: z.string(),
  sources: z.array(SourceReferenceSchema),
  limit: z.number().int(),
  geometry_column: z.string().optional(),
  result_crs: z.string().optional(),
});

/** The query a token stands for. */
export type TokenPayload = z.infer<typeof TokenPayloadSchema>;

/** Keys by id; the first encrypts. */
export interface TokenKeys {
  current: { kid: string; key: Uint8Array };
  all: Map<string, Uint8Array>;
  /** True when the key was generated for this process because none was configured. */
  generated: boolean;
}

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

/** Encrypts a query into a compact JWE (`dir` + `A256GCM`), bound to its query id and valid for `ttlSeconds`. */
export async function createToken(payload: TokenPayload, keys: TokenKeys, ttlSeconds: number): Promise<string> {
  return new EncryptJWT({ ...payload })
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: keys.current.kid })
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .encrypt(keys.current.key);
}

/**
 * Decrypts a token and checks it belongs to `queryId`. Each failure is a 400 QueryError with its own code:
 * `token_missing`, `token_expired`, `token_invalid` (tampered, unknown key, not a token) or `token_query_mismatch`.
 */
export async function readToken(token: string | null | undefined, queryId: string, keys: TokenKeys): Promise<TokenPayload> {
  if (!token) throw queryError(400, 'token_missing', 'Send the query_token of the query in the X-Service-Query-Token header.');
  let claims: unknown;
  try {
    const result = await jwtDecrypt(token, async (header) => {
      const key = header.kid === undefined ? undefined : keys.all.get(header.kid);
      if (!key) throw new errors.JWEInvalid('unknown key');
      return key;
    }, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
    claims = result.payload;
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw queryError(400, 'token_expired', 'The query token has expired; run the query again with POST /api/queries.');
    throw queryError(400, 'token_invalid', 'The query token is not valid: it was changed, or made with a key this service does not have.');
  }
  const { iat: _iat, exp: _exp, ...rest } = claims as Record<string, unknown>;
  const payload = TokenPayloadSchema.safeParse(rest);
  if (!payload.success) throw queryError(400, 'token_invalid', 'The query token is not valid.');
  if (payload.data.qid !== queryId) throw queryError(400, 'token_query_mismatch', 'The query token belongs to another query_id than the one in the path.');
  return payload.data;
}
