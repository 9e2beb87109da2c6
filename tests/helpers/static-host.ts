import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';

/** A folder served under a URL prefix ('/' or '/data'). */
export interface StaticMount {
  prefix: string;
  dir: string;
}

/** Options of serveStatic: the folders to serve and, optionally, the port (a free one by default). */
export interface StaticHostOptions {
  mounts: StaticMount[];
  port?: number;
}

/** A running static host. */
export interface StaticHost {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  origin: string;
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.geojson': 'application/geo+json',
  '.wasm': 'application/wasm',
  '.parquet': 'application/vnd.apache.parquet',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.pbf': 'application/x-protobuf',
  '.pmtiles': 'application/vnd.pmtiles',
  '.zip': 'application/zip',
  '.woff2': 'font/woff2',
};

const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Content-Range, Accept-Ranges, Content-Length, ETag',
};

/**
 * Serves folders as object storage behind a CDN would, and nothing more: `index.html` for a directory
 * (redirecting `/dir` to `/dir/`), single `Range` requests (206 with Content-Range, suffix ranges
 * included), `If-None-Match`, and CORS open to any origin. No geoshelf code, so a test that passes here
 * passes on plain static hosting. (sirv 3.0.2 answers `bytes=-N` from the start and `bytes=0-0` with the
 * whole file; parquet readers send the first, so it is not used.)
 * @example
 * const host = await serveStatic({ mounts: [{ prefix: '/', dir: distDir }] });
 * await fetch(`${host.origin}/collections/`);
 * await host.close();
 */
export async function serveStatic(options: StaticHostOptions): Promise<StaticHost> {
  const mounts = options.mounts
    .map(({ prefix, dir }) => ({ prefix: prefix.replace(/\/+$/, ''), dir: resolve(dir) }))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  const server = createServer((req, res) => {
    answer(req, res, mounts).catch(() => {
      if (!res.headersSent) res.writeHead(500, CORS_HEADERS);
      res.end();
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', done);
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, mounts: StaticMount[]): Promise<void> {
  if (req.method === 'OPTIONS') {
    res.writeHead(204, {
      ...CORS_HEADERS,
      'Access-Control-Allow-Methods': 'GET, HEAD',
      'Access-Control-Allow-Headers': req.headers['access-control-request-headers'] ?? '*',
      'Access-Control-Max-Age': '600',
    });
    return void res.end();
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...CORS_HEADERS, Allow: 'GET, HEAD, OPTIONS' });
    return void res.end();
  }
  const url = new URL(req.url ?? '/', 'http://host');
  const found = await findFile(decodeURIComponent(url.pathname), mounts);
  if (found === 'redirect') {
    res.writeHead(301, { ...CORS_HEADERS, Location: `${url.pathname}/${url.search}` });
    return void res.end();
  }
  if (!found) {
    res.writeHead(404, { ...CORS_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
    return void res.end('Not found');
  }
  const { file, size, mtime } = found;
  const etag = `"${size.toString(16)}-${Math.floor(mtime.getTime()).toString(16)}"`;
  const headers: Record<string, string | number> = {
    ...CORS_HEADERS,
    'Content-Type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'no-cache',
    ETag: etag,
    'Last-Modified': mtime.toUTCString(),
  };
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers);
    return void res.end();
  }
  const range = parseRange(req.headers.range, size);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { ...headers, 'Content-Range': `bytes */${size}` });
    return void res.end();
  }
  const [start, end] = range ?? [0, size - 1];
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
  res.writeHead(range ? 206 : 200, { ...headers, 'Content-Length': end - start + 1 });
  if (req.method === 'HEAD' || size === 0) return void res.end();
  createReadStream(file, { start, end }).on('error', () => res.destroy()).pipe(res);
}

/** The file a path names under the mounts, 'redirect' for a directory named without its slash. */
async function findFile(pathname: string, mounts: StaticMount[]) {
  const mount = mounts.find(({ prefix }) => pathname === prefix || pathname.startsWith(`${prefix}/`));
  if (!mount) return undefined;
  const path = resolve(join(mount.dir, pathname.slice(mount.prefix.length)));
  if (path !== mount.dir && !path.startsWith(mount.dir + sep)) return undefined;
  const stats = await stat(path).catch(() => undefined);
  if (stats?.isFile()) return { file: path, size: stats.size, mtime: stats.mtime };
  if (!stats?.isDirectory()) return undefined;
  if (!pathname.endsWith('/')) return 'redirect' as const;
  const index = join(path, 'index.html');
  const indexStats = await stat(index).catch(() => undefined);
  return indexStats?.isFile() ? { file: index, size: indexStats.size, mtime: indexStats.mtime } : undefined;
}

/** One byte range `[start, end]` from a Range header; undefined means "send the whole file" (RFC 9110). */
function parseRange(header: string | undefined, size: number): [number, number] | 'unsatisfiable' | undefined {
  const match = header?.match(/^bytes=(\d*)-(\d*)$/);
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '') {
    const suffix = Number(last);
    return suffix === 0 || size === 0 ? 'unsatisfiable' : [Math.max(0, size - suffix), size - 1];
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined;
  return start >= size ? 'unsatisfiable' : [start, end];
}
