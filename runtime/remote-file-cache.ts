import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { StorageLocationModel } from '../core/model.ts';
import { isProcessAlive } from './process-alive.ts';
import { openRemoteObject, RemoteReadError, type RemoteVersion } from './remote-object.ts';

/**
 * Local copies of remote data files for the query service: DuckDB reads a file on this machine, inside the
 * sandbox's `allowed_paths`, with no network, so every layer of the sandbox stays as it is for local data.
 * - A file is fetched whole, once, however many queries ask for it at the same time.
 * - Copies are kept within a byte budget, the least recently used removed first.
 * - A copy is trusted for `revalidateMs`; after that, the next query asks the store for the object's version
 *   (one HEAD) and fetches it again if its ETag, size or last-modified changed. Each version is a file of its
 *   own, so a query running on the old one finishes on the bytes it started with.
 * DuckDB's httpfs would read ranges instead of whole files, but it is an extension downloaded at run time, which
 * this deployment does not allow (README, "Data in object storage").
 */
export class RemoteFileCache {
  /** The shared folder, and this cache's own folder in it. */
  readonly #root: string;
  readonly #dir: string;
  readonly #budgetBytes: number;
  readonly #revalidateMs: number;
  readonly #env: NodeJS.ProcessEnv;
  /** Copies by object address, in least-recently-used order (a Map keeps insertion order; a use moves it last). */
  readonly #copies = new Map<string, Copy>();
  /** Fetches and checks under way, by object address. */
  readonly #pending = new Map<string, Promise<Copy>>();
  /** The removal of folders left by processes that are gone, done before the first fetch. */
  #started: Promise<void> | undefined;

  /** `dir` is shared: each cache keeps its copies in a folder of its own there, named by its process's pid. */
  constructor(options: { dir: string; budgetBytes: number; revalidateMs: number; env?: NodeJS.ProcessEnv }) {
    this.#root = options.dir;
    this.#dir = join(options.dir, `${process.pid}-${randomBytes(4).toString('hex')}`);
    this.#budgetBytes = options.budgetBytes;
    this.#revalidateMs = options.revalidateMs;
    this.#env = options.env ?? process.env;
  }

  /**
   * The local copy of a remote object and a version string that changes with its bytes. Fetches it when there is
   * no current copy; throws `RemoteReadError` when the store cannot be read or the file is larger than the budget.
   */
  async get(location: StorageLocationModel, path: string): Promise<{ file: string; version: string }> {
    const object = openRemoteObject(location, path, this.#env);
    const known = this.#copies.get(object.where);
    if (known && performance.now() - known.checkedAt < this.#revalidateMs) {
      this.#touch(object.where, known);
      return { file: known.file, version: known.version };
    }
    await (this.#started ??= this.#clearStale());
    let pending = this.#pending.get(object.where);
    if (!pending) {
      pending = this.#refresh(object.where, object, known).finally(() => this.#pending.delete(object.where));
      this.#pending.set(object.where, pending);
    }
    const copy = await pending;
    return { file: copy.file, version: copy.version };
  }

  /** Removes this process's copies. */
  async close(): Promise<void> {
    this.#copies.clear();
    await rm(this.#dir, { recursive: true, force: true });
  }

  /** Removes the folders of processes that are gone (a replica killed before it could clean up). */
  async #clearStale(): Promise<void> {
    const names = await readdir(this.#root).catch(() => [] as string[]);
    await Promise.all(names.filter((name) => /^\d+-[0-9a-f]{8}$/.test(name) && !isProcessAlive(Number(name.split('-')[0])))
      .map((name) => rm(join(this.#root, name), { recursive: true, force: true })));
  }

  /** Bytes the copies take now. */
  get bytes(): number {
    let total = 0;
    for (const copy of this.#copies.values()) total += copy.size;
    return total;
  }

  async #refresh(where: string, object: ReturnType<typeof openRemoteObject>, known: Copy | undefined): Promise<Copy> {
    const current = await object.head();
    const version = versionOf(current);
    if (known && known.version === version && (await stat(known.file).then(() => true, () => false))) {
      known.checkedAt = performance.now();
      this.#touch(where, known);
      return known;
    }
    if (current.size > this.#budgetBytes) throw new RemoteReadError(`${where} is ${current.size} bytes, more than the cache of remote files holds (GEOSHELF_REMOTE_CACHE_MB)`);
    await mkdir(this.#dir, { recursive: true });
    const file = join(this.#dir, `${createHash('sha256').update(where).digest('hex').slice(0, 16)}-${version}.parquet`);
    const partial = `${file}.part-${process.pid}`;
    try {
      const fetched = await object.download(partial);
      // The bytes that arrived are the version the copy is named by: a change between the HEAD and the GET, or a
      // body cut short, shows here (a server that streams without Content-Length gives no size to compare).
      const arrived = (await stat(partial)).size;
      if (arrived !== current.size || versionOf({ ...fetched, size: fetched.size || arrived }) !== version) {
        throw new RemoteReadError(`${where} changed or broke off while it was being fetched (${arrived} of ${current.size} bytes); the next query fetches it again`);
      }
      await rename(partial, file);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    const copy: Copy = { file, version, size: current.size, checkedAt: performance.now() };
    if (known) await rm(known.file, { force: true });
    this.#copies.delete(where);
    this.#copies.set(where, copy);
    await this.#evict(where);
    return copy;
  }

  #touch(where: string, copy: Copy): void {
    this.#copies.delete(where);
    this.#copies.set(where, copy);
  }

  /** Removes the least recently used copies, never `keep`, until the copies fit the budget. */
  async #evict(keep: string): Promise<void> {
    for (const [where, copy] of this.#copies) {
      if (this.bytes <= this.#budgetBytes) return;
      if (where === keep) continue;
      this.#copies.delete(where);
      // A query still reading it keeps its open file: on Linux the bytes go when the last reader closes.
      await rm(copy.file, { force: true });
    }
  }
}

interface Copy {
  file: string;
  version: string;
  size: number;
  checkedAt: number;
}

/** A short hex string that changes when the object's ETag, size or last-modified does. */
function versionOf(version: RemoteVersion): string {
  return createHash('sha256').update(JSON.stringify([version.etag, version.size, version.lastModified])).digest('hex').slice(0, 12);
}
