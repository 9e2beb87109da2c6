/**
 * Validity and extent of WKB geometries for the data dictionary and query bounds, read through the shared
 * reader of `wkb-reader.ts` without building GeoJSON objects.
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

/** Why a geometry is invalid; see README "Data dictionary". */
export type InvalidReason = 'malformed' | 'non-finite' | 'too-few-points' | 'unclosed-ring' | 'empty';

/** The outcome of inspecting one geometry. */
export interface WkbInspection {
  /** Base type code 1–7, or 0 when the bytes could not be read. */
  type: number;
  /** The first problem found, or undefined for a valid geometry. */
  invalid: InvalidReason | undefined;
}

/** A running extent: [xmin, ymin, xmax, ymax], starting at ±Infinity. */
export type Extent = [number, number, number, number];

/** An empty extent, to be grown by `inspectWkb`. */
export function createExtent(): Extent {
  return [Infinity, Infinity, -Infinity, -Infinity];
}

// One reader and one running state for every call: inspection is synchronous and never re-entered.
const reader = createWkbReader();
const state: { extent: Extent; invalid: InvalidReason | undefined } = { extent: createExtent(), invalid: undefined };

/**
 * Reads a WKB geometry without building objects: tells its type, whether it is valid, and grows `extent` by
 * its finite coordinates. Invalid means: malformed bytes (see `readWkbHeader`, and trailing bytes); a
 * non-finite coordinate; a line with fewer than two points or a ring with fewer than four; a ring whose last
 * point differs from its first; or an empty geometry, whole or as a part of a multi-geometry (an empty point
 * is NaN, NaN). Self-intersections are not checked. Z and M values (ISO codes 1000–3999 and the EWKB flags)
 * are skipped.
 */
export function inspectWkb(bytes: Uint8Array, extent: Extent): WkbInspection {
  openWkb(reader, bytes);
  state.extent = extent;
  state.invalid = undefined;
  try {
    const type = readWkbHeader(reader, 0, 0);
    if (readBody(type, 0)) flag('empty');
    // The geometry itself was read, so its type is still worth counting.
    if (!isWkbEnd(reader)) flag('malformed');
    return { type, invalid: state.invalid };
  } catch (error) {
    if (error instanceof WkbError) return { type: 0, invalid: 'malformed' };
    throw error;
  } finally {
    closeWkb(reader);
  }
}

function flag(reason: InvalidReason): void {
  state.invalid ??= reason;
}

/** Reads what follows a header of base type `type`; returns whether the geometry is empty. */
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
      if (count === 1) flag('too-few-points');
      readPoints(count);
      return count === 0;
    }
    case 3: {
      const rings = readRingCount(reader);
      for (let ring = 0; ring < rings; ring++) {
        const count = readPositionCount(reader);
        if (count > 0 && count < 4) flag('too-few-points');
        const closed = readPoints(count);
        if (count >= 2 && !closed) flag('unclosed-ring');
        if (count === 0) flag('empty');
      }
      return rings === 0;
    }
    default: {
      const parts = readPartCount(reader);
      for (let part = 0; part < parts; part++) {
        if (readBody(readWkbHeader(reader, depth + 1, type), depth + 1)) flag('empty');
      }
      return parts === 0;
    }
  }
}

/** Reads `count` positions, already bounds-checked by their count, into the extent; true when the first finite one equals the last. */
function readPoints(count: number): boolean {
  const { littleEndian, stride } = reader;
  const view = viewWkb(reader);
  let offset = reader.offset;
  let firstX = 0;
  let firstY = 0;
  let lastX = 0;
  let lastY = 0;
  for (let index = 0; index < count; index++) {
    const x = view.getFloat64(offset, littleEndian);
    const y = view.getFloat64(offset + 8, littleEndian);
    offset += stride;
    if (!addPosition(x, y)) continue;
    if (index === 0) {
      firstX = x;
      firstY = y;
    }
    lastX = x;
    lastY = y;
  }
  reader.offset = offset;
  return firstX === lastX && firstY === lastY;
}

/** Grows the extent by a finite position; flags and skips a non-finite one, returning false. */
function addPosition(x: number, y: number): boolean {
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    flag('non-finite');
    return false;
  }
  const { extent } = state;
  if (x < extent[0]) extent[0] = x;
  if (y < extent[1]) extent[1] = y;
  if (x > extent[2]) extent[2] = x;
  if (y > extent[3]) extent[3] = y;
  return true;
}

/** The extent, or null when it never grew (no finite coordinate seen). */
export function finishExtent(extent: Extent): [number, number, number, number] | null {
  return extent[0] <= extent[2] && extent[1] <= extent[3] ? [extent[0], extent[1], extent[2], extent[3]] : null;
}
