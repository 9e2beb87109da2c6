import { closeSync, createReadStream, fstatSync, openSync, readdirSync, type Dirent, type Stats } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { HTTPError } from 'h3';
import { FastResponse } from 'srvx';
import { formatContentRange, selectRange } from './byte-ranges.ts';
import { CORS_HEADERS } from './headers.ts';
import { matchesEtag } from './responses.ts';
import { cutWhenIdle } from './send-idle.ts';
import { dataFileType } from '../runtime/source-files.ts';

/** A data file that may be served: one found in the data folder when the listing was made. */
interface DataFile {
  path: string;
}

/**
 * Serves the data folder under /data, for `npm start` (in production, object storage serves these files).
 * Only files found when the server started are served, so a request path never reaches the file system.
 * Supports single byte ranges, which DuckDB, GDAL and browsers use to read Parquet remotely.
 */
export function listDataFiles(dataDir: string): Map<string, DataFile> {
  const files = new Map<string, DataFile>();
  let entries: Dirent[] = [];
  try {
    entries = readdirSync(dataDir, { recursive: true, withFileTypes: true });
  } catch {
    return files;
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dataDir, path).split(sep).join('/'), { path });
  }
  return files;
}

/**
 * The ETag of a file's current bytes, from its size, mtime and ctime. ctime changes with every write and cannot be
 * set back (utimes sets it too), so a file replaced with other bytes of the same size and a restored mtime still
 * gets a new ETag, and no cache joins ranges of two different files.
 */
function etagOf(info: Stats): string {
  return `"${[info.size, Math.floor(info.mtimeMs), Math.floor(info.ctimeMs)].map((value) => value.toString(36)).join('-')}"`;
}

/**
 * Opens a listed file. The file is opened before anything is answered and read through that descriptor, so a
 * file deleted meanwhile answers a clean 404 instead of a 200 whose body breaks, and size, ETag and bytes all
 * come from the one file that was opened.
 */
function openDataFile(files: Map<string, DataFile>, relativePath: string): { fd: number; info: Stats; path: string } {
  const file = files.get(relativePath);
  const missing = () => new HTTPError({ status: 404, message: `There is no data file ${relativePath.slice(0, 200)}.` });
  if (!file) throw missing();
  let fd: number;
  try {
    fd = openSync(file.path, 'r');
  } catch {
    throw missing();
  }
  const info = fstatSync(fd);
  if (!info.isFile()) {
    closeSync(fd);
    throw missing();
  }
  return { fd, info, path: file.path };
}

/**
 * Answers GET/HEAD /data/<path> from the listed files, with Range and ETag support. A client that takes no bytes
 * for `idleMs` is cut, which closes the file.
 */
export function answerDataRequest(files: Map<string, DataFile>, request: Request, relativePath: string, idleMs: number): Response {
  const { fd, info, path } = openDataFile(files, relativePath);
  const file = { path, size: info.size, etag: etagOf(info) };
  const headers: Record<string, string> = {
    ...CORS_HEADERS,
    'access-control-expose-headers': 'ETag, Content-Length, Content-Range, Accept-Ranges',
    'content-type': dataFileType(file.path),
    'accept-ranges': 'bytes',
    etag: file.etag,
    'cache-control': 'public, max-age=300',
  };
  const respond = (body: ReadableStream | null, init: { status: number; headers: Record<string, string> }) => {
    if (body === null) closeSync(fd);
    return new FastResponse(body, init);
  };
  if (matchesEtag(request.headers.get('if-none-match'), file.etag.replaceAll('"', ''))) return respond(null, { status: 304, headers });
  const selection = selectRange(request, file.size, file.etag);
  if (selection.kind === 'unsatisfiable') {
    return respond(null, { status: 416, headers: { ...headers, 'content-range': formatContentRange(file.size) } });
  }
  const range = selection.kind === 'partial' ? selection.range : undefined;
  const { start, end } = range ?? { start: 0, end: file.size - 1 };
  headers['content-length'] = String(end - start + 1);
  if (range) headers['content-range'] = formatContentRange(file.size, range);
  const body = request.method === 'HEAD' || file.size === 0 ? null : cutWhenIdle(Readable.toWeb(createReadStream('', { fd, start, end })) as ReadableStream, idleMs);
  return respond(body, { status: range ? 206 : 200, headers });
}
