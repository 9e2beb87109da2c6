/**
 * PMTiles v3 archives (https://github.com/protomaps/PMTiles/blob/main/spec/v3/spec.md): one file holding a
 * pyramid of tiles, read over HTTP with byte ranges, so a map of a whole file needs only static hosting.
 *
 * Written here: vector (MVT) tiles, gzip-compressed, tile data in tile-id order (clustered) with identical tiles
 * stored once, directories gzip-compressed, leaf directories when the root would not fit the first 16 KiB.
 * The header, directory and tile-id codecs are in pmtiles-header.ts, pmtiles-directory.ts and pmtiles-tile-id.ts;
 * the header and the JSON metadata are read back and checked in pmtiles-info.ts, for the build to tell a broken
 * archive from a good one. Tiles are read by clients (the `pmtiles` package in the browser and in tests).
 */
import { createHash } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildDirectories, type Entry } from './pmtiles-directory.ts';
import { COMPRESSION, HEADER_BYTES, TILE_TYPE_MVT, writeHeader } from './pmtiles-header.ts';
import { tileIdToZxy, zxyToTileId } from './pmtiles-tile-id.ts';

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

/**
 * The tile contents stored so far, by SHA-256, in a few bytes each: a map from the hash's first 52 bits to an
 * index into arrays of whole hashes, offsets and lengths (a map of base64 keys to objects takes about 130 bytes a
 * tile, 180 MB for the 1.4M tiles of a 100M-point twin). Of two contents whose hashes share 52 bits (a chance of
 * about 1 in 2,000 among 2M tiles) both are stored, and only the first is found again: a tile stored twice.
 */
class TileContents {
  size = 0;
  private readonly index = new Map<number, number>();
  private hashes = new Uint8Array(32 * 1024);
  private offsets: number[] = [];
  private lengths: number[] = [];

  find(hash: Uint8Array): { offset: number; length: number } | undefined {
    const at = this.index.get(keyOf(hash));
    if (at === undefined || !equalBytes(this.hashes.subarray(at * 32, at * 32 + 32), hash)) return undefined;
    return { offset: this.offsets[at]!, length: this.lengths[at]! };
  }

  add(hash: Uint8Array, place: { offset: number; length: number }): void {
    const key = keyOf(hash);
    if ((this.size + 1) * 32 > this.hashes.length) {
      const larger = new Uint8Array(this.hashes.length * 2);
      larger.set(this.hashes);
      this.hashes = larger;
    }
    this.hashes.set(hash, this.size * 32);
    this.offsets.push(place.offset);
    this.lengths.push(place.length);
    if (!this.index.has(key)) this.index.set(key, this.size);
    this.size++;
  }
}

/** A hash's first 52 bits as a number (below 2^53, so exact). */
function keyOf(hash: Uint8Array): number {
  return (hash[0]! * 2 ** 40 + hash[1]! * 2 ** 32 + ((hash[2]! << 24) >>> 0) + (hash[3]! << 16) + (hash[4]! << 8) + hash[5]!) * 16 + (hash[6]! >> 4);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.compare(a, b) === 0;
}

/** What was written. `largestTileBytes` is of a compressed tile, as stored. */
export interface PmTilesWriteResult {
  bytes: number;
  addressedTiles: number;
  tileEntries: number;
  tileContents: number;
  largestTileBytes: number;
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
    const stored = new TileContents();
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
      const hash = createHash('sha256').update(compressed).digest();
      let place = stored.find(hash);
      if (!place) {
        place = { offset: dataLength, length: compressed.length };
        await data.write(compressed, 0, compressed.length, dataLength);
        dataLength += compressed.length;
        largest = Math.max(largest, compressed.length);
        stored.add(hash, place);
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
