/** The 127-byte header of a PMTiles v3 archive: its layout, written by the writer and read back and checked. */
import { MAX_ZOOM } from './pmtiles-tile-id.ts';

/** The 127-byte header of a v3 archive. */
export interface PmTilesHeader {
  specVersion: number;
  rootDirectoryOffset: number;
  rootDirectoryLength: number;
  jsonMetadataOffset: number;
  jsonMetadataLength: number;
  leafDirectoryOffset: number;
  leafDirectoryLength: number;
  tileDataOffset: number;
  tileDataLength: number;
  addressedTilesCount: number;
  tileEntriesCount: number;
  tileContentsCount: number;
  clustered: boolean;
  internalCompression: number;
  tileCompression: number;
  tileType: number;
  minZoom: number;
  maxZoom: number;
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
  centerZoom: number;
  centerLon: number;
  centerLat: number;
}

/** A PMTiles file that cannot be read; `reason` says what is wrong in a data steward's words. */
export class PmTilesFormatError extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(`Not a readable PMTiles v3 archive: ${reason}`);
    this.name = 'PmTilesFormatError';
    this.reason = reason;
  }
}

/** Bytes of a v3 header; the root directory may start right after it. */
export const HEADER_BYTES = 127;
const MAGIC = 'PMTiles';
/** Compression codes of the spec that geoshelf writes or reads. */
export const COMPRESSION = { none: 1, gzip: 2 } as const;
const KNOWN_COMPRESSION = [0, 1, 2, 3, 4];
/** The spec's tile type code of vector (MVT) tiles. */
export const TILE_TYPE_MVT = 1;
const KNOWN_TILE_TYPES = [0, 1, 2, 3, 4, 5, 6];

/** The 127 bytes of a header, as the spec lays them out. */
export function writeHeader(header: PmTilesHeader): Buffer {
  const buffer = Buffer.alloc(HEADER_BYTES);
  buffer.write(MAGIC, 0, 'ascii');
  buffer.writeUInt8(header.specVersion, 7);
  const sizes = [
    header.rootDirectoryOffset, header.rootDirectoryLength, header.jsonMetadataOffset, header.jsonMetadataLength,
    header.leafDirectoryOffset, header.leafDirectoryLength, header.tileDataOffset, header.tileDataLength,
    header.addressedTilesCount, header.tileEntriesCount, header.tileContentsCount,
  ];
  sizes.forEach((value, index) => buffer.writeBigUInt64LE(BigInt(value), 8 + index * 8));
  buffer.writeUInt8(header.clustered ? 1 : 0, 96);
  buffer.writeUInt8(header.internalCompression, 97);
  buffer.writeUInt8(header.tileCompression, 98);
  buffer.writeUInt8(header.tileType, 99);
  buffer.writeUInt8(header.minZoom, 100);
  buffer.writeUInt8(header.maxZoom, 101);
  [header.minLon, header.minLat, header.maxLon, header.maxLat].forEach((value, index) => buffer.writeInt32LE(Math.round(value * 1e7), 102 + index * 4));
  buffer.writeUInt8(header.centerZoom, 118);
  buffer.writeInt32LE(Math.round(header.centerLon * 1e7), 119);
  buffer.writeInt32LE(Math.round(header.centerLat * 1e7), 123);
  return buffer;
}

/**
 * Reads and checks a header: the magic and version, every section inside the file and past the header, zooms
 * in order, known compression and tile type codes, and bounds on the globe. Throws `PmTilesFormatError`.
 */
export function readPmTilesHeader(bytes: Uint8Array, fileSize: number): PmTilesHeader {
  if (fileSize < HEADER_BYTES || bytes.length < HEADER_BYTES) throw new PmTilesFormatError(`the file has ${fileSize} bytes, fewer than the ${HEADER_BYTES} of a header`);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  if (view.toString('ascii', 0, 7) !== MAGIC) throw new PmTilesFormatError('it does not start with "PMTiles"');
  const specVersion = view.readUInt8(7);
  if (specVersion !== 3) throw new PmTilesFormatError(`it is of spec version ${specVersion}; geoshelf reads version 3`);
  const u64 = (offset: number) => Number(view.readBigUInt64LE(offset));
  const e7 = (offset: number) => view.readInt32LE(offset) / 1e7;
  const header: PmTilesHeader = {
    specVersion,
    rootDirectoryOffset: u64(8), rootDirectoryLength: u64(16),
    jsonMetadataOffset: u64(24), jsonMetadataLength: u64(32),
    leafDirectoryOffset: u64(40), leafDirectoryLength: u64(48),
    tileDataOffset: u64(56), tileDataLength: u64(64),
    addressedTilesCount: u64(72), tileEntriesCount: u64(80), tileContentsCount: u64(88),
    clustered: view.readUInt8(96) === 1,
    internalCompression: view.readUInt8(97), tileCompression: view.readUInt8(98), tileType: view.readUInt8(99),
    minZoom: view.readUInt8(100), maxZoom: view.readUInt8(101),
    minLon: e7(102), minLat: e7(106), maxLon: e7(110), maxLat: e7(114),
    centerZoom: view.readUInt8(118), centerLon: e7(119), centerLat: e7(123),
  };
  const sections: [string, number, number][] = [
    ['root directory', header.rootDirectoryOffset, header.rootDirectoryLength],
    ['metadata', header.jsonMetadataOffset, header.jsonMetadataLength],
    ['leaf directories', header.leafDirectoryOffset, header.leafDirectoryLength],
    ['tile data', header.tileDataOffset, header.tileDataLength],
  ];
  for (const [name, offset, length] of sections) {
    if (length > 0 && offset < HEADER_BYTES) throw new PmTilesFormatError(`its ${name} starts inside the header (byte ${offset})`);
    if (offset + length > fileSize) throw new PmTilesFormatError(`its ${name} ends at byte ${offset + length}, past the end of the ${fileSize}-byte file`);
  }
  if (header.rootDirectoryLength === 0) throw new PmTilesFormatError('it has no root directory');
  if (header.minZoom > header.maxZoom || header.maxZoom > MAX_ZOOM) throw new PmTilesFormatError(`its zooms run from ${header.minZoom} to ${header.maxZoom}`);
  if (!KNOWN_COMPRESSION.includes(header.internalCompression) || !KNOWN_COMPRESSION.includes(header.tileCompression)) {
    throw new PmTilesFormatError(`its compression codes (${header.internalCompression}, ${header.tileCompression}) are not in the spec`);
  }
  if (!KNOWN_TILE_TYPES.includes(header.tileType)) throw new PmTilesFormatError(`its tile type code ${header.tileType} is not in the spec`);
  if (header.minLon < -180 || header.maxLon > 180 || header.minLat < -90 || header.maxLat > 90 || header.minLat > header.maxLat) {
    throw new PmTilesFormatError(`its bounds (${header.minLon}, ${header.minLat}, ${header.maxLon}, ${header.maxLat}) are not on the globe`);
  }
  return header;
}
