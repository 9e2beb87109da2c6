/**
 * Types and extent of WKB geometries for the data dictionary and query bounds, read through the shared reader
 * of `wkb-reader.ts` without building GeoJSON objects. Validity is not judged here (DESIGN.md decision 11):
 * this pass only tells which geometries it could not read at all, and which are points it has proven valid,
 * so that `runtime/geometry-validity.ts` (GEOS) need not be asked about them.
 */
import {
  claimPosition,
  closeWkb,
  createWkbReader,
  isWkbEnd,
  openWkb,
  readFloat64,
  readPartCount,
  readPositionCount,
  readRingCount,
  readWkbHeader,
  viewWkb,
  WkbError,
} from './wkb-reader.ts';
import { addLongitude, addLonInterval, createLonExtent, finishLonExtent, type LonExtent } from './lon-extent.ts';

export { WKB_TYPE_NAMES } from './wkb-reader.ts';

/** The outcome of inspecting one geometry. Flags are absent, not false, when they do not apply. */
export interface WkbInspection {
  /** Base type code 1–7, or 0 when the bytes could not be read. */
  type: number;
  /**
   * `malformed` (an `InvalidGeometryReason` of schemas/file-metadata.ts) when the bytes are not one whole WKB
   * geometry, trailing bytes included; else undefined.
   */
  invalid: 'malformed' | undefined;
  /** A coordinate is NaN or infinite (other than an empty point's NaN NaN): for the validity library to name. */
  nonFinite?: true;
  /** The geometry has no position: an empty point (NaN NaN), line or polygon, or a collection of empties only. */
  empty?: true;
}

/**
 * A running extent: longitudes part by part on the circle (see `lon-extent.ts`), latitudes as least and
 * greatest. Grown by `inspectWkb` and `growExtent`, read by `finishExtent` or `finishLonLatExtent`.
 */
export interface Extent {
  /** Longitudes, part by part; its `min` and `max` are the planar xmin and xmax. */
  lon: LonExtent;
  /** Least y seen; +Infinity until one is. */
  ymin: number;
  /** Greatest y seen; −Infinity until one is. */
  ymax: number;
}

/** An empty extent, to be grown by `inspectWkb`. */
export function createExtent(): Extent {
  return { lon: createLonExtent(), ymin: Infinity, ymax: -Infinity };
}

// One reader and one running state for every call: inspection is synchronous and never re-entered. `box` is
// the box of the line or polygon being read; it joins the extent once the part has been read whole.
const reader = createWkbReader();
const box = { west: Infinity, south: Infinity, east: -Infinity, north: -Infinity };
const state = { extent: createExtent(), nonFinite: false };

/**
 * Reads a WKB geometry without building objects: tells its type, whether the bytes were readable (see
 * `readWkbHeader`; trailing bytes count as malformed), whether it is empty and whether a coordinate is not
 * finite, and grows `extent` by its finite coordinates. Z and M values (ISO codes 1000–3999 and the EWKB
 * flags) are skipped.
 */
export function inspectWkb(bytes: Uint8Array, extent: Extent): WkbInspection {
  openWkb(reader, bytes);
  state.extent = extent;
  state.nonFinite = false;
  try {
    const type = readWkbHeader(reader, 0, 0);
    const empty = readBody(type, 0);
    // The geometry itself was read, so its type is still worth counting.
    const inspection: WkbInspection = { type, invalid: isWkbEnd(reader) ? undefined : 'malformed' };
    if (state.nonFinite) inspection.nonFinite = true;
    if (empty) inspection.empty = true;
    return inspection;
  } catch (error) {
    if (error instanceof WkbError) return { type: 0, invalid: 'malformed' };
    throw error;
  } finally {
    closeWkb(reader);
  }
}

/**
 * Whether an inspected geometry is valid by the OGC rules without asking a geometry library: a readable
 * Point or MultiPoint with finite coordinates (the only rule GEOS and JTS apply to points).
 */
