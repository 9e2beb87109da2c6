/**
 * Reads WKB straight into tile coordinates, sorted into points, lines and polygons.
 *
 * `decodeWkb` builds one array per position; tiles of 50,000 points spent most of their time there, so
 * this reader projects each position as it reads it and stores flat `[x0, y0, x1, y1, …]` arrays. Headers,
 * counts and bounds checks come from the shared reader of `wkb-reader.ts`.
 */
import { projectX, projectY } from './mvt-tile-math.ts';
import type { TileProjection } from './mvt-tile-math.ts';
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

// One reader and one destination for every call: reading is synchronous, and a fresh object per feature
// showed up in GC time.
const reader = createWkbReader();
const target: { projection: TileProjection; out: ProjectedGeometry } = { projection: { kx: 0, ox: 0, ky: 0, oy: 0 }, out: createProjectedGeometry() };

/** An empty geometry to be filled by `readProjectedWkb`, reusable from one feature to the next. */
export function createProjectedGeometry(): ProjectedGeometry {
  return { points: [], lines: [], polygons: [], minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
}

/**
 * Fills `out` with the projected parts of a WKB geometry (ISO or EWKB, either byte order; Z and M are
 * dropped). The arrays of `out` are emptied and refilled, so read a feature's parts before the next call.
 * A GeometryCollection's members land in the bucket of their type. An empty point
 * (`POINT(NaN NaN)`) is left out.
 * @returns false when the bytes are malformed (as `decodeWkb` would throw) or hold another non-finite
 * coordinate; `out` is then unusable.
 */
export function readProjectedWkb(bytes: Uint8Array, projection: TileProjection, out: ProjectedGeometry): boolean {
  out.points.length = 0;
  out.lines.length = 0;
  out.polygons.length = 0;
  out.minX = out.minY = Infinity;
  out.maxX = out.maxY = -Infinity;
  if (!(bytes instanceof Uint8Array)) return false;
  openWkb(reader, bytes);
  target.projection = projection;
  target.out = out;
  try {
    readGeometry(0, 0);
    assertWkbEnd(reader);
    return true;
  } catch {
    return false;
  } finally {
    closeWkb(reader);
  }
}

function readGeometry(depth: number, parentType: number): void {
  const type = readWkbHeader(reader, depth, parentType);
  const { out } = target;
  if (type === 1) readPoint();
  else if (type === 2) out.lines.push(readPositions(false));
  else if (type === 3) {
    const count = readRingCount(reader);
    const rings: number[][] = [];
    for (let i = 0; i < count; i++) rings.push(readPositions(true));
    out.polygons.push(rings);
  } else {
    const count = readPartCount(reader);
    for (let i = 0; i < count; i++) readGeometry(depth + 1, type);
  }
}

function readPoint(): void {
  const at = claimPosition(reader);
  const lon = readFloat64(reader.bytes, at, reader.littleEndian);
  const lat = readFloat64(reader.bytes, at + 8, reader.littleEndian);
  if (Number.isNaN(lon) && Number.isNaN(lat)) return;
  pushPosition(lon, lat, target.out.points);
}

function readPositions(closeRing: boolean): number[] {
  const count = readPositionCount(reader);
  const { littleEndian, stride } = reader;
  const view = viewWkb(reader);
  const coords: number[] = [];
  let offset = reader.offset;
  for (let i = 0; i < count; i++) {
    pushPosition(view.getFloat64(offset, littleEndian), view.getFloat64(offset + 8, littleEndian), coords);
    offset += stride;
  }
  reader.offset = offset;
  const n = coords.length;
  if (closeRing && n >= 2 && (coords[0] !== coords[n - 2] || coords[1] !== coords[n - 1])) {
    coords.push(coords[0] as number, coords[1] as number);
  }
  return coords;
}

function pushPosition(lon: number, lat: number, into: number[]): void {
  if (!Number.isFinite(lon) || !Number.isFinite(lat)) throw new RangeError('non-finite coordinate');
  const { projection, out } = target;
  const x = projectX(projection, lon);
  const y = projectY(projection, lat);
  if (x < out.minX) out.minX = x;
  if (x > out.maxX) out.maxX = x;
  if (y < out.minY) out.minY = y;
  if (y > out.maxY) out.maxY = y;
  into.push(x, y);
}
