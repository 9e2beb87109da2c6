/** Directories of a PMTiles v3 archive: entries varint-encoded and gzipped, in the root or in leaves. */
import { gzipSync } from 'node:zlib';
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

/** A directory as the spec lays it out: counts, then each column of the entries, varint-encoded, gzipped. */
function serializeDirectory(entries: Entry[]): Buffer {
  const out = new ByteWriter();
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
  return gzipSync(out.written(), { level: 9 });
}

/**
 * The root directory and the leaf directories: everything in the root when it fits, else leaves of `leafSize`
 * entries, doubled until the root of pointers to them fits.
 */
export function buildDirectories(entries: Entry[]): { root: Buffer; leaves: Buffer } {
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
