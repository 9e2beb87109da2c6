/**
 * Reads WKB straight into tile coordinates, sorted into points, lines and polygons.
 *
 * `decodeWkb` builds one array per position; tiles of 50,000 points spent most of their time there, so
 * this reader projects each position as it reads it and stores flat `[x0, y0, x1, y1, …]` arrays. Headers,
 * counts and bounds checks come from the shared reader of `wkb-reader.ts`.
 *
 * Edges go the short way round, as RFC 7946 reads them: a line or ring whose next position lies more than
 * 180° of longitude away is unwrapped (that position moved by ±360°), so Fiji's ring runs from 178.6° to
 * 180.2°, not across the map. Such a geometry may then reach past ±180°; `encodeTile` draws the world copies.
 */
import { MERCATOR_MAX_LATITUDE, projectX, projectY } from './mvt-tile-math.ts';
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
  /**
   * Polygons around a pole (Antarctica), already laid over three world copies and closed along the pole:
   * drawn once, never shifted by a world.
   */
  bands: number[][][];
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
  return { points: [], lines: [], polygons: [], bands: [], minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
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
  out.bands.length = 0;
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
    if (count > 0 && isPolar(rings[0] as number[])) addPolarBand(rings);
    else out.polygons.push(rings);
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

/**
 * Reads a line or ring, unwrapping longitudes so that consecutive positions are at most 180° apart. A ring
 * is closed, by its first position when the WKB leaves it open; one that winds around a pole then ends a
 * world away from where it starts (see `isPolar`).
 */
function readPositions(closeRing: boolean): number[] {
  const count = readPositionCount(reader);
  const { littleEndian, stride } = reader;
  const view = viewWkb(reader);
  const coords: number[] = [];
  const start = reader.offset;
  let offset = start;
  // Whole turns added to the longitudes, counted as an integer so that a ring that comes back ends exactly where it began.
  let turns = 0;
  let previous = NaN;
  let lon = NaN;
  let lat = NaN;
  for (let i = 0; i < count; i++) {
    lon = view.getFloat64(offset, littleEndian);
    lat = view.getFloat64(offset + 8, littleEndian);
    turns = turnsNear(lon, turns, previous);
    previous = lon + 360 * turns;
    pushPosition(previous, lat, coords);
    offset += stride;
  }
  reader.offset = offset;
  if (closeRing && count > 1) {
    const firstLon = view.getFloat64(start, littleEndian);
    const firstLat = view.getFloat64(start + 8, littleEndian);
    if (firstLon !== lon || firstLat !== lat) pushPosition(firstLon + 360 * turnsNear(firstLon, turns, previous), firstLat, coords);
  }
  return coords;
}

/** The whole turns that bring `lon` within 180° of the previous longitude, starting from `turns`. */
function turnsNear(lon: number, turns: number, previous: number): number {
  const step = lon + 360 * turns - previous;
  return step > 180 || step < -180 ? turns - Math.round(step / 360) : turns;
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

/** A closed ring that winds around a pole ends a world away from its start once unwrapped. */
function isPolar(ring: number[]): boolean {
  return ring.length >= 4 && ring[0] !== ring[ring.length - 2];
}

/**
 * A polygon whose exterior winds around a pole has no short-way reading: on the sphere it is the cap
 * beyond its coast (world-atlas's Antarctica: the coast, one edge from 180° back to -180°). Its Mercator
 * picture is a band as wide as the world, so the exterior is laid end to end over three worlds and closed
 * along the pole on its side of the equator, and its holes repeat in each world. world-atlas 50m writes
 * Antarctica as a ring at -89.999° (beyond the Mercator limit, so it has no area) with the coast as a hole
 * winding round the pole too: the land between them is the hole's cap, so that hole becomes the exterior.
 */
function addPolarBand(rings: number[][]): void {
  const { projection, out } = target;
  const top = projectY(projection, MERCATOR_MAX_LATITUDE);
  const bottom = projectY(projection, -MERCATOR_MAX_LATITUDE);
  let ring = rings[0] as number[];
  let holes = rings.slice(1);
  let exterior = trimPolarEnds(ring, top, bottom);
  if (exterior.length === 0) {
    const index = holes.findIndex(isPolar);
    if (index < 0) return;
    ring = holes[index] as number[];
    exterior = trimPolarEnds(ring, top, bottom);
    holes = holes.filter((_, i) => i !== index);
  }
  if (exterior.length === 0) return;
  const world = ring.at(-2)! - ring[0]!;
  let sumY = 0;
  for (let i = 1; i < exterior.length; i += 2) sumY += exterior[i] as number;
  const pole = sumY / (exterior.length / 2) > projection.oy ? bottom : top;
  const band: number[] = [];
  for (const shift of [-world, 0, world]) appendShifted(band, exterior, shift);
  band.push(band.at(-2)!, pole, band[0]!, pole, band[0]!, band[1]!);
  const polygon = [band];
  for (const hole of holes) {
    if (isPolar(hole)) continue;
    for (const shift of [-world, 0, world]) polygon.push(appendShifted([], hole, shift));
  }
  out.bands.push(polygon);
  for (let i = 0; i < band.length; i += 2) {
    const x = band[i] as number;
    const y = band[i + 1] as number;
    if (x < out.minX) out.minX = x;
    if (x > out.maxX) out.maxX = x;
    if (y < out.minY) out.minY = y;
    if (y > out.maxY) out.maxY = y;
  }
}

/** The ring without the positions at either end that lie on the world's top or bottom edge. */
function trimPolarEnds(ring: number[], top: number, bottom: number): number[] {
  const onEdge = (i: number) => ring[i + 1] === top || ring[i + 1] === bottom;
  let first = 0;
  let last = ring.length - 2;
  while (first <= last && onEdge(first)) first += 2;
  while (last >= first && onEdge(last)) last -= 2;
  return ring.slice(first, last + 2);
}

function appendShifted(into: number[], path: number[], shift: number): number[] {
  for (let i = 0; i < path.length; i += 2) into.push((path[i] as number) + shift, path[i + 1] as number);
  return into;
}
