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
import { growArray } from '../core/typed-arrays.ts';
import { buildDirectories, EntryColumns } from './pmtiles-directory.ts';
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
 * The tile contents stored so far, by SHA-256, in typed arrays (about 60 bytes a content, none of them objects):
 * the whole hashes, offsets and lengths by content, and an open-addressing table from the hash's first 52 bits to
 * the content (a `Map` of base64 keys to objects took about 130 bytes a tile, 180 MB for the 1.4M tiles of a
 * 100M-point twin). Of two contents whose hashes share 52 bits (a chance of about 1 in 2,000 among 2M tiles) both
 * are stored, and only the first is found again: a tile stored twice.
 */
class TileContents {
  size = 0;
  private hashes = new Uint8Array(32 * 1024);
  private keys = new Float64Array(1024);
  private offsets = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  /** Content index + 1 by slot, 0 for an empty slot; at most half full. */
  private slots = new Int32Array(4096);

  find(hash: Uint8Array): { offset: number; length: number } | undefined {
    const key = keyOf(hash);
    for (let slot = this.slotOf(key); this.slots[slot] !== 0; slot = (slot + 1) & (this.slots.length - 1)) {
      const at = this.slots[slot]! - 1;
      if (this.keys[at] !== key) continue;
      if (!equalBytes(this.hashes.subarray(at * 32, at * 32 + 32), hash)) return undefined;
      return { offset: this.offsets[at]!, length: this.lengths[at]! };
    }
    return undefined;
  }

  add(hash: Uint8Array, place: { offset: number; length: number }): void {
    if (this.size === this.keys.length) this.growContents();
    const at = this.size++;
    const key = keyOf(hash);
    this.hashes.set(hash, at * 32);
    this.keys[at] = key;
    this.offsets[at] = place.offset;
    this.lengths[at] = place.length;
    if (this.size * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(at);
  }

  /** Puts content `at` in the table, unless a content with its key is there already (the first one is kept). */
  private place(at: number): void {
    let slot = this.slotOf(this.keys[at]!);
    while (this.slots[slot] !== 0) {
      if (this.keys[this.slots[slot]! - 1] === this.keys[at]) return;
      slot = (slot + 1) & (this.slots.length - 1);
    }
    this.slots[slot] = at + 1;
  }

  private rehash(capacity: number): void {
    this.slots = new Int32Array(capacity);
    for (let at = 0; at < this.size; at++) this.place(at);
  }

  /** A key's first slot: its low bits, which are as random as SHA-256's. */
  private slotOf(key: number): number {
    return key % this.slots.length;
  }

  private growContents(): void {
    const capacity = this.keys.length * 2;
    this.hashes = growArray(this.hashes, capacity * 32);
    this.keys = growArray(this.keys, capacity);
    this.offsets = growArray(this.offsets, capacity);
    this.lengths = growArray(this.lengths, capacity);
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
    const entries = new EntryColumns();
    let dataLength = 0;
    let largest = 0;
    let ordered = true;
    for await (const tile of tiles) {
      const tileId = zxyToTileId(tile.z, tile.x, tile.y);
      const last = entries.count - 1;
      if (last >= 0 && tileId <= entries.tileIds[last]! + entries.runLengths[last]! - 1) ordered = false;
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
      const runs = last >= 0 && ordered && entries.tileIds[last]! + entries.runLengths[last]! === tileId && entries.offsets[last] === place.offset && entries.lengths[last] === place.length;
      if (runs) entries.runLengths[last]!++;
      else entries.push({ tileId, offset: place.offset, length: place.length, runLength: 1 });
    }
    const sorted = ordered ? entries : entries.sorted();
    for (let at = 1; at < sorted.count; at++) {
      if (sorted.tileIds[at]! < sorted.tileIds[at - 1]! + sorted.runLengths[at - 1]!) throw new RangeError(`tile ${tileIdToZxy(sorted.tileIds[at]!).join('/')} was given twice`);
    }
    const addressed = sorted.runLengths.subarray(0, sorted.count).reduce((sum, run) => sum + run, 0);
    const { root, leaves } = buildDirectories(sorted);
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
      addressedTilesCount: addressed,
      tileEntriesCount: sorted.count,
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
      addressedTiles: addressed,
      tileEntries: sorted.count,
      tileContents: stored.size,
      largestTileBytes: largest,
    };
  } finally {
    await data.close();
    await rm(temporary, { force: true });
    await rm(partial, { force: true });
  }
}
