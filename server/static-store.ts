import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest, ManifestEntry } from '../core/manifest.ts';

/** A body variant: identity, brotli or gzip. */
export type Encoding = 'identity' | 'br' | 'gzip';

/** A file ready to send: its bytes for one encoding, with its manifest entry. */
export interface StaticBody {
  entry: ManifestEntry;
  encoding: Encoding;
  bytes: Buffer;
}

const SUFFIX: Record<Encoding, string> = { identity: '', br: '.br', gzip: '.gz' };

/**
 * Keeps the bodies of `dist/` in memory, least recently used evicted past a byte budget. Only keys listed in the
 * manifest can be read, so no request path ever reaches the file system: nothing outside `dist/` can be served.
 */
export class StaticStore {
  readonly distDir: string;
  readonly manifest: Manifest;
  readonly #budget: number;
  readonly #cache = new Map<string, Buffer>();
  #used = 0;

  constructor(distDir: string, manifest: Manifest, budgetBytes: number) {
    this.distDir = distDir;
    this.manifest = manifest;
    this.#budget = budgetBytes;
  }

  /** Whether the tree holds a file with this key. */
  has(key: string): boolean {
    return Object.hasOwn(this.manifest.files, key);
  }

  /** Reads a file in the best encoding the client accepts; undefined when the key is not in the manifest. */
  get(key: string, accepted: { br: boolean; gzip: boolean }): StaticBody | undefined {
    if (!this.has(key)) return undefined;
    const entry = this.manifest.files[key]!;
    const encoding: Encoding = entry.br !== undefined && accepted.br ? 'br' : entry.gz !== undefined && accepted.gzip ? 'gzip' : 'identity';
    const path = key + SUFFIX[encoding];
    let bytes = this.#cache.get(path);
    if (bytes) {
      this.#cache.delete(path);
      this.#cache.set(path, bytes);
    } else {
      bytes = readFileSync(join(this.distDir, path));
      this.#remember(path, bytes);
    }
    return { entry, encoding, bytes };
  }

  /** Loads bodies until the budget is half used, so the first requests after start are served from memory. */
  warm(): void {
    for (const [key, entry] of Object.entries(this.manifest.files)) {
      if (this.#used > this.#budget / 2) return;
      for (const encoding of ['identity', 'br', 'gzip'] as const) {
        if (encoding === 'br' && entry.br === undefined) continue;
        if (encoding === 'gzip' && entry.gz === undefined) continue;
        const path = key + SUFFIX[encoding];
        this.#remember(path, readFileSync(join(this.distDir, path)));
      }
    }
  }

  #remember(path: string, bytes: Buffer): void {
    if (bytes.length > this.#budget) return;
    this.#cache.set(path, bytes);
    this.#used += bytes.length;
    for (const [oldest, old] of this.#cache) {
      if (this.#used <= this.#budget) break;
      this.#cache.delete(oldest);
      this.#used -= old.length;
    }
  }
}

/** Reads which of br and gzip an Accept-Encoding header allows (q=0 refuses). */
export function parseAcceptEncoding(header: string | null): { br: boolean; gzip: boolean } {
  const accepted = { br: false, gzip: false };
  if (!header) return accepted;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const refused = params.some((param) => /^\s*q=0(\.0*)?\s*$/.test(param));
    if (name === 'br' || name === '*') accepted.br ||= !refused;
    if (name === 'gzip' || name === '*') accepted.gzip ||= !refused;
  }
  return accepted;
}
