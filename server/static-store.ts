import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Sliced } from '../core/slices.ts';
import type { Manifest, ManifestEntry } from '../runtime/manifest.ts';
import { bodyHeaders } from './headers.ts';

/** A body variant: identity, brotli or gzip. */
export type Encoding = 'identity' | 'br' | 'gzip';

/** A file ready to send in one encoding: its bytes and its response headers, both built once. */
export interface StaticBody {
  entry: ManifestEntry;
  encoding: Encoding;
  bytes: Buffer;
  /** Response headers as name/value pairs (content type, ETag, caching, CORS, encoding). */
  headers: [string, string][];
}

const SUFFIX: Record<Encoding, string> = { identity: '', br: '.br', gzip: '.gz' };

/**
 * Keeps the bodies of `dist/` in memory, least recently used evicted past a byte budget, each with its response
 * headers ready. Only keys listed in the manifest can be read, so no request path ever reaches the file system:
 * nothing outside `dist/` can be served. A file is served only when its bytes are the ones the manifest lists
 * (its SHA-256; a compressed sibling, its size): a build killed among its renames leaves some new files under the
 * old manifest until the next build finishes them (generator/emit/write-tree.ts), and those are treated as absent,
 * so /api answers them from the model and the ETag, the manifest's hash, never names other bytes.
 */
export class StaticStore {
  readonly distDir: string;
  readonly manifest: Manifest;
  readonly #budget: number;
  readonly #cacheMaxAge: number;
  readonly #cache = new Map<string, StaticBody>();
  /** Paths whose bytes do not match the manifest, or that could not be read: not read again for this manifest. */
  readonly #refused = new Set<string>();
  #used = 0;
  /** True once every body fits in memory; then hits need no bookkeeping. */
  #complete = false;

  constructor(distDir: string, manifest: Manifest, options: { budgetBytes: number; cacheMaxAge: number }) {
    this.distDir = distDir;
    this.manifest = manifest;
    this.#budget = options.budgetBytes;
    this.#cacheMaxAge = options.cacheMaxAge;
  }

  /** Whether the tree holds a file with this key. */
  has(key: string): boolean {
    return Object.hasOwn(this.manifest.files, key);
  }

  /** A file in the best encoding the client accepts; undefined when the key is not in the manifest, or its bytes on disk are not the ones listed. */
  get(key: string, accepted: { br: boolean; gzip: boolean }): StaticBody | undefined {
    const entry = this.manifest.files[key];
    if (entry === undefined || !Object.hasOwn(this.manifest.files, key)) return undefined;
    const encoding: Encoding = entry.br !== undefined && accepted.br ? 'br' : entry.gz !== undefined && accepted.gzip ? 'gzip' : 'identity';
    const path = key + SUFFIX[encoding];
    const cached = this.#cache.get(path);
    if (cached) {
      if (!this.#complete) {
        this.#cache.delete(path);
        this.#cache.set(path, cached);
      }
      return cached;
    }
    return this.#load(key, entry, encoding);
  }

