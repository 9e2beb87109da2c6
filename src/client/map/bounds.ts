/**
 * Framing math for the map, free of MapLibre: bounds that cross the
 * antimeridian, single points, and the extent of a FeatureCollection.
 */
import type { FeatureCollection, Geometry, Position } from 'geojson';

/** [west, south, east, north] in WGS84; west > east means the box crosses the antimeridian (RFC 7946 §5.2). */
export type Bounds = [number, number, number, number];

/** How the camera shows a bounds: a box to fit, or a point to centre at a fixed zoom. */
export type CameraTarget =
  | { kind: 'box'; southWest: [number, number]; northEast: [number, number] }
  | { kind: 'point'; center: [number, number] };

/** What "the whole world" frames: Web Mercator cannot show the poles, and Antarctica below 62°S is mostly empty area. */
export const WORLD_FRAME: Bounds = [-180, -62, 180, 82];

/** Web Mercator stops here; a box beyond it would ask for an infinite height. */
const MAX_LATITUDE = 85.0511;

/** A box narrower and lower than this (degrees, about 10 m) is treated as a point. */
const POINT_SPAN = 1e-4;

/** True for four finite numbers with latitudes in [-90, 90], south ≤ north, and longitudes in [-180, 180]. */
export function isValidBounds(bounds: readonly number[] | null | undefined): bounds is Bounds {
  if (!bounds || bounds.length !== 4 || !bounds.every(Number.isFinite)) return false;
  const [west, south, east, north] = bounds as Bounds;
  return south <= north && south >= -90 && north <= 90 && Math.abs(west) <= 180 && Math.abs(east) <= 180;
}

function clampLatitude(latitude: number): number {
  return Math.max(-MAX_LATITUDE, Math.min(MAX_LATITUDE, latitude));
}

/**
 * The camera target for a bounds: a box whose east is unwrapped past 180°
 * when the bounds cross the antimeridian (MapLibre draws world copies), or a
 * point when the box has no size to fit. Invalid bounds frame the world.
 *
 * @example toCameraTarget([170, -20, -170, 10]) // box from [170, -20] to [190, 10]
 */
export function toCameraTarget(bounds: Bounds | null | undefined): CameraTarget {
  const [west, south, east, north] = isValidBounds(bounds) ? bounds : WORLD_FRAME;
  const unwrappedEast = west > east ? east + 360 : east;
  if (unwrappedEast - west < POINT_SPAN && north - south < POINT_SPAN) {
    return { kind: 'point', center: [(west + unwrappedEast) / 2, clampLatitude((south + north) / 2)] };
  }
  return { kind: 'box', southWest: [west, clampLatitude(south)], northEast: [unwrappedEast, clampLatitude(north)] };
}

/** The closed ring of a bounds box, east unwrapped past 180° when it crosses, latitudes within Web Mercator. */
export function toBoxRing(bounds: Bounds): Position[] {
  const [west, south, east, north] = bounds;
  const e = west > east ? east + 360 : east;
  const [s, n] = [clampLatitude(south), clampLatitude(north)];
  return [[west, s], [e, s], [e, n], [west, n], [west, s]];
}

function listParts(geometry: Geometry | null): Position[][] {
  if (geometry === null) return [];
  switch (geometry.type) {
    case 'Point': return [[geometry.coordinates]];
    case 'MultiPoint': return [geometry.coordinates];
    case 'LineString': return [geometry.coordinates];
    case 'MultiLineString': return geometry.coordinates;
    case 'Polygon': return geometry.coordinates.slice(0, 1);
    case 'MultiPolygon': return geometry.coordinates.map((rings) => rings[0] ?? []);
    case 'GeometryCollection': return geometry.geometries.flatMap(listParts);
  }
}

type Span = { min: number; max: number };

/**
 * The bounds of every feature, crossing the antimeridian when that box is
 * narrower: each part (line, exterior ring, points) covers its own longitude
 * span (RFC 7946 data is cut at ±180°), spans are marked in 1° buckets, and
 * the widest empty run of buckets is the gap such a box leaves out. Null when
 * there are no coordinates.
 */
export function boundsOfFeatures(collection: FeatureCollection): Bounds | null {
  const covered = new Uint8Array(360);
  const spans: Span[] = [];
  let south = Infinity;
  let north = -Infinity;
  for (const part of collection.features.flatMap((feature) => listParts(feature.geometry))) {
    const span: Span = { min: Infinity, max: -Infinity };
    for (const [x = NaN, y = NaN] of part) {
      if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
      span.min = Math.min(span.min, x);
      span.max = Math.max(span.max, x);
      south = Math.min(south, y);
      north = Math.max(north, y);
    }
    if (span.min > span.max) continue;
    spans.push(span);
    for (let bucket = toBucket(span.min); bucket <= toBucket(span.max); bucket++) covered[bucket] = 1;
  }
  if (spans.length === 0) return null;
  // Loops, not Math.min(...spread): a large result has more parts than a call may take arguments.
  let [west, east, crossingWest, crossingEast] = [Infinity, -Infinity, Infinity, -Infinity];
  const gap = findWidestGap(covered);
  for (const span of spans) {
    west = Math.min(west, span.min);
    east = Math.max(east, span.max);
    if (gap !== null && span.max < gap.start - 180) crossingEast = Math.max(crossingEast, span.max);
    if (gap !== null && span.min >= gap.end + 1 - 180) crossingWest = Math.min(crossingWest, span.min);
  }
  if (gap === null) return [west, south, east, north];
  // The box that crosses ±180° leaves out the inner gap; the plain one leaves out the gap at ±180°.
  const innerGap = crossingWest - crossingEast;
  const outerGap = 180 - east + (west + 180);
  return Number.isFinite(innerGap) && innerGap > outerGap ? [crossingWest, south, crossingEast, north] : [west, south, east, north];
}

function toBucket(longitude: number): number {
  return Math.max(0, Math.min(359, Math.floor(longitude + 180)));
}

/** The longest run of empty buckets strictly inside [0, 359]: a run touching either end is part of the ±180° gap. */
function findWidestGap(covered: Uint8Array): { start: number; end: number } | null {
  let best: { start: number; end: number } | null = null;
  let start = -1;
  for (let bucket = 0; bucket <= covered.length; bucket++) {
    const empty = bucket < covered.length && covered[bucket] === 0;
    if (empty && start === -1) start = bucket;
    if (!empty && start !== -1) {
      const inside = start > 0 && bucket < covered.length;
      if (inside && (best === null || bucket - 1 - start > best.end - best.start)) best = { start, end: bucket - 1 };
      start = -1;
    }
  }
  return best;
}
