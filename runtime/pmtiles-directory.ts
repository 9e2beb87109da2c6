/** Directories of a PMTiles v3 archive: entries varint-encoded and gzipped, in the root or in leaves. */
import { gzipSync } from 'node:zlib';
import { growArray } from '../core/typed-arrays.ts';
import { HEADER_BYTES } from './pmtiles-header.ts';

/** The header and the root directory must fit in the first 16 KiB, which a client reads in one request. */
const ROOT_LIMIT = 16_384 - HEADER_BYTES;

/** One directory entry: tiles `tileId` to `tileId + runLength - 1` share the bytes at `offset`; runLength 0 points at a leaf directory. */
export interface Entry {
  tileId: number;
  offset: number;
  length: number;
  runLength: number;
}

/**
 * Directory entries in columns of typed arrays that grow by doubling: 24 bytes an entry, where an object took
 * about 50 (and a boxed number for every offset past 1 GB of tile data). A 100M-point twin has 1.4M entries.
 */
export class EntryColumns {
  count = 0;
  tileIds = new Float64Array(1024);
  offsets = new Float64Array(1024);
  lengths = new Uint32Array(1024);
  runLengths = new Uint32Array(1024);

  push(entry: Entry): void {
    if (this.count === this.tileIds.length) this.grow(this.count * 2);
    const at = this.count++;
    this.tileIds[at] = entry.tileId;
    this.offsets[at] = entry.offset;
    this.lengths[at] = entry.length;
    this.runLengths[at] = entry.runLength;
  }

  /** The entry at `at`, as an object (for the few places that want one). */
  at(at: number): Entry {
    return { tileId: this.tileIds[at]!, offset: this.offsets[at]!, length: this.lengths[at]!, runLength: this.runLengths[at]! };
  }

  /** The entries in tile-id order (a stable sort); the same columns when they already are. */
  sorted(): EntryColumns {
    const order = Array.from({ length: this.count }, (_, at) => at).sort((a, b) => this.tileIds[a]! - this.tileIds[b]! || a - b);
    if (order.every((at, position) => at === position)) return this;
    const sorted = new EntryColumns();
    for (const at of order) sorted.push(this.at(at));
    return sorted;
  }

  private grow(capacity: number): void {
    this.tileIds = growArray(this.tileIds, capacity);
    this.offsets = growArray(this.offsets, capacity);
    this.lengths = growArray(this.lengths, capacity);
    this.runLengths = growArray(this.runLengths, capacity);
  }
}

/** Bytes written through a buffer that doubles when full (a JavaScript array of 1.4M entries' bytes took 112 MB). */
class ByteWriter {
  private bytes = new Uint8Array(4096);
  private length = 0;

  push(byte: number): void {
    if (this.length === this.bytes.length) {
      const larger = new Uint8Array(this.bytes.length * 2);
      larger.set(this.bytes);
      this.bytes = larger;
    }
    this.bytes[this.length++] = byte;
  }

  written(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}

/** Appends an unsigned varint (up to 2^53) to `out`. */
function writeVarint(out: ByteWriter, value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

/** A directory as the spec lays it out: counts, then each column of entries [start, end), varint-encoded, gzipped. */
function serializeDirectory(entries: EntryColumns, start = 0, end = entries.count): Buffer {
  const out = new ByteWriter();
  writeVarint(out, end - start);
  let last = 0;
  for (let at = start; at < end; at++) {
    writeVarint(out, entries.tileIds[at]! - last);
    last = entries.tileIds[at]!;
  }
  for (let at = start; at < end; at++) writeVarint(out, entries.runLengths[at]!);
  for (let at = start; at < end; at++) writeVarint(out, entries.lengths[at]!);
  for (let at = start; at < end; at++) {
    // 0 says "right after the previous entry's bytes", which is most entries of a clustered archive.
    const follows = at > start && entries.offsets[at] === entries.offsets[at - 1]! + entries.lengths[at - 1]!;
    writeVarint(out, follows ? 0 : entries.offsets[at]! + 1);
  }
  return gzipSync(out.written(), { level: 9 });
}

/**
 * The root directory and the leaf directories: everything in the root when it fits, else leaves of `leafSize`
 * entries, doubled until the root of pointers to them fits. The entries are in tile-id order.
 */
export function buildDirectories(entries: EntryColumns): { root: Buffer; leaves: Buffer } {
  const root = serializeDirectory(entries);
  if (root.length <= ROOT_LIMIT) return { root, leaves: Buffer.alloc(0) };
  for (let leafSize = 4096; ; leafSize *= 2) {
    const pointers = new EntryColumns();
    const leaves: Buffer[] = [];
    let offset = 0;
    for (let start = 0; start < entries.count; start += leafSize) {
      const leaf = serializeDirectory(entries, start, Math.min(start + leafSize, entries.count));
      pointers.push({ tileId: entries.tileIds[start]!, offset, length: leaf.length, runLength: 0 });
      leaves.push(leaf);
      offset += leaf.length;
    }
    const pointerRoot = serializeDirectory(pointers);
    if (pointerRoot.length <= ROOT_LIMIT) return { root: pointerRoot, leaves: Buffer.concat(leaves) };
  }
}
