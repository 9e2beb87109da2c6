/**
 * Turns a projected geometry into MVT geometry commands, one feature per geometry type: clip to the
 * buffered tile, simplify, snap to integers, fix ring winding, then delta- and zigzag-encode.
 */
import { clipLine, clipRing } from './mvt-clip.ts';
import type { ProjectedGeometry } from './mvt-read.ts';
import { reversePath, ringArea, simplifyLine, simplifyRing } from './mvt-simplify.ts';

/** The clip window `[min, max]²` in tile units and the simplification tolerance. */
export interface ShapeWindow {
  min: number;
  max: number;
  tolerance: number;
}

const MOVE_TO = 1;
const LINE_TO = 2;
const CLOSE_PATH = 7 | (1 << 3);

/** Whether every position of `geometry` lies inside the window, so clipping can be skipped. */
export function isInside(geometry: ProjectedGeometry, window: ShapeWindow): boolean {
  return geometry.minX >= window.min && geometry.minY >= window.min && geometry.maxX <= window.max && geometry.maxY <= window.max;
}

/** Whether no position of `geometry` lies inside the window (nor does its bounding box touch it). */
export function isOutside(geometry: ProjectedGeometry, window: ShapeWindow): boolean {
  return geometry.maxX < window.min || geometry.maxY < window.min || geometry.minX > window.max || geometry.minY > window.max;
}

/** Fills `commands` with the points inside the window as one MoveTo; false when none is. */
export function encodePoints(points: number[], window: ShapeWindow, commands: number[]): boolean {
  commands.length = 0;
  commands.push(0);
  let count = 0;
  let cx = 0;
  let cy = 0;
  for (let i = 0; i + 1 < points.length; i += 2) {
    const px = points[i] as number;
    const py = points[i + 1] as number;
    if (px < window.min || px > window.max || py < window.min || py > window.max) continue;
    const x = Math.round(px);
    const y = Math.round(py);
    commands.push(zigzag(x - cx), zigzag(y - cy));
    cx = x;
    cy = y;
    count++;
  }
  commands[0] = command(MOVE_TO, count);
  return count > 0;
}

/** Fills `commands` with the clipped, simplified lines, each as MoveTo + LineTo; false when none is left. */
export function encodeLines(lines: number[][], window: ShapeWindow, inside: boolean, commands: number[]): boolean {
  commands.length = 0;
  const cursor = { x: 0, y: 0 };
  let pieces = lines;
  if (!inside) {
    pieces = [];
    for (const line of lines) clipLine(line, window.min, window.max, pieces);
  }
  for (const piece of pieces) {
    const path = simplifyLine(piece, window.tolerance);
    if (path.length >= 4) appendPath(commands, cursor, path, false);
  }
  return commands.length > 0;
}

/**
 * Fills `commands` with the clipped, simplified polygons: each exterior ring with positive area by the
 * spec's formula, followed by its holes with negative area. Degenerate holes are dropped; a polygon
 * whose exterior is degenerate or clipped away is dropped whole. False when nothing is left.
 */
export function encodePolygons(polygons: number[][][], window: ShapeWindow, inside: boolean, commands: number[]): boolean {
  commands.length = 0;
  const cursor = { x: 0, y: 0 };
  for (const rings of polygons) {
    for (let r = 0; r < rings.length; r++) {
      const ring = inside ? (rings[r] as number[]) : clipRing(rings[r] as number[], window.min, window.max);
      const path = simplifyRing(ring, window.tolerance);
      if (path.length < 8) {
        if (r === 0) break;
        continue;
      }
      if (ringArea(path) > 0 !== (r === 0)) reversePath(path);
      appendPath(commands, cursor, path, true);
    }
  }
  return commands.length > 0;
}

/** Appends one path; a ring's closing point is left to ClosePath. */
function appendPath(commands: number[], cursor: { x: number; y: number }, path: number[], ring: boolean): void {
  const points = (path.length >> 1) - (ring ? 1 : 0);
  commands.push(command(MOVE_TO, 1));
  for (let i = 0; i < points; i++) {
    if (i === 1) commands.push(command(LINE_TO, points - 1));
    const x = path[i * 2] as number;
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
