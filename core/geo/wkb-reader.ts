/**
 * The one low-level WKB reader under `decodeWkb`, `inspectWkb` and `readProjectedWkb`: byte order, type
 * codes (ISO Z/M/ZM and PostGIS EWKB flags, SRID included), ordinate stride, and every bounds check.
 *
 * The tile encoder calls it once per feature, so it allocates nothing per header: one reader per module is
 * reused, the last header's fields sit on it instead of in a returned object, and a lone point is read
 * without a DataView. Every check throws `WkbError`; each caller turns that into its own way of saying
 * "malformed" (`decodeWkb` throws, `inspectWkb` reports, `readProjectedWkb` returns false).
 */

/** Names of the WKB geometry types by their base code (1–7). */
export const WKB_TYPE_NAMES = ['', 'Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon', 'GeometryCollection'] as const;

/** How deep collections may nest; the top-level geometry is depth 0. Guards the recursion of every reader. */
export const MAX_WKB_DEPTH = 32;

/** A cursor over one WKB value, plus what the header read last said. */
export interface WkbReader {
  bytes: Uint8Array;
  /** Where the next read starts. */
  offset: number;
  /** Byte order of the geometry whose header was read last. */
  littleEndian: boolean;
  /** Base type code 1–7 of that geometry. */
  type: number;
  /** Bytes per position of that geometry: 16, plus 8 for each of Z and M. */
  stride: number;
  /** The EWKB SRID of that header, or 0 when it carries none (PostGIS also reads 0 as "unknown"). */
  srid: number;
  /** A DataView over `bytes`, made by `viewWkb` on first use. */
  view: DataView | null;
}

/** Thrown by every check of the reader: the bytes are not the WKB they claim to be. */
export class WkbError extends Error {
  override name = 'WkbError';
}

const EWKB_Z = 0x80000000;
const EWKB_M = 0x40000000;
const EWKB_SRID = 0x20000000;
const EMPTY = new Uint8Array(0);
// Every geometry takes at least a 5-byte header and a 4-byte count (a point takes 16 bytes instead).
const MIN_GEOMETRY_BYTES = 9;
const TOO_DEEP = `WKB nested deeper than ${MAX_WKB_DEPTH} levels`;

// Lone points are read by copying their bytes into this scratch: a DataView per feature cost 3–5 ms per 50,000 points.
const scratch = new Float64Array(1);
const scratchBytes = new Uint8Array(scratch.buffer);
const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** A reader with no bytes; `openWkb` points it at a value. Keep one per module and reuse it: reads are synchronous. */
export function createWkbReader(): WkbReader {
  return { bytes: EMPTY, offset: 0, littleEndian: true, type: 0, stride: 16, srid: 0, view: null };
}

/** Points `reader` at the start of `bytes`. */
export function openWkb(reader: WkbReader, bytes: Uint8Array): void {
  reader.bytes = bytes;
  reader.offset = 0;
  reader.type = 0;
  reader.srid = 0;
  reader.view = null;
}

/** Drops the reader's reference to its bytes, so a reused reader does not keep the last value alive. */
export function closeWkb(reader: WkbReader): void {
  reader.bytes = EMPTY;
  reader.view = null;
}

/**
 * Reads a geometry header into `reader` (byte order, type, stride, SRID) and returns its base type code.
 * `parentType` is the base code of the enclosing collection, or 0 at the top: a MultiPolygon's members must
 * be Polygons, and so on; a GeometryCollection takes any type.
 * Counts and positions take the byte order and stride of the header read last; WKB never puts one of a
 * geometry's own counts after a member's header, so reading in order keeps that right.
 * @example
 * openWkb(reader, bytes);
 * if (readWkbHeader(reader, 0, 0) === 2) points = readPositionCount(reader); // then `points * reader.stride` bytes
 * @throws WkbError for truncated bytes, a byte order other than 0 or 1, an unknown type code, a member of the
 * wrong type, or nesting deeper than `MAX_WKB_DEPTH`.
 */
