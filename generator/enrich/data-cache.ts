import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hashFile } from '../../runtime/source-files.ts';

/** What one file's cache entry holds; the reader that fills it bumps `version` when its output changes. */
export interface DataCacheFile<T> {
  version: number;
  /** Facts by content hash: a file moved or copied keeps its entry. */
  facts: Record<string, T>;
  /** Content hash by path, size and mtime, so an unchanged file is not read again just to hash it. */
  hashes: Record<string, { size: number; mtimeMs: number; sha256: string }>;
}

/**
 * Facts computed from data files, cached by the files' content hashes, so a rebuild reads no data from a file
 * that did not change. Lives in GEOSHELF_CACHE_DIR; deleting it only makes the next build slower.
 */
export class DataCache<T> {
  readonly #path: string;
  readonly #version: number;
  #file: DataCacheFile<T>;
  /** Content hashes computed in this run, for tests and progress output. */
  hashed = 0;
  #dirty = false;

  private constructor(path: string, version: number, file: DataCacheFile<T>) {
    this.#path = path;
    this.#version = version;
    this.#file = file;
  }

  /** Opens the cache; an unreadable cache, or one written for another `version`, starts empty. */
  static async open<T>(cacheDir: string, name: string, version: number): Promise<DataCache<T>> {
    const path = join(cacheDir, name);
    const empty: DataCacheFile<T> = { version, facts: {}, hashes: {} };
    try {
      const file = JSON.parse(await readFile(path, 'utf8')) as DataCacheFile<T>;
      return new DataCache(path, version, file.version === version ? file : empty);
    } catch {
      return new DataCache(path, version, empty);
    }
  }

  /** The content hash of a file, from the memo when its size and mtime are unchanged. */
  async contentHash(path: string): Promise<string> {
    const info = await stat(path);
    const known = this.#file.hashes[path];
    if (known && known.size === info.size && known.mtimeMs === info.mtimeMs) return known.sha256;
    const digest = await hashFile(path);
    this.hashed++;
    this.#dirty = true;
    this.#file.hashes[path] = { size: info.size, mtimeMs: info.mtimeMs, sha256: digest };
    return digest;
  }

  /** Cached facts of a content hash. */
  get(sha256: string): T | undefined {
    return this.#file.facts[sha256];
  }

  /** The paths whose content hashes the memo holds. */
  paths(): string[] {
    return Object.keys(this.#file.hashes);
  }

  /** The keys that have facts. */
  keys(): string[] {
    return Object.keys(this.#file.facts);
  }

  /** Remembers facts for a content hash. */
  set(sha256: string, facts: T): void {
    this.#file.facts[sha256] = facts;
    this.#dirty = true;
  }

  /** Writes the cache atomically, keeping only entries of the given hashes and paths (this build's files). */
  async save(keepHashes: Set<string>, keepPaths: Set<string>): Promise<void> {
    const unused = Object.keys(this.#file.facts).some((key) => !keepHashes.has(key)) || Object.keys(this.#file.hashes).some((key) => !keepPaths.has(key));
    if (!this.#dirty && !unused) return;
    const file: DataCacheFile<T> = {
      version: this.#version,
      facts: Object.fromEntries(Object.entries(this.#file.facts).filter(([key]) => keepHashes.has(key))),
      hashes: Object.fromEntries(Object.entries(this.#file.hashes).filter(([key]) => keepPaths.has(key))),
    };
    await mkdir(join(this.#path, '..'), { recursive: true });
    const temporary = `${this.#path}.tmp-${process.pid}`;
    await writeFile(temporary, JSON.stringify(file));
    await rename(temporary, this.#path);
  }
}

