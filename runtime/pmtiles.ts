/**
 * PMTiles v3 archives (https://github.com/protomaps/PMTiles/blob/main/spec/v3/spec.md): one file holding a
 * pyramid of tiles, read over HTTP with byte ranges, so a map of a whole file needs only static hosting.
 *
 * Written here: vector (MVT) tiles, gzip-compressed, tile data in tile-id order (clustered) with identical tiles
 * stored once, directories gzip-compressed, leaf directories when the root would not fit the first 16 KiB.
 * Read here: the header and the JSON metadata, checked, for the build to tell a broken archive from a good
 * one. Tiles are read by clients (the `pmtiles` package in the browser and in tests).
 */
import { createHash } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';

/** A tile to store: its address and its uncompressed MVT bytes. */
export interface PmTilesTile {
  z: number;
  x: number;
  y: number;
  bytes: Uint8Array;
}

/** What an archive says about itself besides its tiles. */
export interface PmTilesWriteOptions {
  minZoom: number;
  maxZoom: number;
  /** WGS84 [west, south, east, north]. */
  bounds: [number, number, number, number];
  center: [lon: number, lat: number, zoom: number];
  /**
   * JSON metadata (`vector_layers` and the like), stored gzip-compressed. It is read once every tile has been
   * taken, so a tiler may fill it in as it makes them (what it dropped, say).
   */
  metadata: Record<string, unknown>;
}

/** What was written. `largestTileBytes` is of a compressed tile, as stored. */
export interface PmTilesWriteResult {
  bytes: number;
  addressedTiles: number;
  tileEntries: number;
  tileContents: number;
  largestTileBytes: number;
}

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

const HEADER_BYTES = 127;
/** The header and the root directory must fit in the first 16 KiB, which a client reads in one request. */
const ROOT_LIMIT = 16_384 - HEADER_BYTES;
const MAGIC = 'PMTiles';
const COMPRESSION = { none: 1, gzip: 2 } as const;
const KNOWN_COMPRESSION = [0, 1, 2, 3, 4];
const TILE_TYPE_MVT = 1;
const KNOWN_TILE_TYPES = [0, 1, 2, 3, 4, 5, 6];
const MAX_ZOOM = 31;

/** One directory entry: tiles `tileId` to `tileId + runLength - 1` share the bytes at `offset`; runLength 0 points at a leaf directory. */
interface Entry {
  tileId: number;
  offset: number;
  length: number;
  runLength: number;
}

/** Tile ids of zooms 0 to z − 1: (4^z − 1) / 3. */
function zoomBase(z: number): number {
  return (4 ** z - 1) / 3;
}

/** The tile id of z/x/y: tiles of lower zooms first, then the position along the zoom's Hilbert curve. */
export function zxyToTileId(z: number, x: number, y: number): number {
  if (!Number.isInteger(z) || z < 0 || z > MAX_ZOOM) throw new RangeError(`zoom ${z} is outside 0–${MAX_ZOOM}`);
  const size = 2 ** z;
  if (!Number.isInteger(x) || !Number.isInteger(y) || x < 0 || y < 0 || x >= size || y >= size) throw new RangeError(`tile ${z}/${x}/${y} does not exist`);
  let d = 0;
  let [tx, ty] = [x, y];
  for (let s = size / 2; s >= 1; s /= 2) {
    const rx = tx >= s ? 1 : 0;
    const ry = ty >= s ? 1 : 0;
    tx -= rx * s;
    ty -= ry * s;
    d += s * s * ((3 * rx) ^ ry);
    // Rotate the quadrant so the curve stays continuous.
    if (ry === 0) {
      if (rx === 1) [tx, ty] = [s - 1 - tx, s - 1 - ty];
      [tx, ty] = [ty, tx];
    }
  }
  return zoomBase(z) + d;
}

/** The z/x/y of a tile id. */
export function tileIdToZxy(id: number): [z: number, x: number, y: number] {
  if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`tile id ${id} is not a non-negative integer`);
  let z = 0;
  while (z <= MAX_ZOOM && zoomBase(z + 1) <= id) z++;
  if (z > MAX_ZOOM) throw new RangeError(`tile id ${id} is past zoom ${MAX_ZOOM}`);
  let d = id - zoomBase(z);
  let [x, y] = [0, 0];
  for (let s = 1; s < 2 ** z; s *= 2) {
    const rx = 1 & Math.floor(d / 2);
    const ry = 1 & (d ^ rx);
    if (ry === 0) {
      if (rx === 1) [x, y] = [s - 1 - x, s - 1 - y];
      [x, y] = [y, x];
    }
    x += s * rx;
    y += s * ry;
    d = Math.floor(d / 4);
  }
  return [z, x, y];
}

