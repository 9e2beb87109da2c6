import { hash } from 'node:crypto';
import { createReadStream, statSync, type ReadStream } from 'node:fs';
import { basename } from 'node:path';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import { HTTPError } from 'h3';
import { FastResponse } from 'srvx';
import { ZipFile } from 'yazl';
import type { CatalogSnapshot } from './catalog.ts';
import { lookupFile } from '../core/api/catalog/detail.ts';
import { REMOTE_BACKENDS } from '../core/constants.ts';
import type { SourceModel, StorageLocationModel } from '../core/model.ts';
import type { RemoteCopies } from '../query/sources.ts';
import { formatContentRange, selectRange, type ByteRange } from './byte-ranges.ts';
import { QUERY_ERRORS } from '../query/errors.ts';
import { CORS_HEADERS } from './headers.ts';
import { matchesEtag } from './responses.ts';
import { cutWhenIdle } from './send-idle.ts';
import { listSourceFiles, type ArchiveEntry } from '../runtime/source-files.ts';

/**
 * The path values of the download-zip route (core/api/catalog/routes.ts `SERVICE_ROUTES.getSourceArchive`): parsed,
 * or as h3 gave them when one does not parse, since a slug that cannot exist names nothing, which the catalog says.
 */
export type SourceArchivePath = Readonly<Partial<Record<'collectionSlug' | 'datasetSlug' | 'fileSlug' | 'sourceId', string | number>>>;

/** What the route reads from the settings. */
export interface DownloadZipOptions {
  dataDir: string;
  /** The query service's copies of files in object storage; without it, a remote source answers 404. */
  remoteCopy?: RemoteCopies['get'];
  cacheMaxAge: number;
  /** A client that takes no bytes for this long is cut (GEOSHELF_SEND_IDLE_TIMEOUT_MS). */
  sendIdleTimeoutMs: number;
}

// yazl decides the bytes of the archive's frame, so its version is part of the ETag.
const YAZL_VERSION = (createRequire(import.meta.url)('yazl/package.json') as { version: string }).version;

/**
 * Answers GET and HEAD on `…/sources/{id}/download-zip`: every file of a source in the local data folder, stored
 * (not deflated: Parquet and GeoPackage are compressed already) in a ZIP that yazl streams. The bytes depend only on
 * the files and the source, so the archive has a strong ETag, a known length and byte ranges, which is what
 * GDAL's `/vsizip//vsicurl/` needs to open it in place.
 */
export async function answerDownloadZip(request: Request, snapshot: CatalogSnapshot, options: DownloadZipOptions, params: SourceArchivePath): Promise<Response> {
  const { source, fileName, formatType } = findSource(snapshot, params);
  const index = snapshot.context.index;
  const unreadable = () => new HTTPError({ status: 404, message: 'This source is not stored where this server can read it; download it from its url.' });
  if (source.location.type !== 'file') throw unreadable();
  const location = source.storage_location_id === null ? undefined : index.storageById.get(source.storage_location_id);
  const local = source.url?.startsWith(`${index.settings.storageBaseUrl}/`);
  // A source in object storage is zipped from the query service's copies of its files.
  const remote = !local && location && REMOTE_BACKENDS.has(location.backend_type) ? options.remoteCopy : undefined;
  if (!local && !remote) throw unreadable();
  const entries = remote ? await copyEntries(remote, location!, source.location.path, formatType) : listSourceFiles(options.dataDir, source.location.path);
  // The catalog lists the file, so its absence is the server's fault, to be mended by its operator: not a 404.
  if (entries.length === 0) {
    throw new HTTPError({ status: 503, message: 'The stored file of this source is missing from the data folder; the service\'s operator must restore it.', headers: { 'retry-after': String(QUERY_ERRORS.source_unavailable.retryAfter) } });
  }
  const mtime = parseTimestamp(source.updated_at);
  const etag = computeEtag(source, mtime, entries);
  const archive = createZipArchive(entries, mtime, etag);
  const headers: Record<string, string> = {
    ...CORS_HEADERS,
    'access-control-expose-headers': 'Content-Range, Accept-Ranges, Content-Length, ETag, Content-Disposition',
    'content-type': 'application/zip',
    'content-disposition': formatContentDisposition(`${fileName}.zip`),
    'accept-ranges': 'bytes',
    etag,
    'cache-control': `public, max-age=${options.cacheMaxAge}`,
  };
  if (matchesEtag(request.headers.get('if-none-match'), etag.replaceAll('"', ''))) return new FastResponse(null, { status: 304, headers });
  const selection = selectRange(request, archive.size, etag);
  if (selection.kind === 'unsatisfiable') {
    return new FastResponse(null, { status: 416, headers: { ...headers, 'content-range': formatContentRange(archive.size) } });
  }
  if (selection.kind === 'whole') {
    headers['content-length'] = String(archive.size);
    return new FastResponse(request.method === 'HEAD' ? null : cutWhenIdle(Readable.toWeb(archive.stream()) as ReadableStream, options.sendIdleTimeoutMs), { headers });
  }
  headers['content-length'] = String(selection.range.end - selection.range.start + 1);
  headers['content-range'] = formatContentRange(archive.size, selection.range);
  return new FastResponse(cutWhenIdle(Readable.toWeb(await archive.streamRange(selection.range)) as ReadableStream, options.sendIdleTimeoutMs), { status: 206, headers });
}

