/** Names of the WKB geometry types by their base code (1–7). */
export const WKB_TYPE_NAMES = ['', 'Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon', 'GeometryCollection'] as const;

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

class Malformed extends Error {}

/**
 * Reads a WKB geometry without building objects: tells its type, whether it is valid, and grows `extent` by
 * its finite coordinates. Invalid means: malformed bytes; a non-finite coordinate; a line with fewer than two
 * points or a ring with fewer than four; a ring whose last point differs from its first; or an empty geometry,
 * whole or as a part of a multi-geometry (an empty point is NaN, NaN). Self-intersections are not checked.
 * Z and M values (ISO codes 1000–3999 and the EWKB flags) are skipped.
 */
export function inspectWkb(bytes: Uint8Array, extent: Extent): WkbInspection {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  let invalid: InvalidReason | undefined;
  const flag = (reason: InvalidReason) => {
    invalid ??= reason;
  };
  const need = (count: number) => {
    if (offset + count > bytes.byteLength) throw new Malformed();
  };
  const readGeometry = (depth: number): { type: number; empty: boolean } => {
    if (depth > 32) throw new Malformed();
    need(5);
    const little = view.getUint8(offset) === 1;
    const raw = view.getUint32(offset + 1, little);
    offset += 5;
    const ewkbZ = (raw & 0x80000000) !== 0;
    const ewkbM = (raw & 0x40000000) !== 0;
    if ((raw & 0x20000000) !== 0) {
      need(4);
      offset += 4;
    }
    const iso = raw & 0x0fffffff;
    const type = iso % 1000;
    const dimensions = 2 + (ewkbZ || (iso >= 1000 && iso < 2000) || iso >= 3000 ? 1 : 0) + (ewkbM || iso >= 2000 ? 1 : 0);
    const readPoints = (count: number) => {
      need(count * dimensions * 8);
      let firstX = 0;
      let firstY = 0;
      let lastX = 0;
      let lastY = 0;
      for (let index = 0; index < count; index++) {
        const x = view.getFloat64(offset, little);
        const y = view.getFloat64(offset + 8, little);
        offset += dimensions * 8;
        if (!Number.isFinite(x) || !Number.isFinite(y)) {
          flag('non-finite');
          continue;
        }
        if (x < extent[0]) extent[0] = x;
        if (y < extent[1]) extent[1] = y;
        if (x > extent[2]) extent[2] = x;
        if (y > extent[3]) extent[3] = y;
        if (index === 0) {
          firstX = x;
          firstY = y;
        }
        lastX = x;
        lastY = y;
      }
      return firstX === lastX && firstY === lastY;
    };
    const readCount = () => {
      need(4);
      const count = view.getUint32(offset, little);
      offset += 4;
      return count;
    };
    switch (type) {
      case 1: {
        need(dimensions * 8);
        const x = view.getFloat64(offset, little);
        const y = view.getFloat64(offset + 8, little);
        if (Number.isNaN(x) && Number.isNaN(y)) {
          offset += dimensions * 8;
          return { type, empty: true };
        }
        readPoints(1);
        return { type, empty: false };
      }
      case 2: {
        const count = readCount();
        if (count === 1) flag('too-few-points');
        readPoints(count);
        return { type, empty: count === 0 };
      }
      case 3: {
        const rings = readCount();
        for (let ring = 0; ring < rings; ring++) {
          const count = readCount();
          if (count > 0 && count < 4) flag('too-few-points');
          const closed = readPoints(count);
          if (count >= 2 && !closed) flag('unclosed-ring');
          if (count === 0) flag('empty');
        }
        return { type, empty: rings === 0 };
      }
      case 4:
      case 5:
      case 6:
      case 7: {
        const parts = readCount();
        for (let part = 0; part < parts; part++) {
          if (readGeometry(depth + 1).empty) flag('empty');
        }
        return { type, empty: parts === 0 };
      }
      default:
        throw new Malformed();
    }
  };
  try {
    const { type, empty } = readGeometry(0);
    if (empty) flag('empty');
    if (offset !== bytes.byteLength) flag('malformed');
    return { type, invalid };
  } catch (error) {
    if (error instanceof Malformed || error instanceof RangeError) return { type: 0, invalid: 'malformed' };
    throw error;
  }
}

/** The extent, or null when it never grew (no finite coordinate seen). */
export function finishExtent(extent: Extent): [number, number, number, number] | null {
  return extent[0] <= extent[2] && extent[1] <= extent[3] ? [extent[0], extent[1], extent[2], extent[3]] : null;
}