export function isProvenValid(inspection: WkbInspection): boolean {
  return (inspection.type === 1 || inspection.type === 4) && inspection.invalid === undefined && inspection.nonFinite === undefined;
}

/** Reads what follows a header of base type `type`; returns whether the geometry is empty (as GEOS's `isEmpty`). */
function readBody(type: number, depth: number): boolean {
  switch (type) {
    case 1: {
      const at = claimPosition(reader);
      const x = readFloat64(reader.bytes, at, reader.littleEndian);
      const y = readFloat64(reader.bytes, at + 8, reader.littleEndian);
      if (Number.isNaN(x) && Number.isNaN(y)) return true;
      addPoint(x, y);
      return false;
    }
    case 2: {
      const count = readPositionCount(reader);
      startPart();
      readPoints(count);
      endPart();
      return count === 0;
    }
    case 3: {
      const rings = readRingCount(reader);
      let shell = 0;
      startPart();
      for (let ring = 0; ring < rings; ring++) {
        const count = readPositionCount(reader);
        if (ring === 0) shell = count;
        readPoints(count);
      }
      endPart();
      return shell === 0;
    }
    default: {
      const parts = readPartCount(reader);
      let empty = true;
      for (let part = 0; part < parts; part++) {
        if (!readBody(readWkbHeader(reader, depth + 1, type), depth + 1)) empty = false;
      }
      return empty;
    }
  }
}

/** Reads `count` positions, already bounds-checked by their count, into the part being read. */
function readPoints(count: number): void {
  const { littleEndian, stride } = reader;
  const view = viewWkb(reader);
  let offset = reader.offset;
  for (let index = 0; index < count; index++) {
    addPosition(view.getFloat64(offset, littleEndian), view.getFloat64(offset + 8, littleEndian));
    offset += stride;
  }
  reader.offset = offset;
}

function startPart(): void {
  box.west = Infinity;
  box.south = Infinity;
  box.east = -Infinity;
  box.north = -Infinity;
}

/** Grows the extent by the line or polygon just read: its longitudes as one interval. */
function endPart(): void {
  if (box.west <= box.east) growExtent(state.extent, box.west, box.south, box.east, box.north);
}

/** Grows the part being read by a finite position; notes and skips a non-finite one. */
function addPosition(x: number, y: number): void {
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    state.nonFinite = true;
    return;
  }
  if (x < box.west) box.west = x;
  if (x > box.east) box.east = x;
  if (y < box.south) box.south = y;
  if (y > box.north) box.north = y;
}

/** Grows the extent by a finite point, a part of its own (a Point, or a member of a MultiPoint). */
function addPoint(x: number, y: number): void {
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    state.nonFinite = true;
    return;
  }
  const { extent } = state;
  addLongitude(extent.lon, x);
  if (y < extent.ymin) extent.ymin = y;
  if (y > extent.ymax) extent.ymax = y;
}

/** Grows the extent by the box of one part, `west` ≤ `east`: e.g. a row's bbox covering, read instead of its geometry. */
export function growExtent(extent: Extent, west: number, south: number, east: number, north: number): void {
  addLonInterval(extent.lon, west, east);
  if (south < extent.ymin) extent.ymin = south;
  if (north > extent.ymax) extent.ymax = north;
}

/**
 * The planar extent [xmin, ymin, xmax, ymax], for coordinates that are not longitude/latitude; null when it
 * never grew (no finite coordinate seen).
 */
export function finishExtent(extent: Extent): [number, number, number, number] | null {
  const { lon, ymin, ymax } = extent;
  return lon.min <= lon.max && ymin <= ymax ? [lon.min, ymin, lon.max, ymax] : null;
}

/**
 * The extent as longitude/latitude [west, south, east, north], with west > east when the geometries straddle
 * ±180° (RFC 7946 §5.2; see `finishLonExtent`); null when it never grew.
 */
export function finishLonLatExtent(extent: Extent): [number, number, number, number] | null {
  const lon = finishLonExtent(extent.lon);
  return lon && extent.ymin <= extent.ymax ? [lon[0], extent.ymin, lon[1], extent.ymax] : null;
}