/** Formats whose source is several files (a shapefile's sidecars, a File Geodatabase's folder). */
const MULTI_FILE_FORMATS = new Set(['shapefile', 'file_geodatabase']);

/**
 * The entries of a source in object storage: the query service's local copy of each of its objects, under the
 * names `listSourceFiles` gives local files (a shapefile's parts are listed or probed in the store,
 * runtime/remote-object.ts `listRemoteParts`). Their times are left out, so the archive's bytes and ETag depend on
 * the objects' versions, not on when a replica fetched them: every replica answers a range of the same archive.
 */
async function copyEntries(remoteCopy: RemoteCopies['get'], location: StorageLocationModel, path: string, formatType: string): Promise<ArchiveEntry[]> {
  const unavailable = () => new HTTPError({ status: 503, message: 'The stored file of this source is in object storage, which cannot be read right now; retry later.', headers: { 'retry-after': String(QUERY_ERRORS.source_unavailable.retryAfter) } });
  let parts = [{ name: basename(path), path }];
  if (MULTI_FILE_FORMATS.has(formatType)) {
    // Loaded on the first download of a remote shapefile: the S3 SDK is a large module.
    const { listRemoteParts } = await import('../runtime/remote-object.ts');
    parts = await listRemoteParts(location, path, formatType).catch(() => {
      throw unavailable();
    });
  }
  return Promise.all(parts.map(async (part) => {
    const copy = await remoteCopy(location, part.path).catch(() => {
      throw unavailable();
    });
    return { path: copy.file, name: part.name, size: statSync(copy.file).size, mtimeMs: 0, ctimeMs: 0, version: copy.version };
  }));
}

function findSource(snapshot: CatalogSnapshot, params: SourceArchivePath): { source: SourceModel; fileName: string; formatType: string } {
  const index = snapshot.context.index;
  const found = lookupFile(index, String(params.collectionSlug ?? ''), String(params.datasetSlug ?? ''), String(params.fileSlug ?? ''));
  const sourceId = String(params.sourceId ?? '');
  if (!found.ok) throw new HTTPError({ status: 404, message: found.detail });
  for (const link of found.file.formats) {
    const source = link.sources.find((candidate) => String(candidate.id) === sourceId);
    const format = index.formatsById.get(link.format_id)?.slug ?? String(link.format_id);
    // The dataset, file, format and version name one source, so two downloads never share a file name.
    if (source) return { source, fileName: `${found.dataset.slug}-${found.file.slug}-${format}-${source.version}`, formatType: index.formatsById.get(link.format_id)?.format_type ?? '' };
  }
  throw new HTTPError({ status: 404, message: `File "${found.file.slug}" has no source ${sourceId}; its metadata route lists them.` });
}

