import { hash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecordFile, RecordStats } from './load/read-records.ts';
import type { ParseCache, ParsedFile } from './parse/parse-records.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const CODE_FOLDERS = ['core', 'schemas', 'generator'];

/**
 * A hash of the code that shapes the output (core/, schemas/, generator/ and package.json). Caches made by other
 * code are ignored, so a change to a schema or a renderer can never serve stale results.
 */
export async function computeCodeFingerprint(): Promise<string> {
  const parts: string[] = [await readFile(join(ROOT, 'package.json'), 'utf8')];
  for (const folder of CODE_FOLDERS) {
    const names = (await readdir(join(ROOT, folder), { recursive: true })).filter((name) => name.endsWith('.ts')).sort();
    for (const name of names) parts.push(name, await readFile(join(ROOT, folder, name), 'utf8'));
  }
  return hash('sha256', parts.join('\0'), 'hex');
}

interface ParseCacheFile {
  fingerprint: string;
  files: [string, ParsedFile][];
}

/** Reads the record parse cache; empty when missing, unreadable or made by other code. */
export async function readParseCache(cacheDir: string, fingerprint: string): Promise<ParseCache> {
  try {
    const file = JSON.parse(await readFile(join(cacheDir, 'records.json'), 'utf8')) as ParseCacheFile;
    return file.fingerprint === fingerprint ? new Map(file.files) : new Map();
  } catch {
    return new Map();
  }
}

/** Writes the record parse cache atomically. */
export async function writeParseCache(cacheDir: string, fingerprint: string, cache: ParseCache): Promise<void> {
  await mkdir(cacheDir, { recursive: true });
  const temporary = join(cacheDir, `records.json.tmp-${process.pid}`);
  await writeFile(temporary, JSON.stringify({ fingerprint, files: [...cache] } satisfies ParseCacheFile));
  await rename(temporary, join(cacheDir, 'records.json'));
}

/** Reads the record files' stats of the last build; none when missing or unreadable. */
export async function readRecordStats(cacheDir: string): Promise<RecordStats | undefined> {
  try {
    const file = JSON.parse(await readFile(join(cacheDir, 'record-stats.json'), 'utf8')) as { takenAt: number; files: [string, number, number, string][] };
    return { takenAt: file.takenAt, files: new Map(file.files.map(([path, size, mtimeMs, sha256]) => [path, { size, mtimeMs, sha256 }])) };
  } catch {
    return undefined;
  }
}

/** Writes the stats of the record files a build read, atomically. */
export async function writeRecordStats(cacheDir: string, takenAt: number, files: readonly RecordFile[]): Promise<void> {
  await mkdir(cacheDir, { recursive: true });
  const temporary = join(cacheDir, `record-stats.json.tmp-${process.pid}`);
  await writeFile(temporary, JSON.stringify({ takenAt, files: files.map((file) => [file.source, file.size, file.mtimeMs, file.sha256]) }));
  await rename(temporary, join(cacheDir, 'record-stats.json'));
}
