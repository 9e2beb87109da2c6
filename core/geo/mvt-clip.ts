/**
 * Clipping of flat tile-coordinate paths (`[x0, y0, x1, y1, …]`) to the square `[min, max]²`, which is
 * the tile grown by its buffer. Lines are cut into the pieces inside (Liang–Barsky per segment); polygon
 * rings are clipped edge by edge (Sutherland–Hodgman), which is exact for a convex window but may leave
 * zero-width slivers along the window's edge where a concave ring leaves and re-enters it.
 */

/** Appends to `pieces` the parts of `line` inside the square; a line that leaves and re-enters gives several. */
export function clipLine(line: number[], min: number, max: number, pieces: number[][]): void {
  let piece: number[] | null = null;
  for (let i = 0; i + 3 < line.length; i += 2) {
    const x0 = line[i] as number;
    const y0 = line[i + 1] as number;
    const dx = (line[i + 2] as number) - x0;
    const dy = (line[i + 3] as number) - y0;
    const span = clipSegment(x0, y0, dx, dy, min, max);
    if (span === null) {
      if (piece !== null) pieces.push(piece);
      piece = null;
      continue;
    }
    const [t0, t1] = span;
    if (piece === null || t0 > 0) {
      if (piece !== null) pieces.push(piece);
      piece = [x0 + t0 * dx, y0 + t0 * dy];
    }
    piece.push(x0 + t1 * dx, y0 + t1 * dy);
    if (t1 < 1) {
      pieces.push(piece);
      piece = null;
    }
  }
  if (piece !== null) pieces.push(piece);
}

const span: [number, number] = [0, 1];

/** The parameter range `[t0, t1]` of a segment inside the square, or null; the returned tuple is reused. */
function clipSegment(x0: number, y0: number, dx: number, dy: number, min: number, max: number): [number, number] | null {
  span[0] = 0;
  span[1] = 1;
  if (!clipParameter(-dx, x0 - min) || !clipParameter(dx, max - x0)) return null;
  if (!clipParameter(-dy, y0 - min) || !clipParameter(dy, max - y0)) return null;
  return span;
}

function clipParameter(p: number, q: number): boolean {
  if (p === 0) return q >= 0;
  const r = q / p;
  if (p < 0) {
    if (r > span[1]) return false;
    if (r > span[0]) span[0] = r;
  } else {
    if (r < span[0]) return false;
    if (r < span[1]) span[1] = r;
  }
  return true;
}

/** The closed ring clipped to the square; empty when nothing is left. */
export function clipRing(ring: number[], min: number, max: number): number[] {
  let clipped = clipRingEdge(ring, 0, min, 1);
  clipped = clipRingEdge(clipped, 0, max, -1);
  clipped = clipRingEdge(clipped, 1, min, 1);
  return clipRingEdge(clipped, 1, max, -1);
}

/** Keeps the side of the line `coordinate[axis] = bound` where `(coordinate - bound) * side >= 0`. */
function clipRingEdge(ring: number[], axis: 0 | 1, bound: number, side: 1 | -1): number[] {
  const out: number[] = [];
  for (let i = 0; i + 3 < ring.length; i += 2) {
    const ax = ring[i] as number;
    const ay = ring[i + 1] as number;
    const bx = ring[i + 2] as number;
    const by = ring[i + 3] as number;
    const a = ((axis === 0 ? ax : ay) - bound) * side;
    const b = ((axis === 0 ? bx : by) - bound) * side;
    if ((a >= 0) !== (b >= 0)) {
      const t = a / (a - b);
      if (axis === 0) out.push(bound, ay + t * (by - ay));
      else out.push(ax + t * (bx - ax), bound);
    }
    if (b >= 0) out.push(bx, by);
  }
  if (out.length > 0 && (out[0] !== out[out.length - 2] || out[1] !== out[out.length - 1])) {
    out.push(out[0] as number, out[1] as number);
  }
  return out;
}
