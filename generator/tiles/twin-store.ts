/**
 * The feature store of a twin (generator/tiles/twin-stage.ts): every feature of a GeoParquet file to draw, in file
 * order, in a file on disk, with its box, geometry and properties, so that each zoom reads them in one sequential
 * pass (generator/tiles/twin-spill.ts) rather than out of DuckDB or from memory. Records are written through a
 * buffer and read back in large reads.
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import type { TileFeature } from '../../core/geo/mvt.ts';

/** A feature's property value, as in an MVT tile. */
export type PropertyValue = TileFeature['properties'][string];

/** Buffer of the store's reads and writes. */
const STORE_BUFFER = 4 * 1024 ** 2;

/** A property value's kind in a record. */
const Tag = { Null: 0, Number: 1, Text: 2, False: 3, True: 4 } as const;

/** A file written through a buffer that grows for a record larger than itself: write at what `reserve` returns, into `buffer` or `view`. */
export class SpillFile {
  bytes = 0;
  buffer: Buffer;
  view: DataView;
  private at = 0;
  private readonly fd: number;
  readonly path: string;

  constructor(path: string, size: number) {
    this.path = path;
    this.fd = openSync(path, 'w');
    this.buffer = Buffer.allocUnsafe(size);
    this.view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.length);
  }

  /** Makes room for `length` more bytes and returns where they go. */
  reserve(length: number): number {
    if (this.at + length > this.buffer.length) {
      this.flush();
      if (length > this.buffer.length) {
        this.buffer = Buffer.allocUnsafe(length);
        this.view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.length);
      }
    }
    const at = this.at;
    this.at += length;
    this.bytes += length;
    return at;
  }

  /** Gives back bytes reserved and not used. */
  unreserve(length: number): void {
    this.at -= length;
    this.bytes -= length;
  }

  flush(): void {
    for (let written = 0; written < this.at;) written += writeSync(this.fd, this.buffer, written, this.at - written);
    this.at = 0;
  }

  /** Writes what is left and closes the file, even when the write fails (a full disk). */
  close(): void {
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
    }
  }
}

/**
 * Store record: payload length (u32), the box in Web Mercator (x0, y0, x1, y1 as f64), then the payload: the WKB's
 * length (u32) and bytes, and each property as a tag (u8) and its value (f64, or u32 length and UTF-8).
 */
export const STORE_HEAD = 4 + 32;

/** Writes features to the store, in file order. */
export class FeatureStore {
  count = 0;
  /** The largest payload written, in bytes. */
  largest = 0;
  private readonly file: SpillFile;

  constructor(path: string) {
    this.file = new SpillFile(path, STORE_BUFFER);
  }

  /** Appends a feature with its box (Web Mercator 0–1, y down). */
  append(box: [number, number, number, number], wkb: Uint8Array, values: PropertyValue[]): void {
    let most = STORE_HEAD + 4 + wkb.length;
    for (const value of values) most += typeof value === 'string' ? 5 + value.length * 3 : 9;
    let at = this.file.reserve(most);
    const { buffer, view } = this.file;
    const start = at;
    at += 4;
    for (const coordinate of box) {
      view.setFloat64(at, coordinate, true);
      at += 8;
    }
    view.setUint32(at, wkb.length, true);
    buffer.set(wkb, at + 4);
    at += 4 + wkb.length;
    for (const value of values) {
      if (value === null) buffer[at++] = Tag.Null;
      else if (typeof value === 'number') {
        buffer[at] = Tag.Number;
        view.setFloat64(at + 1, value, true);
        at += 9;
      } else if (typeof value === 'string') {
        buffer[at] = Tag.Text;
        const length = buffer.write(value, at + 5, 'utf8');
        view.setUint32(at + 1, length, true);
        at += 5 + length;
      } else buffer[at++] = value ? Tag.True : Tag.False;
    }
    view.setUint32(start, at - start - STORE_HEAD, true);
    this.largest = Math.max(this.largest, at - start - STORE_HEAD);
    this.file.unreserve(most - (at - start));
    this.count++;
  }

  /** Ends the writing; the store's size in bytes. */
  close(): number {
    this.file.close();
    return this.file.bytes;
  }
}

/**
 * Calls `visit` with each record of the store in file order: the buffer, where the record starts in it, its
 * payload's length, and where the record starts in the store.
 */
export function readStore(path: string, visit: (buffer: Buffer, view: DataView, at: number, payload: number, position: number) => boolean | void): void {
  const fd = openSync(path, 'r');
  try {
    let buffer = Buffer.allocUnsafe(STORE_BUFFER);
    let filled = 0;
    let at = 0;
    // Where the buffer's first byte is in the store.
    let base = 0;
    for (;;) {
      // Keeps the part of a record the last read cut, then reads on.
      buffer.copy(buffer, 0, at, filled);
      filled -= at;
      base += at;
      at = 0;
      const read = readSync(fd, buffer, filled, buffer.length - filled, null);
      if (read === 0 && filled === 0) return;
      filled += read;
      const view = new DataView(buffer.buffer, buffer.byteOffset, filled);
      while (at + 4 <= filled) {
        const payload = view.getUint32(at, true);
        if (at + STORE_HEAD + payload > filled) break;
        if (visit(buffer, view, at, payload, base + at) === false) return;
        at += STORE_HEAD + payload;
      }
      if (read === 0 && at < filled) throw new Error('the feature store ends inside a record');
      if (at === 0 && filled === buffer.length) {
        const larger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(larger, 0, 0, filled);
        buffer = larger;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** A feature of the payload at `at` (its WKB is a view of the buffer, not a copy). */
export function readFeature(buffer: Buffer, view: DataView, at: number, names: string[]): TileFeature {
  const length = view.getUint32(at, true);
  const wkb = buffer.subarray(at + 4, at + 4 + length);
  at += 4 + length;
  // Keyed by the file's column names.
  const properties: TileFeature['properties'] = Object.create(null);
  for (const name of names) {
    const tag = buffer[at++];
    if (tag === Tag.Number) {
      properties[name] = view.getFloat64(at, true);
      at += 8;
    } else if (tag === Tag.Text) {
      const bytes = view.getUint32(at, true);
      properties[name] = buffer.toString('utf8', at + 4, at + 4 + bytes);
      at += 4 + bytes;
    } else properties[name] = tag === Tag.Null ? null : tag === Tag.True;
  }
  return { wkb, properties };
}

/** The first `limit` features of the store. */
export function readFirstFeatures(path: string, names: string[], limit: number): TileFeature[] {
  const features: TileFeature[] = [];
  if (limit <= 0) return features;
  readStore(path, (buffer, view, at) => {
    // The buffer is read into again: the feature keeps a copy.
    const feature = readFeature(buffer, view, at + STORE_HEAD, names);
    features.push({ wkb: Uint8Array.from(feature.wkb), properties: feature.properties });
    return features.length < limit;
  });
  return features;
}
