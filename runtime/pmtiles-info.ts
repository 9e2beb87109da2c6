/** Reading a PMTiles v3 archive's header and JSON metadata, checked, for the build to tell a broken archive from a good one. */
import { open, stat } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { COMPRESSION, HEADER_BYTES, PmTilesFormatError, readPmTilesHeader, type PmTilesHeader } from './pmtiles-header.ts';

/** Decompresses a section by the header's internal compression. */
function decompress(bytes: Buffer, compression: number): Buffer {
  if (compression === COMPRESSION.gzip) return gunzipSync(bytes);
  if (compression === COMPRESSION.none || compression === 0) return bytes;
  throw new PmTilesFormatError(`its sections are compressed with code ${compression}, which geoshelf does not read`);
}

/** Reads a local archive's header and JSON metadata, checking both. Throws `PmTilesFormatError`. */
export async function readPmTilesInfo(path: string): Promise<PmTilesInfo> {
  const { size } = await stat(path);
  const file = await open(path, 'r');
  try {
    return await readPmTilesInfoFrom(size, async (start, length) => {
      const bytes = Buffer.alloc(length);
      await file.read(bytes, 0, length, start);
      return bytes;
    });
  } finally {
    await file.close();
  }
}

/** An archive's header and JSON metadata. */
export interface PmTilesInfo {
  header: PmTilesHeader;
  metadata: Record<string, unknown>;
}

/**
 * Reads an archive's header and JSON metadata with two reads of `read(start, length)`, checking both: the same
 * for a local file and for an object in storage read in byte ranges. Throws `PmTilesFormatError`.
 */
export async function readPmTilesInfoFrom(size: number, read: (start: number, length: number) => Promise<Uint8Array>): Promise<PmTilesInfo> {
  const header = readPmTilesHeader(await read(0, Math.min(HEADER_BYTES, size)), size);
  const raw = header.jsonMetadataLength === 0 ? Buffer.alloc(0) : Buffer.from(await read(header.jsonMetadataOffset, header.jsonMetadataLength));
  let metadata: unknown;
  try {
    metadata = raw.length === 0 ? {} : JSON.parse(decompress(raw, header.internalCompression).toString('utf8'));
  } catch (error) {
    if (error instanceof PmTilesFormatError) throw error;
    throw new PmTilesFormatError('its metadata is not compressed JSON');
  }
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new PmTilesFormatError('its metadata is not a JSON object');
  return { header, metadata: metadata as Record<string, unknown> };
}
