/**
 * Reads WKB straight into tile coordinates, sorted into points, lines and polygons.
 *
 * `decodeWkb` builds one array per position; tiles of 50,000 points spent most of their time there, so
 * this reader projects each position as it reads it and stores flat `[x0, y0, x1, y1, …]` arrays.
 */
import { projectX, projectY } from './mvt-tile-math.ts';
import type { TileProjection } from './mvt-tile-math.ts';

/** One geometry in tile coordinates (floats, not yet clipped), grouped by MVT geometry type. */
export interface ProjectedGeometry {
  /** All points, flat. */
  points: number[];
  /** Each line, flat. */
  lines: number[][];
  /** Each polygon as its rings, exterior first; every ring is flat and closed. */
  polygons: number[][][];
  /** Bounding box of every position read. */
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

type Reader = { bytes: Uint8Array; offset: number; projection: TileProjection; out: ProjectedGeometry };

const MAX_DEPTH = 32;

// One reader for every call: reading is synchronous, and a fresh object per feature showed up in GC time.
const reader: Reader = { bytes: new Uint8Array(0), offset: 0, projection: { kx: 0, ox: 0, ky: 0, oy: 0 }, out: createProjectedGeometry() };

// Doubles are read by copying their bytes into this scratch: a DataView per feature cost 3–5 ms per 50,000 points.
const scratch = new Float64Array(1);
const scratchBytes = new Uint8Array(scratch.buffer);
const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** An empty geometry to be filled by `readProjectedWkb`, reusable from one feature to the next. */
export function createProjectedGeometry(): ProjectedGeometry {
  return { points: [], lines: [], polygons: [], minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
}

/**
 * Fills `out` with the projected parts of a WKB geometry (ISO or EWKB, either byte order; Z and M are
 * dropped). The arrays of `out` are emptied and refilled, so read a feature's parts before the next call.
 * A GeometryCollection's members land in the bucket of their type. An empty point
 * (`POINT(NaN NaN)`) is left out.
 * @returns false when the bytes are malformed or hold another non-finite coordinate; `out` is then unusable.
 */
export function readProjectedWkb(bytes: Uint8Array, projection: TileProjection, out: ProjectedGeometry): boolean {
  out.points.length = 0;
  out.lines.length = 0;
  out.polygons.length = 0;
  out.minX = out.minY = Infinity;
  out.maxX = out.maxY = -Infinity;
  try {
    if (!(bytes instanceof Uint8Array)) return false;
    reader.bytes = bytes;
    reader.offset = 0;
    reader.projection = projection;
    reader.out = out;
    readGeometry(reader, 0, 0);
    return true;
  } catch {
    return false;
  } finally {
    reader.bytes = EMPTY;
  }
}

const EMPTY = new Uint8Array(0);

function readUint32(bytes: Uint8Array, offset: number, little: boolean): number {
  const a = bytes[offset] as number;
  const b = bytes[offset + 1] as number;
  const c = bytes[offset + 2] as number;
  const d = bytes[offset + 3] as number;
  return (little ? a | (b << 8) | (c << 16) | (d << 24) : d | (c << 8) | (b << 16) | (a << 24)) >>> 0;
}

function readFloat64(bytes: Uint8Array, offset: number, little: boolean): number {
  if (little === HOST_LITTLE_ENDIAN) for (let i = 0; i < 8; i++) scratchBytes[i] = bytes[offset + i] as number;
  else for (let i = 0; i < 8; i++) scratchBytes[7 - i] = bytes[offset + i] as number;
  return scratch[0] as number;
}

function need(reader: Reader, count: number): void {
  if (reader.offset + count > reader.bytes.length) throw new RangeError('WKB truncated');
}

function readGeometry(reader: Reader, depth: number, expectedType: number): void {
  if (depth > MAX_DEPTH) throw new RangeError('WKB nested too deeply');
  need(reader, 5);
  const { bytes } = reader;
  const order = bytes[reader.offset] as number;
  if (order > 1) throw new RangeError('invalid WKB byte order');
  const little = order === 1;
  const raw = readUint32(bytes, reader.offset + 1, little);
  reader.offset += 5;
  const iso = raw & 0x0fffffff;
  const type = iso % 1000;
  const isoDims = Math.floor(iso / 1000);
  if (type < 1 || type > 7 || isoDims > 3) throw new RangeError('unsupported WKB type');
  if (expectedType !== 0 && type !== expectedType) throw new RangeError('WKB multi-geometry holds another type');
  const extra = (isoDims === 3 ? 2 : isoDims > 0 ? 1 : 0) + (raw & 0x80000000 ? 1 : 0) + (raw & 0x40000000 ? 1 : 0);
  if (raw & 0x20000000) {
    need(reader, 4);
    reader.offset += 4;
  }
  const stride = 16 + 8 * extra;
  const { out } = reader;
  if (type === 1) readPoint(reader, little, stride);
  else if (type === 2) out.lines.push(readPositions(reader, little, stride, false));
  else if (type === 3) {
    const count = readCount(reader, little, 4);
    const rings: number[][] = [];
    for (let i = 0; i < count; i++) rings.push(readPositions(reader, little, stride, true));
    out.polygons.push(rings);
  } else {
    const count = readCount(reader, little, 5);
    for (let i = 0; i < count; i++) readGeometry(reader, depth + 1, type === 7 ? 0 : type - 3);
  }
}

function readCount(reader: Reader, little: boolean, minItemBytes: number): number {
  need(reader, 4);
  const count = readUint32(reader.bytes, reader.offset, little);
  reader.offset += 4;
  need(reader, count * minItemBytes);
  return count;
}

function readPoint(reader: Reader, little: boolean, stride: number): void {
  need(reader, stride);
  const lon = readFloat64(reader.bytes, reader.offset, little);
  const lat = readFloat64(reader.bytes, reader.offset + 8, little);
  reader.offset += stride;
  if (Number.isNaN(lon) && Number.isNaN(lat)) return;
  pushPosition(reader, lon, lat, reader.out.points);
}

function readPositions(reader: Reader, little: boolean, stride: number, closeRing: boolean): number[] {
  const count = readCount(reader, little, stride);
  const coords: number[] = [];
  const { bytes } = reader;
  let offset = reader.offset;
  for (let i = 0; i < count; i++) {
    pushPosition(reader, readFloat64(bytes, offset, little), readFloat64(bytes, offset + 8, little), coords);
    offset += stride;
  }
  reader.offset = offset;
  const n = coords.length;
  if (closeRing && n >= 2 && (coords[0] !== coords[n - 2] || coords[1] !== coords[n - 1])) {
    coords.push(coords[0] as number, coords[1] as number);
  }
  return coords;
}

function pushPosition(reader: Reader, lon: number, lat: number, into: number[]): void {
  if (!Number.isFinite(lon) || !Number.isFinite(lat)) throw new RangeError('non-finite coordinate');
  const x = projectX(reader.projection, lon);
  const y = projectY(reader.projection, lat);
  const { out } = reader;
  if (x < out.minX) out.minX = x;
  if (x > out.maxX) out.maxX = x;
  if (y < out.minY) out.minY = y;
  if (y > out.maxY) out.maxY = y;
  into.push(x, y);
}
