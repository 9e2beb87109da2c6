import { createReadStream, readdirSync, statSync, type Dirent } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { HTTPError } from 'h3';
import { FastResponse } from 'srvx';
import { formatContentRange, selectRange } from './byte-ranges.ts';
import { CORS_HEADERS } from './headers.ts';
import { matchesEtag } from './responses.ts';

const DATA_TYPES: Record<string, string> = {
  '.parquet': 'application/vnd.apache.parquet',
  '.geojson': 'application/geo+json',
  '.gpkg': 'application/geopackage+sqlite3',
  '.json': 'application/json',
  '.md': 'text/markdown; charset=utf-8',
};

/** A data file that may be served. */
interface DataFile {
  path: string;
  size: number;
  etag: string;
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
    const { size, mtimeMs } = statSync(path);
    files.set(relative(dataDir, path).split(sep).join('/'), { path, size, etag: `"${size.toString(36)}-${Math.floor(mtimeMs).toString(36)}"` });
  }
  return files;
}

/** Answers GET/HEAD /data/<path> from the listed files, with Range and ETag support. */
export function answerDataRequest(files: Map<string, DataFile>, request: Request, relativePath: string): Response {
  const file = files.get(relativePath);
  if (!file) throw new HTTPError({ status: 404, message: `There is no data file ${relativePath.slice(0, 200)}.` });
  const headers: Record<string, string> = {
    ...CORS_HEADERS,
    'access-control-expose-headers': 'ETag, Content-Length, Content-Range, Accept-Ranges',
    'content-type': DATA_TYPES[extname(file.path)] ?? 'application/octet-stream',
    'accept-ranges': 'bytes',
    etag: file.etag,
    'cache-control': 'public, max-age=300',
  };
  if (matchesEtag(request.headers.get('if-none-match'), file.etag.replaceAll('"', ''))) return new FastResponse(null, { status: 304, headers });
  const selection = selectRange(request, file.size, file.etag);
  if (selection.kind === 'unsatisfiable') {
    return new FastResponse(null, { status: 416, headers: { ...headers, 'content-range': formatContentRange(file.size) } });
  }
  const range = selection.kind === 'partial' ? selection.range : undefined;
  const { start, end } = range ?? { start: 0, end: file.size - 1 };
  headers['content-length'] = String(end - start + 1);
  if (range) headers['content-range'] = formatContentRange(file.size, range);
  const body = request.method === 'HEAD' || file.size === 0 ? null : (Readable.toWeb(createReadStream(file.path, { start, end })) as ReadableStream);
  return new FastResponse(body, { status: range ? 206 : 200, headers });
}
