/**
 * Page tokens of the STAC API's `next` links. A token is stateless: it names the offset of the next page, the
 * search it belongs to and the catalog it was made on (digests), so any replica serving the same dist/ answers
 * it, and a token from another search or another build is refused with a 400 that says why rather than
 * answered with a wrong page. Not a secret: a token someone edits can only ask for another page of the same
 * search, which they could ask for anyway.
 */

/** The parts of a page token. */
export interface PageToken {
  /** Items (or Collections) to skip. */
  offset: number;
  /** Digest of the search, without limit and token. */
  search: string;
  /** Digest of the catalog the search ran on. */
  catalog: string;
}

const TOKEN_VERSION = 1;
/** Tokens are short; a longer one is not ours, and is refused before it is decoded. */
const MAX_TOKEN_LENGTH = 200;

/** Writes a page token as base64url text. */
export function encodePageToken(token: PageToken): string {
  return btoa(JSON.stringify([TOKEN_VERSION, token.offset, token.search, token.catalog])).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Reads a page token for a search on a catalog: the offset it names, or why it cannot be used.
 * @example readPageToken(encodePageToken({ offset: 10, search: 's', catalog: 'c' }), 's', 'c') // { ok: true, offset: 10 }
 */
export function readPageToken(text: string, search: string, catalog: string): { ok: true; offset: number } | { ok: false; detail: string } {
  const parts = decode(text);
  if (!parts) return { ok: false, detail: 'is not a page token of this API; use the next link of a previous answer as it is' };
  const [, offset, tokenSearch, tokenCatalog] = parts;
  if (tokenCatalog !== catalog) return { ok: false, detail: 'was made on another build of the catalog, which has changed since; run the search again from its first page' };
  if (tokenSearch !== search) return { ok: false, detail: 'belongs to a different search; send the same parameters as the request whose next link gave it' };
  return { ok: true, offset };
}

function decode(text: string): [number, number, string, string] | undefined {
  if (text.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const parts = JSON.parse(atob(text.replace(/-/g, '+').replace(/_/g, '/'))) as unknown;
    if (!Array.isArray(parts) || parts.length !== 4 || parts[0] !== TOKEN_VERSION) return undefined;
    const [, offset, search, catalog] = parts;
    if (!Number.isSafeInteger(offset) || offset < 0 || typeof search !== 'string' || typeof catalog !== 'string') return undefined;
    return parts as [number, number, string, string];
  } catch {
    return undefined;
  }
}

/**
 * A 64-bit digest of text as 16 hex digits (two FNV-1a passes with different offsets): enough to tell searches
 * and builds apart, and free of Node's crypto so that core/ stays browser-safe.
 */
export function hashText(text: string): string {
  return new TextDigest().update(text).digest();
}

/** `hashText` of a text given in pieces: the digest of the pieces one after another, without joining them. */
export class TextDigest {
  #a = 0x811c9dc5;
  #b = 0x01000193 ^ 0x5bd1e995;

  /** Adds the next piece of the text. */
  update(text: string): this {
    let a = this.#a;
    let b = this.#b;
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      a = Math.imul(a ^ code, 0x01000193);
      b = Math.imul(b ^ code, 0x01000193) ^ (b >>> 15);
    }
    this.#a = a;
    this.#b = b;
    return this;
  }

  /** The digest of the pieces so far. */
  digest(): string {
    return (this.#a >>> 0).toString(16).padStart(8, '0') + (this.#b >>> 0).toString(16).padStart(8, '0');
  }
}
