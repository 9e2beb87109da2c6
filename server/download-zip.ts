import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { HTTPError } from 'h3';
import { FastResponse } from 'srvx';
import type { CatalogSnapshot } from './catalog.ts';
import { lookupFile } from '../core/render/detail.ts';
import { CORS_HEADERS } from './headers.ts';
import { asBody } from './responses.ts';

/** Path of the download-zip route, as h3 matches it. */
export const DOWNLOAD_ZIP_ROUTE = '/api/collections/:collection/datasets/:dataset/files/:file/sources/:source/download-zip';

const MAX_ZIP_BYTES = 0xffff_fffe;

/**
 * Answers `…/sources/{id}/download-zip`: the source's stored file in a ZIP archive (stored, not deflated:
 * Parquet and GeoPackage are compressed already). Only sources in the local data folder can be zipped here;
 * the archive is built in memory, so it is meant for files of modest size like the sample's.
 */
export function answerDownloadZip(snapshot: CatalogSnapshot, dataDir: string, params: Record<string, string>): Response {
  const found = lookupFile(snapshot.context.index, params.collection ?? '', params.dataset ?? '', params.file ?? '');
  if (!found.ok) throw new HTTPError({ status: 404, message: found.detail });
  const source = found.file.formats.flatMap((link) => link.sources).find((candidate) => String(candidate.id) === params.source);
  if (!source) throw new HTTPError({ status: 404, message: `File "${found.file.slug}" has no source ${params.source}; its metadata route lists them.` });
  if (source.location.type !== 'file' || !source.url?.startsWith(`${snapshot.context.index.settings.storageBaseUrl}/`)) {
    throw new HTTPError({ status: 404, message: 'This source is not stored in this server\'s data folder; download it from its url.' });
  }
  let data: Buffer;
  try {
    data = readFileSync(join(dataDir, source.location.path));
  } catch {
    throw new HTTPError({ status: 404, message: 'The stored file of this source is missing from the data folder.' });
  }
  if (data.length > MAX_ZIP_BYTES) throw new HTTPError({ status: 404, message: 'This file is too large to zip here; download it from its url.' });
  const name = basename(source.location.path);
  const zip = createStoredZip(name, data, source.updated_at);
  return new FastResponse(asBody(zip), {
    headers: {
      ...CORS_HEADERS,
      'content-type': 'application/zip',
      'content-disposition': `attachment; filename="${name.replace(/\.[^.]+$/, '')}.zip"`,
      'content-length': String(zip.length),
      'cache-control': 'public, max-age=300',
    },
  });
}

/** Builds a ZIP archive holding one stored (uncompressed) entry, dated `timestamp` so the bytes are stable. */
export function createStoredZip(name: string, data: Buffer, timestamp: string): Buffer {
  const fileName = Buffer.from(name, 'utf8');
  const checksum = crc32(data);
  const date = new Date(`${timestamp}Z`);
  const dosTime = (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | Math.floor(date.getUTCSeconds() / 2);
  const dosDate = ((date.getUTCFullYear() - 1980) << 9) | ((date.getUTCMonth() + 1) << 5) | date.getUTCDate();
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(0x0800, 6);
  local.writeUInt16LE(0, 8);
  local.writeUInt16LE(dosTime, 10);
  local.writeUInt16LE(dosDate, 12);
  local.writeUInt32LE(checksum, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(fileName.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  local.copy(central, 8, 6, 26);
  central.writeUInt16LE(fileName.length, 28);
  const centralOffset = local.length + fileName.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + fileName.length, 12);
  end.writeUInt32LE(centralOffset, 16);
  return Buffer.concat([local, fileName, data, central, fileName, end]);
}
