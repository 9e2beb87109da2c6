import { hash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parseSourceDocument, type SourceDocument } from './parse-document.ts';

/** Which schema a record file is parsed with, decided by where it sits in the catalog folder. */
export type RecordKind = 'collection' | 'dataset' | 'formats' | 'storage-locations';

/** A record file as read from disk; its YAML is parsed only when asked for, so cached files cost no parse. */
export interface RecordFile {
  /** Path relative to the catalog folder. */
  source: string;
  kind: RecordKind;
  /** sha256 of the text, the key of the parse cache. */
  sha256: string;
  /** Size and mtime when read, for the next build's `RecordStats`. */
  size: number;
  mtimeMs: number;
  /** Whether its text was read and hashed by this build, rather than known from the last one's stats. */
  read: boolean;
  /** The parsed document with line positions, parsed on first use. */
  document: () => SourceDocument;
}

const RECORD_EXTENSION = /\.(ya?ml|json)$/;

/** Tells the kind of a record file from its path relative to the catalog folder, or undefined if it is not a record. */
export function classifyRecordPath(path: string): RecordKind | undefined {
  const parts = path.split('/');
  if (!RECORD_EXTENSION.test(path)) return undefined;
  if (parts.length === 1 && /^formats\.(ya?ml|json)$/.test(path)) return 'formats';
  if (parts.length === 1 && /^storage-locations\.(ya?ml|json)$/.test(path)) return 'storage-locations';
  if (parts[0] === 'collections' && parts.length === 2) return 'collection';
  if (parts[0] === 'datasets' && parts.length >= 2) return 'dataset';
  return undefined;
}

/**
 * What a build learnt of each record file: its size, mtime and text hash, and when it looked. The next build takes
 * the hash of a file whose size and mtime are the same without reading it, so a one-edit rebuild reads one file.
 */
export interface RecordStats {
  /** `Date.now()` before the files were stat'ed. */
  takenAt: number;
  files: Map<string, { size: number; mtimeMs: number; sha256: string }>;
}

/** Files of the catalog folder by path relative to it (with `/`), with their size and mtime, as a build listed them. */
export type ListedFiles = Map<string, { size: number; mtimeMs: number }>;

/**
 * A file modified within this long of the stats being taken may be modified again without its mtime changing on a
 * coarse file system: its memo is not trusted, and it is read (git's "racily clean" entries).
 */
const RACY_MS = 2000;

/**
 * Reads every record under `catalogDir` in a stable order: formats, storage locations, collections, datasets.
 * Files outside the known places (the data folder, READMEs, the ledger) are ignored. A file that `known` holds
 * with its size and mtime is not read: its hash comes from there, and its text is read only if it must be parsed.
 * `listed` is the folder as the caller already listed and stat'ed it (the build, digesting its inputs).
 */
export async function readRecordFiles(catalogDir: string, known?: RecordStats, listed?: ListedFiles): Promise<RecordFile[]> {
  const all = listed ? [...listed.keys()] : (await readdir(catalogDir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => relative(catalogDir, join(entry.parentPath, entry.name)).split(sep).join('/'));
  const paths = all
    .filter((path) => !path.startsWith('data/'))
    .flatMap((path) => {
      const kind = classifyRecordPath(path);
      return kind ? [{ path, kind }] : [];
    })
    .sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.path < b.path ? -1 : 1));
  // Synchronous reads: for thousands of small files they are several times quicker than as many promises.
  return paths.map(({ path, kind }) => {
    const full = join(catalogDir, path);
    const { size, mtimeMs } = listed?.get(path) ?? statSync(full);
    const memo = known?.files.get(path);
    let document: SourceDocument | undefined;
    if (memo && memo.size === size && memo.mtimeMs === mtimeMs && mtimeMs < known!.takenAt - RACY_MS) {
      // Read only when it must be parsed (the parse cache lacks it), and refused if it is no longer the text hashed.
      const readLater = () => {
        const text = readFileSync(full, 'utf8');
        if (hash('sha256', text, 'hex') !== memo.sha256) throw new Error(`${path} changed while the build was reading the catalog; run the build again`);
        return text;
      };
      return { source: path, kind, sha256: memo.sha256, size, mtimeMs, read: false, document: () => (document ??= parseSourceDocument(path, readLater())) };
    }
    const text = readFileSync(full, 'utf8');
    return { source: path, kind, sha256: hash('sha256', text, 'hex'), size, mtimeMs, read: true, document: () => (document ??= parseSourceDocument(path, text)) };
  });
}

const KIND_ORDER: Record<RecordKind, number> = { formats: 0, 'storage-locations': 1, collection: 2, dataset: 3 };
