/**
 * Turns a projected geometry into MVT geometry commands, one feature per geometry type: clip to the
 * buffered tile, simplify, snap to integers, fix ring winding, then delta- and zigzag-encode.
 *
 * The world repeats east and west, as geojson-vt's `wrap` draws it: a geometry is also drawn one world
 * east or west where that copy meets the buffered tile, so a tile at the world's edge holds what lies
 * within its buffer across ±180°, and a ring unwrapped past ±180° shows on both sides.
 */
import { clipLine, clipPolygon } from './mvt-clip.ts';
import type { ClipBox } from './mvt-clip.ts';
import type { ProjectedGeometry } from './mvt-read.ts';
import { removeCrossings } from './mvt-repair.ts';
import { reversePath, ringArea, simplifyLine, simplifyRing } from './mvt-simplify.ts';

/** The clip window `[min, max]²` in tile units, the simplification tolerance and the world's width. */
export interface ShapeWindow {
  min: number;
  max: number;
  tolerance: number;
  /** Tile units across the whole world at the tile's zoom: how far apart the world copies lie. */
  world: number;
}

const MOVE_TO = 1;
const LINE_TO = 2;
const CLOSE_PATH = 7 | (1 << 3);

/** The x shift of each world copy, as a multiple of the world's width: as read, one world east, one west. */
const COPY_WORLDS = [0, 1, -1] as const;

/**
 * Which world copies of `geometry` meet the window, as bits: 1 as read, 2 moved one world east, 4 one world
 * west; 0 when none does. A copy is there because the tile's buffer or the geometry reaches over ±180°.
 */
export function findCopies(geometry: ProjectedGeometry, window: ShapeWindow): number {
  const { min, max, world } = window;
  if (geometry.maxY < min || geometry.minY > max) return 0;
  let copies = 0;
  for (let copy = 0; copy < 3; copy++) {
    const shift = (COPY_WORLDS[copy] as number) * world;
    if (geometry.maxX + shift >= min && geometry.minX + shift <= max) copies |= 1 << copy;
  }
  return copies;
}

/** Fills `commands` with the points inside the window, of every copy, as one MoveTo; false when none is. */
export function encodePoints(points: number[], window: ShapeWindow, copies: number, commands: number[]): boolean {
  commands.length = 0;
  commands.push(0);
  let count = 0;
  let cx = 0;
  let cy = 0;
  for (let copy = 0; copy < 3; copy++) {
    if ((copies & (1 << copy)) === 0) continue;
    const shift = (COPY_WORLDS[copy] as number) * window.world;
    const minX = window.min - shift;
    const maxX = window.max - shift;
    for (let i = 0; i + 1 < points.length; i += 2) {
      const px = points[i] as number;
      const py = points[i + 1] as number;
      if (px < minX || px > maxX || py < window.min || py > window.max) continue;
      const x = Math.round(px) + shift;
      const y = Math.round(py);
      commands.push(zigzag(x - cx), zigzag(y - cy));
      cx = x;
      cy = y;
      count++;
    }
  }
  commands[0] = command(MOVE_TO, count);
  return count > 0;
}

/** Fills `commands` with the clipped, simplified lines of every copy, each as MoveTo + LineTo; false when none is left. */
export function encodeLines(geometry: ProjectedGeometry, window: ShapeWindow, copies: number, commands: number[]): boolean {
  commands.length = 0;
  const cursor = { x: 0, y: 0 };
  for (let copy = 0; copy < 3; copy++) {
    if ((copies & (1 << copy)) === 0) continue;
    const shift = (COPY_WORLDS[copy] as number) * window.world;
    let pieces = geometry.lines;
    if (!isInside(geometry, window, shift)) {
      pieces = [];
      const box = clipBox(window, shift);
      for (const line of geometry.lines) clipLine(line, box, pieces);
    }
    for (const piece of pieces) {
      const path = simplifyLine(piece, window.tolerance);
      if (path.length >= 4) appendPath(commands, cursor, path, false, shift);
    }
  }
  return commands.length > 0;
}

