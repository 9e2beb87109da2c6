/**
 * Splits rings and lines at the antimeridian (RFC 7946 §3.1.9) with d3-geo's
 * antimeridian clipping, the clip world-atlas' own renderer (d3) applies.
 *
 * world-atlas and us-atlas are spherical data: an edge from 179° to -179° is
 * 2° long. Read as planar lon/lat it is 358° long, and planar clients (GEOS,
 * MapLibre) draw a band across the map. d3-geo cuts such edges where their
 * great circle meets ±180° and closes polygons along the meridian, through
 * the pole for rings that enclose one (Antarctica). Only polygons and lines
 * with an edge longer than 180° of longitude are clipped; the rest pass
 * through untouched. Vertices d3 keeps come back bit for bit (the radian
 * round trip is undone by lookup); only the cut points are new.
 */
import { geoClipAntimeridian, geoContains } from 'd3-geo';
import type { GeoStream } from 'd3-geo';
import type { Position } from '../../core/geo/wkb.ts';
import { isSamePosition, signedArea } from './rings.ts';

const RADIANS = Math.PI / 180;
const DEGREES = 180 / Math.PI;
/** d3-geo moves a vertex on ±180° next to a cut by π × its epsilon (1e-6) radians; such a vertex is looked up within this. */
const NUDGE_RADIANS = 1e-5;

/** True when a run of positions has an edge longer than 180° of longitude. */
export function crossesAntimeridian(positions: Position[]): boolean {
  for (let i = 1; i < positions.length; i++) {
    if (Math.abs((positions[i]?.[0] ?? 0) - (positions[i - 1]?.[0] ?? 0)) > 180) return true;
  }
  return false;
}

/** Radians of the input vertices → the input vertices, so kept vertices are not rounded by the trip. */
type VertexIndex = Map<string, Position>;

function streamPositions(stream: GeoStream, positions: Position[], index: VertexIndex): void {
  stream.lineStart();
  for (const position of positions) {
    const lambda = (position[0] ?? 0) * RADIANS;
    const phi = (position[1] ?? 0) * RADIANS;
    index.set(`${lambda},${phi}`, position);
    stream.point(lambda, phi);
  }
  stream.lineEnd();
}

function restorePosition(lambda: number, phi: number, index: VertexIndex): Position {
  const kept = index.get(`${lambda},${phi}`);
  if (kept !== undefined) return kept;
  if (Math.abs(Math.abs(lambda) - Math.PI) <= NUDGE_RADIANS) {
    const onMeridian = index.get(`${Math.sign(lambda) * Math.PI},${phi}`);
    if (onMeridian !== undefined) return onMeridian;
  }
  return [lambda * DEGREES, phi * DEGREES];
}

/** A d3 stream sink that collects each line or ring as positions in degrees. */
function collectLines(index: VertexIndex): { sink: GeoStream; lines: Position[][] } {
  const lines: Position[][] = [];
  let line: Position[] = [];
  const sink: GeoStream = {
    point: (lambda, phi) => void line.push(restorePosition(lambda, phi, index)),
    lineStart: () => void (line = []),
    lineEnd: () => void lines.push(line),
    polygonStart: () => {},
    polygonEnd: () => {},
    sphere: () => {},
  };
  return { sink, lines };
}

function closeRing(ring: Position[]): Position[] {
  return isSamePosition(ring[0], ring[ring.length - 1]) ? ring : [...ring, ring[0] as Position];
}

/**
 * Splits one polygon (rings as in GeoJSON, closed) into the polygons d3-geo
 * clips it to. Rings come back closed; exteriors are the clockwise rings
 * (d3's winding, which the sources keep), and each hole goes to the exterior
 * d3-geo says contains it.
 */
export function splitPolygonAtAntimeridian(rings: Position[][]): Position[][][] {
  if (!rings.some(crossesAntimeridian)) return [rings];
  const index: VertexIndex = new Map();
  const { sink, lines } = collectLines(index);
  const clip = geoClipAntimeridian(sink);
  clip.polygonStart();
  for (const ring of rings) streamPositions(clip, ring.slice(0, -1), index);
  clip.polygonEnd();
  const closed = lines.filter((ring) => ring.length > 0).map(closeRing);
  const exteriors = closed.filter((ring) => signedArea(ring) < 0).map((ring) => [ring]);
  for (const hole of closed.filter((ring) => signedArea(ring) >= 0)) {
    const owner =
      exteriors.length === 1
        ? exteriors[0]
        : exteriors.find(([exterior]) => geoContains({ type: 'Polygon', coordinates: [exterior ?? []] }, hole[0] as [number, number]));
    if (owner === undefined) throw new Error(`a hole at ${hole[0]} has no exterior after the antimeridian cut`);
    owner.push(hole);
  }
  return exteriors;
}

/**
 * Splits one line into the lines d3-geo clips it to. A closed line (a coast
 * around an island) cut in several places has its last and first pieces
 * joined again, since they meet at its start, not at the antimeridian.
 */
export function splitLineAtAntimeridian(positions: Position[]): Position[][] {
  if (!crossesAntimeridian(positions)) return [positions];
  const index: VertexIndex = new Map();
  const { sink, lines } = collectLines(index);
  streamPositions(geoClipAntimeridian(sink), positions, index);
  if (isSamePosition(positions[0], positions[positions.length - 1]) && lines.length > 1) {
    const head = lines.shift() ?? [];
    const tail = lines.pop() ?? [];
    lines.push([...tail, ...head.slice(1)]);
  }
  return lines;
}
