/**
 * Well-known binary (OGC Simple Features / ISO WKB) encoding and decoding for
 * 2D GeoJSON geometries, plus bounding boxes.
 *
 * Decoding goes through the shared reader of `wkb-reader.ts` and allocates nothing but the output arrays.
 */
import {
  assertWkbEnd,
  claimPosition,
  closeWkb,
  createWkbReader,
  openWkb,
  readFloat64,
  readPartCount,
  readPositionCount,
  readRingCount,
  readWkbHeader,
  viewWkb,
} from './wkb-reader.ts';

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

// One reader for every call: decoding is synchronous and never re-entered.
const reader = createWkbReader();

/**
 * Decodes WKB into a GeoJSON geometry. Accepts little- and big-endian input,
 * ISO Z/M/ZM type codes and PostGIS EWKB flags (Z, M, SRID); extra ordinates
 * are dropped, so the result is always 2D. `POINT(NaN NaN)` decodes to an empty Point.
 * @throws WkbError (of `wkb-reader.ts`) when the bytes are truncated or followed by trailing bytes, the type
 * code is unknown, a multi-geometry holds another type, or collections nest more than 32 deep.
 */
export function decodeWkb(bytes: Uint8Array): Geometry {
  openWkb(reader, bytes);
  try {
    const geometry = readGeometry(0, 0);
    assertWkbEnd(reader);
    return geometry;
  } finally {
    closeWkb(reader);
  }
}

function readGeometry(depth: number, parentType: number): Geometry {
  switch (readWkbHeader(reader, depth, parentType)) {
    case 1:
      return { type: 'Point', coordinates: readPoint() };
    case 2:
      return { type: 'LineString', coordinates: readPositions() };
    case 3:
      return { type: 'Polygon', coordinates: readRings() };
    case 4:
      return { type: 'MultiPoint', coordinates: readParts(depth, 4, readPoint) };
    case 5:
      return { type: 'MultiLineString', coordinates: readParts(depth, 5, readPositions) };
    case 6:
      return { type: 'MultiPolygon', coordinates: readParts(depth, 6, readRings) };
    default: {
      const count = readPartCount(reader);
      const geometries: Geometry[] = new Array(count);
      for (let i = 0; i < count; i++) geometries[i] = readGeometry(depth + 1, 7);
      return { type: 'GeometryCollection', geometries };
    }
  }
}

function readPoint(): Position {
  const at = claimPosition(reader);
  const x = readFloat64(reader.bytes, at, reader.littleEndian);
  const y = readFloat64(reader.bytes, at + 8, reader.littleEndian);
  return Number.isNaN(x) && Number.isNaN(y) ? [] : [x, y];
}

function readPositions(): Position[] {
  const count = readPositionCount(reader);
  const { littleEndian, stride } = reader;
  const view = viewWkb(reader);
  const positions: Position[] = new Array(count);
  let offset = reader.offset;
  for (let i = 0; i < count; i++) {
    positions[i] = [view.getFloat64(offset, littleEndian), view.getFloat64(offset + 8, littleEndian)];
    offset += stride;
  }
  reader.offset = offset;
  return positions;
}

function readRings(): Position[][] {
  const count = readRingCount(reader);
  const rings: Position[][] = new Array(count);
  for (let i = 0; i < count; i++) rings[i] = readPositions();
  return rings;
}

function readParts<T>(depth: number, type: number, readPart: () => T): T[] {
  const count = readPartCount(reader);
  const parts: T[] = new Array(count);
  for (let i = 0; i < count; i++) {
    readWkbHeader(reader, depth + 1, type);
    parts[i] = readPart();
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
