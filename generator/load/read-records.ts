import { hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
 * Reads every record under `catalogDir` in a stable order: formats, storage locations, collections, datasets.
 * Files outside the known places (the data folder, READMEs, the ledger) are ignored.
 */
export async function readRecordFiles(catalogDir: string): Promise<RecordFile[]> {
  const entries = await readdir(catalogDir, { recursive: true, withFileTypes: true });
  const paths = entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(catalogDir, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .filter((path) => !path.startsWith('data/'))
    .flatMap((path) => {
      const kind = classifyRecordPath(path);
      return kind ? [{ path, kind }] : [];
    })
    .sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.path < b.path ? -1 : 1));
  // Synchronous reads: for thousands of small files they are several times quicker than as many promises.
  return paths.map(({ path, kind }) => {
    const text = readFileSync(join(catalogDir, path), 'utf8');
    let document: SourceDocument | undefined;
    return { source: path, kind, sha256: hash('sha256', text, 'hex'), document: () => (document ??= parseSourceDocument(path, text)) };
  });
}

const KIND_ORDER: Record<RecordKind, number> = { formats: 0, 'storage-locations': 1, collection: 2, dataset: 3 };
