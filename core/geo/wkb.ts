/**
 * Well-known binary (OGC Simple Features / ISO WKB) encoding and decoding for
 * 2D GeoJSON geometries, plus bounding boxes.
 *
 * Decoding is on the hot path of bounds and tiles, so it reads through one
 * DataView and allocates nothing but the output arrays.
 */

/** A position: `[x, y]`, that is `[lon, lat]` for geographic data. */
export type Position = number[];
/** A GeoJSON Point; an empty point has no coordinates. */
export type Point = { type: 'Point'; coordinates: Position };
/** A GeoJSON LineString. */
export type LineString = { type: 'LineString'; coordinates: Position[] };
/** A GeoJSON Polygon: exterior ring first, then holes. */
export type Polygon = { type: 'Polygon'; coordinates: Position[][] };
/** A GeoJSON MultiPoint. */
export type MultiPoint = { type: 'MultiPoint'; coordinates: Position[] };
/** A GeoJSON MultiLineString. */
export type MultiLineString = { type: 'MultiLineString'; coordinates: Position[][] };
/** A GeoJSON MultiPolygon. */
export type MultiPolygon = { type: 'MultiPolygon'; coordinates: Position[][][] };
/** A GeoJSON GeometryCollection. */
export type GeometryCollection = { type: 'GeometryCollection'; geometries: Geometry[] };
/** Any GeoJSON geometry. */
export type Geometry = Point | LineString | Polygon | MultiPoint | MultiLineString | MultiPolygon | GeometryCollection;
/** The name of a geometry type, as in GeoJSON and GeoParquet `geometry_types`. */
export type GeometryType = Geometry['type'];
/** `[xmin, ymin, xmax, ymax]`. */
export type BBox = [number, number, number, number];

/** The 2D WKB type code of each geometry type (ISO adds 1000 for Z, 2000 for M, 3000 for ZM). */
export const WKB_TYPE_CODES: Readonly<Record<GeometryType, number>> = {
  Point: 1,
  LineString: 2,
  Polygon: 3,
  MultiPoint: 4,
  MultiLineString: 5,
  MultiPolygon: 6,
  GeometryCollection: 7,
};

// Object keys keep insertion order, which is type-code order: TYPE_NAMES[code - 1].
const TYPE_NAMES = Object.keys(WKB_TYPE_CODES) as readonly GeometryType[];

type Cursor = { view: DataView; offset: number };

/**
 * Encodes a geometry as little-endian ISO WKB. Only x and y are written; an
 * empty Point becomes `POINT(NaN NaN)` as GEOS and GDAL expect.
 * @example encodeWkb({ type: 'Point', coordinates: [1, 1] }) // 0101000000000000000000f03f000000000000f03f
 */
export function encodeWkb(geometry: Geometry): Uint8Array {
  const bytes = new Uint8Array(sizeOfWkb(geometry));
  const cursor: Cursor = { view: new DataView(bytes.buffer), offset: 0 };
  writeGeometry(cursor, geometry);
  return bytes;
}

function sizeOfWkb(geometry: Geometry): number {
  switch (geometry.type) {
    case 'Point':
      return 21;
    case 'LineString':
      return 9 + 16 * geometry.coordinates.length;
    case 'Polygon':
      return 9 + sizeOfRings(geometry.coordinates);
    case 'MultiPoint':
      return 9 + 21 * geometry.coordinates.length;
    case 'MultiLineString':
      return 9 + geometry.coordinates.reduce((sum, line) => sum + 9 + 16 * line.length, 0);
    case 'MultiPolygon':
      return 9 + geometry.coordinates.reduce((sum, rings) => sum + 9 + sizeOfRings(rings), 0);
    case 'GeometryCollection':
      return 9 + geometry.geometries.reduce((sum, part) => sum + sizeOfWkb(part), 0);
  }
}

function sizeOfRings(rings: Position[][]): number {
  return rings.reduce((sum, ring) => sum + 4 + 16 * ring.length, 0);
}