/** Records in the sample are UTC without a zone suffix; a timestamp that names its zone is taken as written. */
function parseTimestamp(timestamp: string): Date {
  const date = new Date(/(?:z|[+-]\d\d:?\d\d)$/i.test(timestamp) ? timestamp : `${timestamp}Z`);
  return Number.isNaN(date.getTime()) ? new Date(Date.UTC(1980, 0, 1)) : date;
}

function computeEtag(source: SourceModel, mtime: Date, entries: ArchiveEntry[]): string {
  // yazl writes the DOS date of each entry in the server's time zone, so the offset belongs to the bytes too.
  const inputs = [YAZL_VERSION, source.id, source.version, mtime.getTime(), mtime.getTimezoneOffset(), entries.map((entry) => [entry.name, entry.size, Math.trunc(entry.mtimeMs), Math.trunc(entry.ctimeMs), entry.version ?? ''])];
  return `"${hash('sha256', JSON.stringify(inputs), 'hex')}"`;
}

/** An ASCII slug for every client, and the name as written (RFC 6266 `filename*`) for those that read it. */
function formatContentDisposition(name: string): string {
  const ascii = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/-{2,}/g, '-').replace(/^[-.]+/, '');
  const encoded = encodeURIComponent(name.replace(/[\u0000-\u001f"\\/]+/g, '-')).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii || 'download.zip'}"; filename*=UTF-8''${encoded}`;
}

/** A stored ZIP of files whose layout is known before a byte is read. */
export interface ZipArchive {
  /** Length of the archive in bytes. */
  size: number;
  /** The whole archive, streamed by yazl. */
  stream: () => Readable;
  /** The bytes of one range, reading from the files only the stretches the range covers. */
  streamRange: (range: ByteRange) => Promise<Readable>;
}

/**
 * A ZIP of `entries`, every one stored and dated `mtime`, so equal inputs give equal bytes. Ranges are computed,
 * not cut from a streamed archive: the files' bytes sit at offsets the plan knows, and only the frame around them
 * (headers, CRCs, central directory) comes from yazl, once per `key` (the archive's ETag).
 * @example createZipArchive(listSourceFiles(dataDir, 'a/b.shp'), new Date(0), etag).streamRange({ start: 0, end: 99 })
 */
export function createZipArchive(entries: ArchiveEntry[], mtime: Date, key: string): ZipArchive {
  const plan = planArchive(entries);
  return {
    size: plan.size,
    stream: () => createZipStream(entries, mtime),
    streamRange: async (range) => {
      const needsFrame = plan.parts.some((part) => !part.entry && overlaps(part, range));
      const frame = needsFrame ? await loadFrame(key, entries, mtime, plan) : [];
      return Readable.from(readArchiveRange(plan, frame, range));
    },
  };
}

/** The archive as yazl streams it. */
function createZipStream(entries: ArchiveEntry[], mtime: Date): Readable {
  const zip = new ZipFile();
  const output = zip.outputStream as Readable;
  const open = new Set<ReadStream>();
  for (const entry of entries) {
    zip.addReadStreamLazy(entry.name, { size: entry.size, mtime, mode: 0o100644, compress: false }, (callback) => {
      const stream = createReadStream(entry.path);
      open.add(stream);
      stream.once('close', () => open.delete(stream));
      // yazl leaves errors of a lazy stream unhandled, which would end the process.
      stream.on('error', (error) => zip.emit('error', error));
      callback(null, stream);
    });
  }
  zip.on('error', (error: Error) => output.destroy(error));
  // A client that hangs up destroys the output; the file yazl was reading must not stay open.
  output.once('close', () => open.forEach((stream) => stream.destroy()));
  zip.end();
  return output;
}

/** A stretch of the archive: a file's stored bytes, or (without `entry`) bytes yazl writes around them. */
interface ArchivePart {
  start: number;
  length: number;
  entry?: ArchiveEntry;
}

/** Where every part of the archive lies, and its total size. */
interface ArchivePlan {
  size: number;
  parts: ArchivePart[];
}

/**
 * Lays the archive out the way yazl writes stored entries of known size: per entry a local header (30 bytes and
 * the name), the data and a data descriptor (16 bytes, 24 in ZIP64), then per entry a central record (46 bytes,
 * the name, the 9-byte timestamp field, 28 more in ZIP64) and the end records. yazl's own
 * `calculatedTotalSize` is not used: it adds ZIP64 end records whenever the central directory passes 64 KiB,
 * which its writer does not.
 */
function planArchive(entries: ArchiveEntry[]): ArchivePlan {
  const parts: ArchivePart[] = [];
  let size = 0;
  const add = (length: number, entry?: ArchiveEntry) => {
    const last = parts.at(-1);
    if (!entry && last && !last.entry) last.length += length;
    else if (length > 0) parts.push({ start: size, length, ...(entry ? { entry } : {}) });
    size += length;
  };
  let central = 0;
  for (const entry of entries) {
    const nameLength = Buffer.byteLength(entry.name);
    const zip64 = entry.size > 0xfffffffe || size > 0xfffffffe;
    add(30 + nameLength);
    add(entry.size, entry);
    add(zip64 ? 24 : 16);
    central += 46 + nameLength + 9 + (zip64 ? 28 : 0);
  }
  const zip64End = entries.length >= 0xffff || central >= 0xffffffff || size >= 0xffffffff;
  add(central + 22 + (zip64End ? 56 + 20 : 0));
  return { size, parts };
}

/** The bytes yazl writes around the files, kept per ETag: a few hundred bytes per archive. */
const FRAMES = new Map<string, Promise<Buffer[]>>();
const MAX_FRAMES = 256;

/**
 * The frame of an archive (its non-file parts, indexed like `plan.parts`). Data descriptors and the central
 * directory hold each file's CRC-32, so the first range request that touches them streams the archive once through
 * yazl, keeping only those bytes; later ones read just the bytes they ask for.
 */
function loadFrame(etag: string, entries: ArchiveEntry[], mtime: Date, plan: ArchivePlan): Promise<Buffer[]> {
  let frame = FRAMES.get(etag);
  if (!frame) {
    frame = readFrame(entries, mtime, plan);
    FRAMES.set(etag, frame);
    frame.catch(() => FRAMES.delete(etag));
    if (FRAMES.size > MAX_FRAMES) FRAMES.delete(FRAMES.keys().next().value!);
  }
  return frame;
}

async function readFrame(entries: ArchiveEntry[], mtime: Date, plan: ArchivePlan): Promise<Buffer[]> {
  const frame = plan.parts.map((part) => (part.entry ? Buffer.alloc(0) : Buffer.alloc(part.length)));
  let position = 0;
  let index = 0;
  for await (const chunk of createZipStream(entries, mtime) as AsyncIterable<Buffer>) {
    const end = position + chunk.length;
    for (; index < plan.parts.length; index++) {
      const part = plan.parts[index]!;
      const from = Math.max(part.start, position);
      const to = Math.min(part.start + part.length, end);
      if (!part.entry && from < to) chunk.copy(frame[index]!, from - part.start, from - position, to - position);
      if (part.start + part.length > end) break;
    }
    position = end;
  }
  const tail = frame.at(-1)!;
  if (position !== plan.size || tail.readUInt32LE(tail.length - 22) !== 0x06054b50) {
    throw new Error(`yazl wrote ${position} bytes where ${plan.size} were planned; the archive layout has changed.`);
  }
  return frame;
}

function overlaps(part: ArchivePart, range: ByteRange): boolean {
  return part.start <= range.end && part.start + part.length > range.start;
}

/** The bytes of `range`: slices of the frame, and the files read from the offsets the range needs. */
async function* readArchiveRange(plan: ArchivePlan, frame: Buffer[], range: ByteRange): AsyncGenerator<Buffer> {
  for (const [index, part] of plan.parts.entries()) {
    if (!overlaps(part, range)) continue;
    const from = Math.max(range.start, part.start) - part.start;
    const to = Math.min(range.end + 1, part.start + part.length) - part.start;
    if (part.entry) yield* createReadStream(part.entry.path, { start: from, end: to - 1 }) as AsyncIterable<Buffer>;
    else yield frame[index]!.subarray(from, to);
  }
}
