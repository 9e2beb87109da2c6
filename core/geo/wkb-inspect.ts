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

/** A running extent: [xmin, ymin, xmax, ymax], starting at ±Infinity. */
export type Extent = [number, number, number, number];

/** An empty extent, to be grown by `inspectWkb`. */
export function createExtent(): Extent {
  return [Infinity, Infinity, -Infinity, -Infinity];
}

// One reader and one running state for every call: inspection is synchronous and never re-entered.
const reader = createWkbReader();
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
      addPosition(x, y);
      return false;
    }
    case 2: {
      const count = readPositionCount(reader);
      readPoints(count);
      return count === 0;
    }
    case 3: {
      const rings = readRingCount(reader);
      let shell = 0;
      for (let ring = 0; ring < rings; ring++) {
        const count = readPositionCount(reader);
        if (ring === 0) shell = count;
        readPoints(count);
      }
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

/** Reads `count` positions, already bounds-checked by their count, into the extent. */
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

/** Grows the extent by a finite position; notes and skips a non-finite one. */
function addPosition(x: number, y: number): void {
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    state.nonFinite = true;
    return;
  }
  const { extent } = state;
  if (x < extent[0]) extent[0] = x;
  if (y < extent[1]) extent[1] = y;
  if (x > extent[2]) extent[2] = x;
  if (y > extent[3]) extent[3] = y;
}

/** The extent, or null when it never grew (no finite coordinate seen). */
export function finishExtent(extent: Extent): [number, number, number, number] | null {
  return extent[0] <= extent[2] && extent[1] <= extent[3] ? [extent[0], extent[1], extent[2], extent[3]] : null;
}
