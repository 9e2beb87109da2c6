/**
 * Simplification and snapping of flat tile-coordinate paths: Douglas–Peucker in tile units, then
 * rounding to the integer grid with repeated and collinear positions removed. What the two may leave
 * crossed in a polygon is repaired by `mvt-repair.ts`.
 */

/**
 * The line simplified within `tolerance` tile units, rounded to integers, without repeated points.
 * @returns the integer path, with fewer than 2 points when the line collapsed.
 */
export function simplifyLine(line: number[], tolerance: number): number[] {
  const keep = markDouglasPeucker(line, tolerance * tolerance, false);
  return roundKept(line, keep);
}

/**
 * The closed ring simplified within `tolerance` tile units, rounded, without repeated points or points on a
 * straight line between their neighbours, still closed.
 * A ring that simplification would cut below 4 points is rounded unsimplified instead.
 * @returns the closed integer ring, or an empty array when it is degenerate (under 4 points or no area).
 */
export function simplifyRing(ring: number[], tolerance: number): number[] {
  let keep = markDouglasPeucker(ring, tolerance * tolerance, true);
  let kept = 0;
  for (let i = 0; i < keep.length; i++) kept += keep[i] as number;
  if (kept < 4) keep = keep.fill(1);
  const rounded = dropCollinear(roundKept(ring, keep));
  return rounded.length < 8 || ringArea(rounded) === 0 ? [] : rounded;
}

/**
 * Twice the signed area of a closed ring by the MVT 2.1 formula, Σ (x_i·y_{i+1} − x_{i+1}·y_i).
 * In tile coordinates (y down) it is positive for a ring that is clockwise on screen: an exterior ring.
 */
export function ringArea(ring: number[]): number {
  let sum = 0;
  for (let i = 0; i + 3 < ring.length; i += 2) {
    sum += (ring[i] as number) * (ring[i + 3] as number) - (ring[i + 2] as number) * (ring[i + 1] as number);
  }
  return sum;
}

/** Reverses a flat path in place, point by point. */
export function reversePath(path: number[]): void {
  for (let i = 0, j = path.length - 2; i < j; i += 2, j -= 2) {
    const x = path[i] as number;
    const y = path[i + 1] as number;
    path[i] = path[j] as number;
    path[i + 1] = path[j + 1] as number;
    path[j] = x;
    path[j + 1] = y;
  }
}

/**
 * The closed ring without repeated positions and without positions on a straight line between their
 * neighbours, which also removes spikes (a path that runs out and straight back).
 */
export function dropCollinear(ring: number[]): number[] {
  const out: number[] = [];
  const collinear = (a: number, b: number, cx: number, cy: number) =>
    ((out[b] as number) - (out[a] as number)) * (cy - (out[b + 1] as number)) - ((out[b + 1] as number) - (out[a + 1] as number)) * (cx - (out[b] as number)) === 0;
  for (let i = 0; i + 3 < ring.length; i += 2) {
    const x = ring[i] as number;
    const y = ring[i + 1] as number;
    while (out.length >= 4 && collinear(out.length - 4, out.length - 2, x, y)) out.length -= 2;
    if (out.length >= 2 && out[out.length - 2] === x && out[out.length - 1] === y) continue;
    out.push(x, y);
  }
  let start = 0;
  while (out.length - start >= 6) {
    const n = out.length;
    if (collinear(n - 4, n - 2, out[start] as number, out[start + 1] as number) || (out[n - 2] === out[start] && out[n - 1] === out[start + 1])) out.length -= 2;
    else if (collinear(n - 2, start, out[start + 2] as number, out[start + 3] as number)) start += 2;
    else break;
  }
  const closed = out.slice(start);
  if (closed.length >= 2) closed.push(closed[0] as number, closed[1] as number);
  return closed;
}

let stack = new Int32Array(64);

/** Marks the points Douglas–Peucker keeps; a closed ring is first split at the point farthest from its start. */
function markDouglasPeucker(path: number[], sqTolerance: number, closed: boolean): Uint8Array {
  const n = path.length >> 1;
  const keep = new Uint8Array(n);
  if (n <= 2 || (closed && n <= 4)) return keep.fill(1);
  keep[0] = keep[n - 1] = 1;
  let top = 0;
  const push = (first: number, last: number) => {
    if (last - first < 2) return;
    if (top + 2 > stack.length) {
      const grown = new Int32Array(stack.length * 2);
      grown.set(stack);
      stack = grown;
    }
    stack[top++] = first;
    stack[top++] = last;
  };
  if (closed) {
    const far = farthestFromPoint(path, 0, n - 1);
    keep[far] = 1;
    push(0, far);
    push(far, n - 1);
  } else push(0, n - 1);
  while (top > 0) {
    const last = stack[--top] as number;
    const first = stack[--top] as number;
    let maxDistance = -1;
    let index = first;
    for (let i = first + 1; i < last; i++) {
      const distance = sqSegmentDistance(path, i, first, last);
      if (distance > maxDistance) {
        maxDistance = distance;
        index = i;
      }
    }
    if (maxDistance > sqTolerance) {
      keep[index] = 1;
      push(first, index);
      push(index, last);
    }
  }
  return keep;
}

function farthestFromPoint(path: number[], origin: number, end: number): number {
  const ox = path[origin * 2] as number;
  const oy = path[origin * 2 + 1] as number;
  let best = origin;
  let bestDistance = -1;
  for (let i = origin + 1; i < end; i++) {
    const dx = (path[i * 2] as number) - ox;
    const dy = (path[i * 2 + 1] as number) - oy;
    if (dx * dx + dy * dy > bestDistance) {
      bestDistance = dx * dx + dy * dy;
      best = i;
    }
  }
  return best;
}

/** Squared distance from point `i` to the segment between points `a` and `b`. */
function sqSegmentDistance(path: number[], i: number, a: number, b: number): number {
  const px = path[i * 2] as number;
  const py = path[i * 2 + 1] as number;
  let x = path[a * 2] as number;
  let y = path[a * 2 + 1] as number;
  const dx = (path[b * 2] as number) - x;
  const dy = (path[b * 2 + 1] as number) - y;
  if (dx !== 0 || dy !== 0) {
    const t = ((px - x) * dx + (py - y) * dy) / (dx * dx + dy * dy);
    if (t > 1) {
      x += dx;
      y += dy;
    } else if (t > 0) {
      x += dx * t;
      y += dy * t;
    }
  }
  return (px - x) * (px - x) + (py - y) * (py - y);
}

function roundKept(path: number[], keep: Uint8Array): number[] {
  const out: number[] = [];
  let lastX = NaN;
  let lastY = NaN;
  for (let i = 0; i < keep.length; i++) {
    if (keep[i] === 0) continue;
    const x = Math.round(path[i * 2] as number);
    const y = Math.round(path[i * 2 + 1] as number);
    if (x === lastX && y === lastY) continue;
    out.push(x, y);
    lastX = x;
    lastY = y;
  }
  return out;
}