/**
 * Fills `commands` with the clipped, simplified polygons of every copy, then the polar bands (once): each
 * exterior ring with positive area by the spec's formula, followed by its holes with negative area.
 * Degenerate holes are dropped; a polygon whose exterior is degenerate or clipped away is dropped whole.
 * Edges that snapping made cross are repaired first (`removeCrossings`). False when nothing is left.
 */
export function encodePolygons(geometry: ProjectedGeometry, window: ShapeWindow, copies: number, commands: number[]): boolean {
  commands.length = 0;
  const rings: number[][] = [];
  const exteriors: boolean[] = [];
  for (let copy = 0; copy < 3; copy++) {
    if ((copies & (1 << copy)) === 0) continue;
    const shift = (COPY_WORLDS[copy] as number) * window.world;
    const box = isInside(geometry, window, shift) ? null : clipBox(window, shift);
    for (const polygon of geometry.polygons) collectPolygon(rings, exteriors, polygon, window, box, shift);
  }
  for (const polygon of geometry.bands) collectPolygon(rings, exteriors, polygon, window, clipBox(window, 0), 0);
  removeCrossings(rings, exteriors);
  const cursor = { x: 0, y: 0 };
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r] as number[];
    if (ring.length >= 8) appendPath(commands, cursor, ring, true);
  }
  return commands.length > 0;
}

/** Whether every position of `geometry`, moved by `shift`, lies inside the window, so clipping can be skipped. */
function isInside(geometry: ProjectedGeometry, window: ShapeWindow, shift: number): boolean {
  return geometry.minX + shift >= window.min && geometry.minY >= window.min && geometry.maxX + shift <= window.max && geometry.maxY <= window.max;
}

/** The window as seen from a copy moved by `shift`: clip the unmoved geometry to it, then move the result. */
function clipBox(window: ShapeWindow, shift: number): ClipBox {
  return { minX: window.min - shift, minY: window.min, maxX: window.max - shift, maxY: window.max };
}

/** Appends a polygon's clipped, snapped rings moved by `shift`, exterior first, wound as the spec says. */
function collectPolygon(rings: number[][], exteriors: boolean[], polygon: number[][], window: ShapeWindow, box: ClipBox | null, shift: number): void {
  if (box === null) return collectRings(rings, exteriors, polygon, window, shift);
  const wound = polygon.map((ring, r) => {
    if (ringArea(ring) > 0 === (r === 0)) return ring;
    const reversed = ring.slice();
    reversePath(reversed);
    return reversed;
  });
  for (const piece of clipPolygon(wound, box)) collectRings(rings, exteriors, piece, window, shift);
}

function collectRings(rings: number[][], exteriors: boolean[], polygon: number[][], window: ShapeWindow, shift: number): void {
  for (let r = 0; r < polygon.length; r++) {
    const path = simplifyRing(polygon[r] as number[], window.tolerance);
    if (path.length < 8) {
      if (r === 0) return;
      continue;
    }
    if (ringArea(path) > 0 !== (r === 0)) reversePath(path);
    if (shift !== 0) for (let i = 0; i < path.length; i += 2) path[i] = (path[i] as number) + shift;
    rings.push(path);
    exteriors.push(r === 0);
  }
}

/** Appends one path moved by `shift` in x; a ring's closing point is left to ClosePath. */
function appendPath(commands: number[], cursor: { x: number; y: number }, path: number[], ring: boolean, shift = 0): void {
  const points = (path.length >> 1) - (ring ? 1 : 0);
  commands.push(command(MOVE_TO, 1));
  for (let i = 0; i < points; i++) {
    if (i === 1) commands.push(command(LINE_TO, points - 1));
    const x = (path[i * 2] as number) + shift;
    const y = path[i * 2 + 1] as number;
    commands.push(zigzag(x - cursor.x), zigzag(y - cursor.y));
    cursor.x = x;
    cursor.y = y;
  }
  if (ring) commands.push(CLOSE_PATH);
}

function command(id: number, count: number): number {
  return id | (count << 3);
}

function zigzag(n: number): number {
  return (n << 1) ^ (n >> 31);
}