export function readWkbHeader(reader: WkbReader, depth: number, parentType: number): number {
  if (depth > MAX_WKB_DEPTH) throw new WkbError(TOO_DEEP);
  ensureBytes(reader, 5);
  const { bytes } = reader;
  const order = bytes[reader.offset] as number;
  if (order > 1) throw invalidByteOrder(reader);
  const littleEndian = order === 1;
  const raw = readUint32(bytes, reader.offset + 1, littleEndian);
  reader.offset += 5;
  const iso = raw & 0x0fffffff;
  const type = iso % 1000;
  const isoDims = (iso - type) / 1000;
  if (type < 1 || type > 7 || isoDims > 3) throw unsupportedType(raw);
  if (parentType >= 4 && parentType <= 6 && type !== parentType - 3) throw wrongMember(parentType, type);
  // ISO 1000 is Z, 2000 is M, 3000 is both; a writer that also sets the EWKB flag still means one ordinate.
  const hasZ = (raw & EWKB_Z) !== 0 || isoDims === 1 || isoDims === 3;
  const hasM = (raw & EWKB_M) !== 0 || isoDims >= 2;
  let srid = 0;
  if (raw & EWKB_SRID) {
    ensureBytes(reader, 4);
    srid = readUint32(bytes, reader.offset, littleEndian);
    reader.offset += 4;
  }
  reader.littleEndian = littleEndian;
  reader.type = type;
  reader.stride = 16 + (hasZ ? 8 : 0) + (hasM ? 8 : 0);
  reader.srid = srid;
  return type;
}

/** Reads how many positions follow (a LineString's or a ring's), checking that they all fit in the bytes left. */
export function readPositionCount(reader: WkbReader): number {
  return readCount(reader, reader.stride);
}

/** Reads how many rings a Polygon has, checking that each could fit in the bytes left. */
export function readRingCount(reader: WkbReader): number {
  return readCount(reader, 4);
}

/** Reads how many members a multi-geometry or collection has, checking that each could fit in the bytes left. */
export function readPartCount(reader: WkbReader): number {
  return readCount(reader, MIN_GEOMETRY_BYTES);
}

/** Checks that one position remains, moves past it, and returns the offset of its x (y is 8 bytes on). */
export function claimPosition(reader: WkbReader): number {
  ensureBytes(reader, reader.stride);
  const at = reader.offset;
  reader.offset += reader.stride;
  return at;
}

/** Whether the reader has consumed every byte: WKB with bytes after its geometry is malformed. */
export function isWkbEnd(reader: WkbReader): boolean {
  return reader.offset === reader.bytes.length;
}

/** @throws WkbError when bytes remain after the geometry. */
export function assertWkbEnd(reader: WkbReader): void {
  if (!isWkbEnd(reader)) throw new WkbError(`WKB has ${reader.bytes.length - reader.offset} trailing bytes after the geometry`);
}

/**
 * A DataView over the reader's bytes, made once per value. Read runs of positions through it: past a few
 * doubles it beats `readFloat64`, but making one costs as much as reading a lone point.
 */
export function viewWkb(reader: WkbReader): DataView {
  const { bytes } = reader;
  reader.view ??= new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return reader.view;
}

/** Reads a double at `offset` without a DataView, for lone points; the caller has checked the bounds with `claimPosition`. */
export function readFloat64(bytes: Uint8Array, offset: number, littleEndian: boolean): number {
  if (littleEndian === HOST_LITTLE_ENDIAN) for (let i = 0; i < 8; i++) scratchBytes[i] = bytes[offset + i] as number;
  else for (let i = 0; i < 8; i++) scratchBytes[7 - i] = bytes[offset + i] as number;
  return scratch[0] as number;
}

function readUint32(bytes: Uint8Array, offset: number, littleEndian: boolean): number {
  const a = bytes[offset] as number;
  const b = bytes[offset + 1] as number;
  const c = bytes[offset + 2] as number;
  const d = bytes[offset + 3] as number;
  return (littleEndian ? a | (b << 8) | (c << 16) | (d << 24) : d | (c << 8) | (b << 16) | (a << 24)) >>> 0;
}

// The count is checked against the bytes left before anyone allocates for it: 0xFFFFFFFF points must not
// become a four-billion-slot array.
function readCount(reader: WkbReader, minItemBytes: number): number {
  ensureBytes(reader, 4);
  const count = readUint32(reader.bytes, reader.offset, reader.littleEndian);
  reader.offset += 4;
  ensureBytes(reader, count * minItemBytes);
  return count;
}

function ensureBytes(reader: WkbReader, count: number): void {
  if (reader.offset + count > reader.bytes.length) throw truncated(reader, count);
}

// The errors are built out of line: with their messages inline, readWkbHeader grew past the size V8 inlines.
function truncated(reader: WkbReader, count: number): WkbError {
  return new WkbError(`WKB truncated: needs ${count} bytes at offset ${reader.offset} of ${reader.bytes.length}`);
}

function invalidByteOrder(reader: WkbReader): WkbError {
  return new WkbError(`invalid WKB byte order ${reader.bytes[reader.offset]} at offset ${reader.offset}`);
}

function unsupportedType(raw: number): WkbError {
  return new WkbError(`unsupported WKB geometry type ${raw}`);
}

function wrongMember(parentType: number, type: number): WkbError {
  return new WkbError(`WKB ${WKB_TYPE_NAMES[parentType]} holds a ${WKB_TYPE_NAMES[type]}`);
}