  /**
   * Takes over the bodies the store of the previous build holds whose manifest entry is unchanged (same bytes by
   * their SHA-256), so that a reload reads again only what the build changed. Reading and hashing the bodies
   * anew held the server's one thread 1.1–1.4 s per reload of the 10k × 3 catalog, up to 11 s while a build
   * wrote (BENCHMARKS.md, "Load while building"); a one-dataset build changes about 30 files. Sliced, as a reload
   * is (server/catalog.ts).
   */
  *adopt(previous: StaticStore): Sliced<void> {
    if (previous.#cacheMaxAge !== this.#cacheMaxAge) return;
    let seen = 0;
    for (const [path, body] of previous.#cache) {
      if (++seen % 1024 === 0) yield;
      // The previous store serves on between slices, and may put a body it serves back at the end of its order.
      if (this.#cache.has(path)) continue;
      const key = path.slice(0, path.length - SUFFIX[body.encoding].length);
      const entry = this.manifest.files[key];
      if (entry === undefined || !Object.hasOwn(this.manifest.files, key) || !sameBytes(entry, body.entry)) continue;
      if (this.#used + body.bytes.length > this.#budget) break;
      this.#cache.set(path, { ...body, entry });
      this.#used += body.bytes.length;
    }
  }

  /** Loads bodies while they fit in half the budget, so the first requests after start are served from memory. */
  warm(): void {
    for (const [key, entry] of Object.entries(this.manifest.files)) {
      for (const encoding of ['identity', 'br', 'gzip'] as const) {
        if ((encoding === 'br' && entry.br === undefined) || (encoding === 'gzip' && entry.gz === undefined)) continue;
        if (this.#used > this.#budget / 2) return;
        this.#load(key, entry, encoding);
      }
    }
    this.#complete = true;
  }

  #load(key: string, entry: ManifestEntry, encoding: Encoding): StaticBody | undefined {
    const path = key + SUFFIX[encoding];
    if (this.#refused.has(path)) return undefined;
    // A compressed sibling is checked by its size, and by its file's own bytes, which the manifest hashes.
    const listed = encoding === 'identity' || this.#cache.has(key) || this.#load(key, entry, 'identity') !== undefined;
    const bytes = listed ? readListedFile(join(this.distDir, path), entry, encoding) : undefined;
    if (!bytes) {
      this.#refused.add(path);
      return undefined;
    }
    const headers = bodyHeaders({ type: entry.type, sha256: entry.sha256, encoding, varies: entry.br !== undefined, cacheMaxAge: this.#cacheMaxAge, key });
    const body: StaticBody = { entry, encoding, bytes, headers };
    if (bytes.length <= this.#budget) {
      this.#cache.set(path, body);
      this.#used += bytes.length;
      for (const [oldest, old] of this.#cache) {
        if (this.#used <= this.#budget) break;
        this.#complete = false;
        this.#cache.delete(oldest);
        this.#used -= old.bytes.length;
      }
    }
    return body;
  }
}

/** Whether two manifest entries describe the same bodies: the same file bytes, compressed siblings and type. */
function sameBytes(a: ManifestEntry, b: ManifestEntry): boolean {
  return a.sha256 === b.sha256 && a.bytes === b.bytes && a.br === b.br && a.gz === b.gz && a.type === b.type;
}

/** The bytes of a file when they are what the manifest lists; undefined when they differ or cannot be read. */
function readListedFile(path: string, entry: ManifestEntry, encoding: Encoding): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  const size = encoding === 'identity' ? entry.bytes : encoding === 'br' ? entry.br : entry.gz;
  if (bytes.length !== size) return undefined;
  return encoding !== 'identity' || hash('sha256', bytes, 'hex') === entry.sha256 ? bytes : undefined;
}

const NONE = Object.freeze({ br: false, gzip: false });
const parsed = new Map<string, { br: boolean; gzip: boolean }>();

/** Reads which of br and gzip an Accept-Encoding header allows (q=0 refuses). Clients send few distinct headers, so results are remembered. */
export function parseAcceptEncoding(header: string | null): { br: boolean; gzip: boolean } {
  if (!header) return NONE;
  let accepted = parsed.get(header);
  if (accepted) return accepted;
  accepted = readAcceptEncoding(header);
  if (parsed.size > 1000) parsed.clear();
  parsed.set(header, accepted);
  return accepted;
}

function readAcceptEncoding(header: string): { br: boolean; gzip: boolean } {
  const accepted = { br: false, gzip: false };
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const refused = params.some((param) => /^\s*q=0(\.0*)?\s*$/.test(param));
    if (name === 'br' || name === '*') accepted.br ||= !refused;
    if (name === 'gzip' || name === '*') accepted.gzip ||= !refused;
  }
  return accepted;
}