function writeGeometry(cursor: Cursor, geometry: Geometry): void {
  writeHeader(cursor, WKB_TYPE_CODES[geometry.type]);
  switch (geometry.type) {
    case 'Point':
      writePosition(cursor, geometry.coordinates.length === 0 ? [NaN, NaN] : geometry.coordinates);
      return;
    case 'LineString':
      writePositions(cursor, geometry.coordinates);
      return;
    case 'Polygon':
      writeRings(cursor, geometry.coordinates);
      return;
    case 'MultiPoint':
      writeCount(cursor, geometry.coordinates.length);
      for (const position of geometry.coordinates) {
        writeHeader(cursor, WKB_TYPE_CODES.Point);
        writePosition(cursor, position);
      }
      return;
    case 'MultiLineString':
      writeCount(cursor, geometry.coordinates.length);
      for (const line of geometry.coordinates) {
        writeHeader(cursor, WKB_TYPE_CODES.LineString);
        writePositions(cursor, line);
      }
      return;
    case 'MultiPolygon':
      writeCount(cursor, geometry.coordinates.length);
      for (const rings of geometry.coordinates) {
        writeHeader(cursor, WKB_TYPE_CODES.Polygon);
        writeRings(cursor, rings);
      }
      return;
    case 'GeometryCollection':
      writeCount(cursor, geometry.geometries.length);
      for (const part of geometry.geometries) writeGeometry(cursor, part);
      return;
  }
}

function writeHeader(cursor: Cursor, code: number): void {
  cursor.view.setUint8(cursor.offset, 1);
  cursor.view.setUint32(cursor.offset + 1, code, true);
  cursor.offset += 5;
}

function writeCount(cursor: Cursor, count: number): void {
  cursor.view.setUint32(cursor.offset, count, true);
  cursor.offset += 4;
}

function writePosition(cursor: Cursor, position: Position): void {
  cursor.view.setFloat64(cursor.offset, position[0] ?? NaN, true);
  cursor.view.setFloat64(cursor.offset + 8, position[1] ?? NaN, true);
  cursor.offset += 16;
}

function writePositions(cursor: Cursor, positions: Position[]): void {
  writeCount(cursor, positions.length);
  for (const position of positions) writePosition(cursor, position);
}

function writeRings(cursor: Cursor, rings: Position[][]): void {
  writeCount(cursor, rings.length);
  for (const ring of rings) writePositions(cursor, ring);
}

type Header = { littleEndian: boolean; type: GeometryType; stride: number };

/**
 * Decodes WKB into a GeoJSON geometry. Accepts little- and big-endian input,
 * ISO Z/M/ZM type codes and PostGIS EWKB flags (Z, M, SRID); extra ordinates
 * are dropped, so the result is always 2D. `POINT(NaN NaN)` decodes to an empty Point.
 * @throws Error when the bytes are truncated or the type code is unknown.
 */
export function decodeWkb(bytes: Uint8Array): Geometry {
  const cursor: Cursor = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  return readGeometry(cursor);
}

function readHeader(cursor: Cursor): Header {
  ensureBytes(cursor, 5);
  const { view } = cursor;
  const order = view.getUint8(cursor.offset);
  if (order > 1) throw new Error(`invalid WKB byte order ${order} at offset ${cursor.offset}`);
  const littleEndian = order === 1;
  const raw = view.getUint32(cursor.offset + 1, littleEndian);
  cursor.offset += 5;
  const iso = raw & 0xffff;
  const base = iso % 1000;
  const type = TYPE_NAMES[base - 1];
  const isoDims = Math.floor(iso / 1000);
  if (type === undefined || isoDims > 3) throw new Error(`unsupported WKB geometry type ${raw}`);
  const extra = (isoDims === 3 ? 2 : isoDims > 0 ? 1 : 0) + (raw & 0x80000000 ? 1 : 0) + (raw & 0x40000000 ? 1 : 0);
  if (raw & 0x20000000) {
    ensureBytes(cursor, 4);
    cursor.offset += 4;
  }
  return { littleEndian, type, stride: 16 + 8 * extra };
}

function ensureBytes(cursor: Cursor, count: number): void {
  if (cursor.offset + count > cursor.view.byteLength) {
    throw new Error(`WKB truncated: needs ${count} bytes at offset ${cursor.offset} of ${cursor.view.byteLength}`);
  }
}

function readCount(cursor: Cursor, littleEndian: boolean, minItemBytes: number): number {
  ensureBytes(cursor, 4);
  const count = cursor.view.getUint32(cursor.offset, littleEndian);
  cursor.offset += 4;
  ensureBytes(cursor, count * minItemBytes);
  return count;
}