/** Appends an unsigned varint (up to 2^53) to `out`. */
function writeVarint(out: number[], value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/** A directory as the spec lays it out: counts, then each column of the entries, varint-encoded, gzipped. */
function serializeDirectory(entries: Entry[]): Buffer {
  const out: number[] = [];
  writeVarint(out, entries.length);
  let last = 0;
  for (const entry of entries) {
    writeVarint(out, entry.tileId - last);
    last = entry.tileId;
  }
  for (const entry of entries) writeVarint(out, entry.runLength);
  for (const entry of entries) writeVarint(out, entry.length);
  entries.forEach((entry, index) => {
    const previous = entries[index - 1];
    // 0 says "right after the previous entry's bytes", which is most entries of a clustered archive.
    writeVarint(out, previous && entry.offset === previous.offset + previous.length ? 0 : entry.offset + 1);
  });
  return gzipSync(Buffer.from(out), { level: 9 });
}

/**
 * The root directory and the leaf directories: everything in the root when it fits, else leaves of `leafSize`
 * entries, doubled until the root of pointers to them fits.
 */
function buildDirectories(entries: Entry[]): { root: Buffer; leaves: Buffer } {
  const root = serializeDirectory(entries);
  if (root.length <= ROOT_LIMIT) return { root, leaves: Buffer.alloc(0) };
  for (let leafSize = 4096; ; leafSize *= 2) {
    const pointers: Entry[] = [];
    const leaves: Buffer[] = [];
    let offset = 0;
    for (let start = 0; start < entries.length; start += leafSize) {
      const leaf = serializeDirectory(entries.slice(start, start + leafSize));
      pointers.push({ tileId: entries[start]!.tileId, offset, length: leaf.length, runLength: 0 });
      leaves.push(leaf);
      offset += leaf.length;
    }
    const pointerRoot = serializeDirectory(pointers);
    if (pointerRoot.length <= ROOT_LIMIT) return { root: pointerRoot, leaves: Buffer.concat(leaves) };
  }
}

function writeHeader(header: PmTilesHeader): Buffer {
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
 * Writes tiles into a v3 archive at `path`. Tiles may come in any order, each address once; the archive is
 * clustered when they come in tile-id order (the tilers here give them so). Tile bytes go to a temporary file
 * as they come, identical tiles once (by SHA-256), so memory holds only an entry per tile; the archive is
 * written beside `path` and renamed into place. The same tiles and options give the same bytes.
 */
export async function writePmTiles(path: string, tiles: Iterable<PmTilesTile> | AsyncIterable<PmTilesTile>, options: PmTilesWriteOptions): Promise<PmTilesWriteResult> {
  const temporary = join(dirname(path), `.${process.pid}.${Date.now()}.pmtiles-data`);
  const partial = `${path}.${process.pid}.partial`;
  const data = await open(temporary, 'w+');
  try {
    const stored = new Map<string, { offset: number; length: number }>();
    const entries: Entry[] = [];
    let dataLength = 0;
    let largest = 0;
    let ordered = true;
    for await (const tile of tiles) {
      const tileId = zxyToTileId(tile.z, tile.x, tile.y);
      const last = entries.at(-1);
      if (last && tileId <= last.tileId + last.runLength - 1) ordered = false;
      const compressed = gzipSync(tile.bytes, { level: 6 });
      // gzip's header carries no name or time here, so equal tiles compress to equal bytes.
      const key = createHash('sha256').update(compressed).digest('base64');
      let place = stored.get(key);
      if (!place) {
        place = { offset: dataLength, length: compressed.length };
        await data.write(compressed, 0, compressed.length, dataLength);
        dataLength += compressed.length;
        largest = Math.max(largest, compressed.length);
        stored.set(key, place);
      }
      if (last && ordered && last.tileId + last.runLength === tileId && last.offset === place.offset && last.length === place.length) last.runLength++;
      else entries.push({ tileId, offset: place.offset, length: place.length, runLength: 1 });
    }
    entries.sort((a, b) => a.tileId - b.tileId);
    for (let index = 1; index < entries.length; index++) {
      if (entries[index]!.tileId < entries[index - 1]!.tileId + entries[index - 1]!.runLength) throw new RangeError(`tile ${tileIdToZxy(entries[index]!.tileId).join('/')} was given twice`);
    }
    const { root, leaves } = buildDirectories(entries);
    const metadata = gzipSync(Buffer.from(JSON.stringify(options.metadata)), { level: 9 });
    const rootOffset = HEADER_BYTES;
    const metadataOffset = rootOffset + root.length;
    const leafOffset = metadataOffset + metadata.length;
    const tileDataOffset = leafOffset + leaves.length;
    const [west, south, east, north] = options.bounds;
    const header = writeHeader({
      specVersion: 3,
      rootDirectoryOffset: rootOffset, rootDirectoryLength: root.length,
      jsonMetadataOffset: metadataOffset, jsonMetadataLength: metadata.length,
      leafDirectoryOffset: leafOffset, leafDirectoryLength: leaves.length,
      tileDataOffset, tileDataLength: dataLength,
      addressedTilesCount: entries.reduce((sum, entry) => sum + entry.runLength, 0),
      tileEntriesCount: entries.length,
      tileContentsCount: stored.size,
      clustered: ordered,
      internalCompression: COMPRESSION.gzip, tileCompression: COMPRESSION.gzip, tileType: TILE_TYPE_MVT,
      minZoom: options.minZoom, maxZoom: options.maxZoom,
      minLon: west, minLat: south, maxLon: east, maxLat: north,
      centerZoom: options.center[2], centerLon: options.center[0], centerLat: options.center[1],
    });
    const out = await open(partial, 'w');
    try {
      let position = 0;
      for (const part of [header, root, metadata, leaves]) {
        await out.write(part, 0, part.length, position);
        position += part.length;
      }
      const chunk = Buffer.alloc(1 << 20);
      for (let copied = 0; copied < dataLength;) {
        const { bytesRead } = await data.read(chunk, 0, Math.min(chunk.length, dataLength - copied), copied);
        await out.write(chunk, 0, bytesRead, position + copied);
        copied += bytesRead;
      }
      await out.sync();
    } finally {
      await out.close();
    }
    await rename(partial, path);
    return {
      bytes: tileDataOffset + dataLength,
      addressedTiles: entries.reduce((sum, entry) => sum + entry.runLength, 0),
      tileEntries: entries.length,
      tileContents: stored.size,
      largestTileBytes: largest,
    };
  } finally {
    await data.close();
    await rm(temporary, { force: true });
    await rm(partial, { force: true });
  }
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
