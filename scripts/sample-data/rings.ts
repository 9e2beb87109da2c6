/**
 * Closing and de-duplicating rings, and dropping what collapses: the
 * quantized topologies repeat points (North Korea's 110m outline has a ring of
 * four identical points) and us-atlas leaves one ring open.
 */
import type { Geometry, Position } from '../../core/geo/wkb.ts';

/**
 * Rings with less area than this (square degrees) are slivers. world-atlas
 * and us-atlas snap vertices to a grid whose half cell is over 1e-6 square
 * degrees, so no real ring is this small; what is left is a ring folded onto
 * a line, or the noise GEOS MakeValid leaves where it nodes near-coincident
 * crossings (areas around 1e-13).
 */
export const SLIVER_AREA = 1e-9;

/** What cleaning did to one geometry, for the notes. */
export type CleanCounts = { repeated: number; closed: number; droppedRings: number; droppedPolygons: number; reversed: number };

/** Counts that are all zero. */
export function createCleanCounts(): CleanCounts {
  return { repeated: 0, closed: 0, droppedRings: 0, droppedPolygons: 0, reversed: 0 };
}

/** True when two positions have the same x and y. */
export function isSamePosition(a: Position | undefined, b: Position | undefined): boolean {
  return a !== undefined && b !== undefined && a[0] === b[0] && a[1] === b[1];
}

/** The positions without consecutive repeats. */
export function removeRepeatedPositions(positions: Position[]): Position[] {
  return positions.filter((position, index) => index === 0 || !isSamePosition(position, positions[index - 1]));
}

/** The planar signed area of a closed ring (shoelace): negative when it runs clockwise. */
export function signedArea(ring: Position[]): number {
  let sum = 0;
  for (let i = 1; i < ring.length; i++) {
    const [x0 = 0, y0 = 0] = ring[i - 1] ?? [];
    const [x1 = 0, y1 = 0] = ring[i] ?? [];
    sum += x0 * y1 - x1 * y0;
  }
  return sum / 2;
}

/** A ring without repeated points, closed; null when fewer than 4 positions (3 distinct) or no area is left. */
export function cleanRing(ring: Position[], counts: CleanCounts): Position[] | null {
  const unique = removeRepeatedPositions(ring);
  counts.repeated += ring.length - unique.length;
  const first = unique[0];
  if (first !== undefined && !isSamePosition(first, unique[unique.length - 1])) {
    counts.closed++;
    unique.push([...first]);
  }
  if (unique.length >= 4 && Math.abs(signedArea(unique)) >= SLIVER_AREA) return unique;
  counts.droppedRings++;
  return null;
}

function orientRing(ring: Position[], clockwise: boolean, counts: CleanCounts): Position[] {
  if (signedArea(ring) < 0 === clockwise) return ring;
  counts.reversed++;
  return ring.toReversed();
}

/**
 * A polygon with clean rings, the exterior clockwise and holes
 * counter-clockwise (d3's winding, which the sources follow but for a few
 * rings); null (and counted) when its exterior ring collapsed, holes and all.
 */
export function cleanPolygon(rings: Position[][], counts: CleanCounts): Position[][] | null {
  const [exterior, ...holes] = rings.map((ring) => cleanRing(ring, counts));
  if (exterior === null || exterior === undefined) {
    counts.droppedPolygons++;
    counts.droppedRings += holes.filter((hole) => hole !== null).length;
    return null;
  }
  const kept = holes.filter((hole) => hole !== null).map((hole) => orientRing(hole, false, counts));
  return [orientRing(exterior, true, counts), ...kept];
}

/** A Polygon or MultiPolygon with every polygon cleaned; null when none is left. */
export function cleanPolygonal(geometry: Geometry, counts: CleanCounts): Geometry | null {
  if (geometry.type !== 'Polygon' && geometry.type !== 'MultiPolygon') throw new Error(`expected polygons, got ${geometry.type}`);
  const polygons = geometry.type === 'Polygon' ? [geometry.coordinates] : geometry.coordinates;
  const clean = polygons.map((rings) => cleanPolygon(rings, counts)).filter((rings) => rings !== null);
  if (clean.length === 0) return null;
  if (geometry.type === 'Polygon') return { type: 'Polygon', coordinates: clean[0] ?? [] };
  return { type: 'MultiPolygon', coordinates: clean };
}

/** A line without repeated points; null when fewer than 2 distinct positions are left. */
export function cleanLine(line: Position[], counts: CleanCounts): Position[] | null {
  const unique = removeRepeatedPositions(line);
  counts.repeated += line.length - unique.length;
  return unique.length >= 2 ? unique : null;
}
