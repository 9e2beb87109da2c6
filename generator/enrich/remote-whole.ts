/**
 * Remote data files read whole, once per version: the objects of a source are downloaded into a scratch folder
 * under their names, hashed as `enrich-sources.ts` hashes local files, measured by the local inspectors
 * (`inspectors.ts`), and deleted. What was learnt is kept in the build's caches: the SHA-256 of each version
 * (ETag, size, last-modified) in `remote-files.json`, the facts by SHA-256 in the shared `data-facts.json`. The
 * build (`enrich-remote.ts`) and `geoshelf add` read through the same reader, so what one read the other does not.
 */
import { hash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { RemoteReadError, type RemoteObject, type RemoteVersion } from '../../runtime/remote-object.ts';
import { hashFile } from '../../runtime/source-files.ts';
import { DataCache } from './data-cache.ts';
import type { DataFacts } from './inspect-data-file.ts';
import { readParquetTail } from './inspect-remote.ts';
import { factsKey, INSPECTORS, MULTI_FILE } from './inspectors.ts';

/** Whole remote files read at once: each takes its size on disk until it is measured, and DuckDB's two threads. */
const DOWNLOADS_AT_ONCE = 2;

/** One object of a source, with the version its HEAD answered and its name in the source's download. */
export interface ReadPart {
  name: string;
  object: RemoteObject;
  version: RemoteVersion;
}

/** What the reader needs: the build's cache folder, its DuckDB, and its cache of facts with the keys it used. */
export interface WholeReaderOptions {
  cacheDir: string;
  duckdb: () => Promise<DuckDBInstance>;
  facts: { cache: DataCache<DataFacts>; used: Set<string> };
}

/** Reads remote files whole; `save` keeps what it learnt. */
export interface WholeReader {
  /**
   * The SHA-256 of one version of a source's objects, and the facts of `layer` when the format has an inspector;
   * the objects are downloaded only when this version or these facts are not known yet.
   * @throws RemoteReadError when an object cannot be read, changes while it is read, or is not of its format.
   */
  read: (parts: ReadPart[], formatType: string, layer: string | null) => Promise<{ sha256: string; facts: DataFacts | null }>;
  /**
   * Downloads the objects and runs `work` on the local copy of the file (a File Geodatabase's folder), with the
   * version's SHA-256, before the copy is deleted: for what the caches do not hold, such as a file's layers.
   */
  withCopy: <T>(parts: ReadPart[], formatType: string, work: (path: string, sha256: string) => Promise<T>) => Promise<T>;
  /** Objects downloaded so far, and their bytes. */
  downloaded: { objects: number; bytes: number };
  /** Writes the version cache: the versions used in this run, and with `keepOthers` the others it held too. */
  save: (keepOthers: boolean) => Promise<void>;
}

/** What a build remembers of one version of a remote object, so it never reads those bytes again. */
interface RemoteFileFacts {
  sha256: string;
}

/** Opens the reader over the build's caches in `options.cacheDir`. */
export async function openWholeReader(options: WholeReaderOptions): Promise<WholeReader> {
  const versions = await DataCache.open<RemoteFileFacts>(options.cacheDir, 'remote-files.json', 1);
  const usedVersions = new Set<string>();
  const scratchDir = join(options.cacheDir, 'remote-scratch');
  const downloads = createLimit(DOWNLOADS_AT_ONCE);
  // The inspectors share one DuckDB instance and name their views alike: one file is inspected at a time.
  const inspecting = createLimit(1);
  const downloaded = { objects: 0, bytes: 0 };

  /** Downloads the parts into a fresh scratch folder, each under its name, and answers the folder and the SHA-256. */
  const download = async (parts: ReadPart[], formatType: string, versionKey: string): Promise<{ folder: string; sha256: string }> => {
    await mkdir(scratchDir, { recursive: true });
    const folder = await mkdtemp(join(scratchDir, `${process.pid}-`));
    try {
      const hashes: [string, string][] = [];
      for (const { name, object, version } of parts) {
        // Each part keeps its name: GDAL and DuckDB tell formats by extension, and a shapefile finds its sidecars by stem.
        const copy = join(folder, name);
        await mkdir(dirname(copy), { recursive: true });
        const read = await object.download(copy);
        if (read.etag !== version.etag || read.size !== version.size) throw new RemoteReadError(`${object.where} changed while it was read; build again`);
        downloaded.objects++;
        downloaded.bytes += read.size;
        hashes.push([name, await hashFile(copy)]);
      }
      const sha256 = MULTI_FILE.has(formatType) ? hash('sha256', JSON.stringify(hashes), 'hex') : hashes[0]![1];
      versions.set(versionKey, { sha256 });
      return { folder, sha256 };
    } catch (error) {
      await rm(folder, { recursive: true, force: true });
      throw error;
    }
  };

  const mainOf = (folder: string, parts: ReadPart[], formatType: string) =>
    join(folder, formatType === 'file_geodatabase' ? parts[0]!.name.split('/')[0]! : parts[0]!.name);

  const withCopy: WholeReader['withCopy'] = (parts, formatType, work) => downloads(async () => {
    const versionKey = keyOfVersion(parts);
    usedVersions.add(versionKey);
    const { folder, sha256 } = await download(parts, formatType, versionKey);
    try {
      return await work(mainOf(folder, parts, formatType), sha256);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  const read: WholeReader['read'] = async (parts, formatType, layer) => {
    const versionKey = keyOfVersion(parts);
    usedVersions.add(versionKey);
    const inspect = INSPECTORS[formatType];
    const keyOf = (sha256: string) => factsKey(formatType, sha256, layer);
    const known = versions.get(versionKey);
    const knownFacts = known && inspect ? options.facts.cache.get(keyOf(known.sha256)) : undefined;
    if (known && (!inspect || knownFacts)) {
      if (inspect) options.facts.used.add(keyOf(known.sha256));
      return { sha256: known.sha256, facts: knownFacts ?? null };
    }
    // A file that is not Parquet is told by its last 8 bytes, before its whole is read.
    if (formatType === 'geoparquet') await readParquetTail(parts[0]!.object, parts[0]!.version);
    return downloads(async () => {
      const { folder, sha256 } = await download(parts, formatType, versionKey);
      try {
        if (!inspect) return { sha256, facts: null };
        let facts = options.facts.cache.get(keyOf(sha256));
        if (!facts) {
          try {
            facts = await inspecting(async () => inspect(await options.duckdb(), mainOf(folder, parts, formatType), { scratchDir, layer }));
          } catch (error) {
            throw new RemoteReadError(`it cannot be read as ${formatType}: ${(error as Error).message.split('\n')[0]!.replaceAll(`${folder}/`, '')}`);
          }
          options.facts.cache.set(keyOf(sha256), facts);
        }
        options.facts.used.add(keyOf(sha256));
        return { sha256, facts };
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    });
  };

  const save = (keepOthers: boolean) => versions.save(keepOthers ? new Set([...usedVersions, ...versions.keys()]) : usedVersions, new Set());
  return { read, withCopy, downloaded, save };
}

/** What identifies one version of a source's objects: their addresses and versions. */
function keyOfVersion(parts: ReadPart[]): string {
  return JSON.stringify(parts.map(({ object, version }) => [object.where, version.etag, version.size, version.lastModified]));
}

/** A limit of `count` tasks at once: the others wait their turn in order. */
export function createLimit(count: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= count) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}