function readPositions(cursor: Cursor, header: Header): Position[] {
  const { view } = cursor;
  const { littleEndian, stride } = header;
  const count = readCount(cursor, littleEndian, stride);
  const positions: Position[] = new Array(count);
  let offset = cursor.offset;
  for (let i = 0; i < count; i++) {
    positions[i] = [view.getFloat64(offset, littleEndian), view.getFloat64(offset + 8, littleEndian)];
    offset += stride;
  }
  cursor.offset = offset;
  return positions;
}

function readRings(cursor: Cursor, header: Header): Position[][] {
  const count = readCount(cursor, header.littleEndian, 4);
  const rings: Position[][] = new Array(count);
  for (let i = 0; i < count; i++) rings[i] = readPositions(cursor, header);
  return rings;
}

function readGeometry(cursor: Cursor): Geometry {
  const header = readHeader(cursor);
  switch (header.type) {
    case 'Point':
      return { type: 'Point', coordinates: readPoint(cursor, header) };
    case 'LineString':
      return { type: 'LineString', coordinates: readPositions(cursor, header) };
    case 'Polygon':
      return { type: 'Polygon', coordinates: readRings(cursor, header) };
    case 'MultiPoint':
      return { type: 'MultiPoint', coordinates: readParts(cursor, header, 'Point', readPoint) };
    case 'MultiLineString':
      return { type: 'MultiLineString', coordinates: readParts(cursor, header, 'LineString', readPositions) };
    case 'MultiPolygon':
      return { type: 'MultiPolygon', coordinates: readParts(cursor, header, 'Polygon', readRings) };
    case 'GeometryCollection': {
      const count = readCount(cursor, header.littleEndian, 5);
      const geometries: Geometry[] = new Array(count);
      for (let i = 0; i < count; i++) geometries[i] = readGeometry(cursor);
      return { type: 'GeometryCollection', geometries };
    }
  }
}

function readPoint(cursor: Cursor, header: Header): Position {
  ensureBytes(cursor, header.stride);
  const x = cursor.view.getFloat64(cursor.offset, header.littleEndian);
  const y = cursor.view.getFloat64(cursor.offset + 8, header.littleEndian);
  cursor.offset += header.stride;
  return Number.isNaN(x) && Number.isNaN(y) ? [] : [x, y];
}

function readParts<T>(cursor: Cursor, header: Header, type: GeometryType, readPart: (c: Cursor, h: Header) => T): T[] {
  const count = readCount(cursor, header.littleEndian, 5);
  const parts: T[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const partHeader = readHeader(cursor);
    if (partHeader.type !== type) throw new Error(`WKB Multi${type} holds a ${partHeader.type}`);
    parts[i] = readPart(cursor, partHeader);
  }
  return parts;
}

/** The bounding box of a geometry, or null when it has no positions. */
export function bboxOfGeometry(geometry: Geometry): BBox | null {
  const box: BBox = [Infinity, Infinity, -Infinity, -Infinity];
  extendBBox(box, geometry);
  return box[0] <= box[2] ? box : null;
}

function extendBBox(box: BBox, geometry: Geometry): void {
  switch (geometry.type) {
    case 'Point':
      extendWithPositions(box, geometry.coordinates.length === 0 ? [] : [geometry.coordinates]);
      return;
    case 'LineString':
    case 'MultiPoint':
      extendWithPositions(box, geometry.coordinates);
      return;
    case 'Polygon':
    case 'MultiLineString':
      for (const line of geometry.coordinates) extendWithPositions(box, line);
      return;
    case 'MultiPolygon':
      for (const rings of geometry.coordinates) for (const ring of rings) extendWithPositions(box, ring);
      return;
    case 'GeometryCollection':
      for (const part of geometry.geometries) extendBBox(box, part);
      return;
  }
}

function extendWithPositions(box: BBox, positions: Position[]): void {
  for (const position of positions) {
    const x = position[0] as number;
    const y = position[1] as number;
    if (x < box[0]) box[0] = x;
    if (y < box[1]) box[1] = y;
    if (x > box[2]) box[2] = x;
    if (y > box[3]) box[3] = y;
  }
}
