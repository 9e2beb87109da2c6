/**
 * Repair of one feature's snapped polygon rings. Douglas–Peucker and rounding to the tile grid can fold a
 * narrow inlet over itself, pinch a coast onto itself or push an islet a unit across a strait onto its
 * neighbour. GEOS refuses to clip such a polygon (GDAL's MVT reader, which clips every feature that reaches
 * into the buffer, fails with a TopologyException) and renderers fill it unpredictably. Rings that only
 * touch one another are left alone: GEOS and renderers take them.
 *
 * Snapped coordinates are small integers, so every orientation test here is exact.
 */
import { dropCollinear, reversePath, ringArea } from './mvt-simplify.ts';

/** Brute force beats the sweep's sorting up to about this many edges. */
const BRUTE_FORCE_EDGES = 32;

/**
 * Repairs `rings` in place: each closed and snapped, an exterior where `exteriors[i]` (positive `ringArea`)
 * followed by its holes (negative). A ring that touches or crosses itself is split there (`splitRing`).
 * Then where two rings cross or overlap: a hole leaving its exterior is dropped, of two exteriors the
 * smaller is trimmed (`trimRing`), and of any other two the smaller is dropped. Rings may be added; dropped
 * ones are emptied, never removed, so the exterior–holes order holds.
 */
export function removeCrossings(rings: number[][], exteriors: boolean[]): void {
  let budget = 16;
  for (const ring of rings) budget += ring.length >> 1;
  const splitAll = (r: number) => {
    for (let contacts = findSelfContacts(rings[r] as number[]); contacts.length > 0; contacts = findSelfContacts(rings[r] as number[])) {
      budget -= contacts.length >> 2;
      if (budget < 0) return dropRing(rings, exteriors, r);
      splitRing(rings, exteriors, r, contacts);
    }
  };
  for (let r = 0; r < rings.length; r++) splitAll(r);
  if (rings.length < 2) return;
  for (let conflicts = findConflicts(rings, exteriors); conflicts.length > 0; ) {
    const owners = findOwners(exteriors);
    const trimmed: number[][] = [];
    const changed = new Set<number>();
    for (let c = 0; c < conflicts.length; c += 2) {
      const a = conflicts[c] as number;
      const b = conflicts[c + 1] as number;
      if (changed.has(a) || changed.has(b) || (rings[a] as number[]).length === 0 || (rings[b] as number[]).length === 0) continue;
      const [smaller, larger] = Math.abs(ringArea(rings[a]!)) < Math.abs(ringArea(rings[b]!)) ? [a, b] : [b, a];
      if (exteriors[a] !== exteriors[b] && owners[a] === owners[b]) dropRing(rings, exteriors, exteriors[a] ? b : a);
      else if (!exteriors[a] || !exteriors[b] || --budget < 0) dropRing(rings, exteriors, smaller);
      else if (trimRing(rings, exteriors, smaller, rings[larger] as number[])) {
        trimmed.push(rings[smaller] as number[]);
        changed.add(smaller);
      }
    }
    // Dropping a ring never makes a new conflict; a trimmed one may, once split where it pinched.
    if (trimmed.length === 0) return;
    for (const ring of trimmed) splitAll(rings.indexOf(ring));
    conflicts = findConflicts(rings, exteriors);
  }
}

/**
 * Takes out of exterior `r` its vertices strictly inside `other`: an islet snapped across a strait keeps its
 * shape minus the overlap (split later where that pinched it). Drops it when no vertex is inside, as when
 * two rings overlap in a sliver between shared corners. True when the ring was kept, reshaped.
 */
function trimRing(rings: number[][], exteriors: boolean[], r: number, other: number[]): boolean {
  const ring = rings[r] as number[];
  const kept: number[] = [];
  for (let i = 0; i + 3 < ring.length; i += 2) if (!isStrictly(other, ring[i] as number, ring[i + 1] as number, true)) kept.push(ring[i] as number, ring[i + 1] as number);
  const trimmed = kept.length === ring.length - 2 || kept.length < 6 ? [] : dropCollinear([...kept, kept[0] as number, kept[1] as number]);
  if (trimmed.length < 8 || ringArea(trimmed) <= 0) {
    dropRing(rings, exteriors, r);
    return false;
  }
  rings[r] = trimmed;
  return true;
}

/** Edges per grid cell that `forEachEdgePair` aims at. */
const EDGES_PER_CELL = 4;

/**
 * Calls `visit(ringA, edgeA, ringB, edgeB)` once for every two edges whose boxes meet (an edge by the offset
 * of its first position); stops when `visit` returns true. Edges are bucketed in a grid sized to their
 * number; a pair is visited in the cell that holds the corner of the overlap of their boxes.
 */
function forEachEdgePair(rings: number[][], visit: (a: number, i: number, b: number, j: number) => boolean): void {
  let count = 0;
  for (const ring of rings) count += Math.max(0, (ring.length >> 1) - 1);
  // Per edge: its ring, its offset, then its box (left, low, right, high).
  const owners = new Int32Array(count * 2);
  const boxes = new Float64Array(count * 4);
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (let r = 0, e = 0; r < rings.length; r++) {
    const ring = rings[r] as number[];
    for (let i = 0; i + 3 < ring.length; i += 2, e++) {
      const ax = ring[i] as number, ay = ring[i + 1] as number, bx = ring[i + 2] as number, by = ring[i + 3] as number;
      owners[e * 2] = r;
      owners[e * 2 + 1] = i;
      boxes[e * 4] = ax < bx ? ax : bx;
      boxes[e * 4 + 1] = ay < by ? ay : by;
      boxes[e * 4 + 2] = ax < bx ? bx : ax;
      boxes[e * 4 + 3] = ay < by ? by : ay;
      minX = Math.min(minX, boxes[e * 4] as number);
      minY = Math.min(minY, boxes[e * 4 + 1] as number);
      maxX = Math.max(maxX, boxes[e * 4 + 2] as number);
      maxY = Math.max(maxY, boxes[e * 4 + 3] as number);
    }
  }
  const meets = (e: number, f: number) =>
    (boxes[f * 4 + 2] as number) >= (boxes[e * 4] as number) && (boxes[f * 4] as number) <= (boxes[e * 4 + 2] as number) &&
    (boxes[f * 4 + 3] as number) >= (boxes[e * 4 + 1] as number) && (boxes[f * 4 + 1] as number) <= (boxes[e * 4 + 3] as number);
  const call = (e: number, f: number) => visit(owners[f * 2] as number, owners[f * 2 + 1] as number, owners[e * 2] as number, owners[e * 2 + 1] as number);
  if (count <= BRUTE_FORCE_EDGES) {
    for (let e = 1; e < count; e++) for (let f = 0; f < e; f++) if (meets(e, f) && call(e, f)) return;
    return;
  }
  const size = Math.max(1, Math.sqrt(((maxX - minX + 1) * (maxY - minY + 1) * EDGES_PER_CELL) / count));
  const columns = Math.floor((maxX - minX) / size) + 1;
  const cellsOf = (e: number, k: number, low: number) => Math.floor(((boxes[e * 4 + k] as number) - low) / size);
  const starts = new Int32Array(columns * (Math.floor((maxY - minY) / size) + 1) + 1);
  const fill = (place: (cell: number, e: number) => void) => {
    for (let e = 0; e < count; e++) {
      for (let cy = cellsOf(e, 1, minY); cy <= cellsOf(e, 3, minY); cy++) {
        for (let cx = cellsOf(e, 0, minX); cx <= cellsOf(e, 2, minX); cx++) place(cy * columns + cx, e);
      }
    }
  };
  fill((cell) => starts[cell + 1]!++);
  for (let c = 1; c < starts.length; c++) starts[c]! += starts[c - 1] as number;
  const members = new Int32Array(starts[starts.length - 1] as number);
  const next = starts.slice();
  fill((cell, e) => (members[next[cell]!++] = e));
  for (let cell = 0; cell + 1 < starts.length; cell++) {
    const end = starts[cell + 1] as number;
    for (let a = (starts[cell] as number) + 1; a < end; a++) {
      const e = members[a] as number;
      for (let b = starts[cell] as number; b < a; b++) {
        const f = members[b] as number;
        if (!meets(e, f)) continue;
        const cx = Math.floor((Math.max(boxes[e * 4] as number, boxes[f * 4] as number) - minX) / size);
        const cy = Math.floor((Math.max(boxes[e * 4 + 1] as number, boxes[f * 4 + 1] as number) - minY) / size);
        if (cy * columns + cx === cell && call(e, f)) return;
      }
    }
  }
}

/**
 * Where a closed ring meets itself other than at the shared end of two consecutive edges, as
 * `[edgeA, edgeB, x, y, …]`: the offsets of the two edges, in order, and the meeting point (rounded when the
 * edges cross).
 */
function findSelfContacts(ring: number[]): number[] {
  const contacts: number[] = [];
  const last = ring.length - 4;
  forEachEdgePair([ring], (_a, edgeA, _b, edgeB) => {
    const i = Math.min(edgeA, edgeB);
    const j = Math.max(edgeA, edgeB);
    if (j - i === 2 || (i === 0 && j === last)) return false;
    const point = meetingPoint(ring, i, ring, j);
    if (point !== null) contacts.push(i, j, point[0], point[1]);
    return false;
  });
  return contacts;
}

/**
 * Pairs of rings `[a, b, …]` whose edges cross, or that meet at a point around which the places they claim
 * overlap: two exteriors' insides, two holes of one polygon, a hole reaching out of its exterior, or an
 * exterior reaching out of another polygon's hole (an islet in a lake snapped onto the shore).
 */
function findConflicts(rings: number[][], exteriors: boolean[]): number[] {
  const owners = findOwners(exteriors);
  const seen = new Set<number>();
  const conflicts: number[] = [];
  forEachEdgePair(rings, (a, i, b, j) => {
    if (a === b || seen.has(Math.min(a, b) * rings.length + Math.max(a, b))) return false;
    const p = rings[a] as number[];
    const q = rings[b] as number[];
    const point = meetingPoint(p, i, q, j);
    if (point === null) return false;
    const crossing = side(p, i, q[j] as number, q[j + 1] as number) * side(p, i, q[j + 2] as number, q[j + 3] as number) < 0 && side(q, j, p[i] as number, p[i + 1] as number) * side(q, j, p[i + 2] as number, p[i + 3] as number) < 0;
    if (crossing || isOverlapAt(p, i, q, j, point[0], point[1], owners[a] === owners[b])) {
      seen.add(Math.min(a, b) * rings.length + Math.max(a, b));
      conflicts.push(a, b);
    }
    return false;
  });
  return conflicts;
}

/**
 * Whether two rings meeting at (x, y), on edge `i` of `p` and edge `j` of `q`, claim overlapping places
 * around it. Each ring's polygon lies left of its edges (by the sign convention of `ringArea`), so the
 * polygon's side near the point is the turn from the next position to the previous one; rings of one
 * polygon (an exterior and its hole, two holes) must not overlap on the other side.
 */
function isOverlapAt(p: number[], i: number, q: number[], j: number, x: number, y: number, samePolygon: boolean): boolean {
  const [pStart, pTurn] = sectorAt(p, i, x, y);
  const [qStart, qTurn] = sectorAt(q, j, x, y);
  if (pTurn <= 0 || qTurn <= 0) return false;
  return samePolygon
    ? arcsOverlap(pStart + pTurn, 2 * Math.PI - pTurn, qStart + qTurn, 2 * Math.PI - qTurn)
    : arcsOverlap(pStart, pTurn, qStart, qTurn);
}

const EPSILON = 1e-9;

/** The polygon's side of the ring at (x, y) on edge `i`: the counterclockwise turn from the next position to the previous. */
function sectorAt(ring: number[], i: number, x: number, y: number): [number, number] {
  const end = ring.length - 2;
  let previous = i;
  let next = i + 2;
  if (ring[i] === x && ring[i + 1] === y) previous = i === 0 ? end - 2 : i - 2;
  else if (ring[i + 2] === x && ring[i + 3] === y) next = i + 2 === end ? 2 : i + 4;
  const start = Math.atan2((ring[next + 1] as number) - y, (ring[next] as number) - x);
  const turn = (Math.atan2((ring[previous + 1] as number) - y, (ring[previous] as number) - x) - start + 4 * Math.PI) % (2 * Math.PI);
  return [start, turn < EPSILON || turn > 2 * Math.PI - EPSILON ? 0 : turn];
}

/** Whether two open arcs of directions, each from `start` turning counterclockwise by `turn`, share a direction. */
function arcsOverlap(aStart: number, aTurn: number, bStart: number, bTurn: number): boolean {
  const ab = (bStart - aStart + 4 * Math.PI) % (2 * Math.PI);
  const ba = (aStart - bStart + 4 * Math.PI) % (2 * Math.PI);
  return ab < EPSILON || ab > 2 * Math.PI - EPSILON || ab < aTurn - EPSILON || ba < bTurn - EPSILON;
}

/** The index of each ring's exterior: its own for an exterior. */
function findOwners(exteriors: boolean[]): number[] {
  const owners: number[] = [];
  for (let r = 0, owner = 0; r < exteriors.length; r++) owners.push(exteriors[r] ? (owner = r) : owner);
  return owners;
}

/** Where edge `i` of `p` and edge `j` of `q` meet: a point on both, or their crossing rounded; null when apart. */
function meetingPoint(p: number[], i: number, q: number[], j: number): [number, number] | null {
  const ax = p[i] as number, ay = p[i + 1] as number, bx = p[i + 2] as number, by = p[i + 3] as number;
  const cx = q[j] as number, cy = q[j + 1] as number, dx = q[j + 2] as number, dy = q[j + 3] as number;
  const c = side(p, i, cx, cy);
  const d = side(p, i, dx, dy);
  const a = side(q, j, ax, ay);
  const b = side(q, j, bx, by);
  if (c * d < 0 && a * b < 0) {
    const t = ((cx - ax) * (dy - cy) - (cy - ay) * (dx - cx)) / ((bx - ax) * (dy - cy) - (by - ay) * (dx - cx));
    return [Math.round(ax + t * (bx - ax)), Math.round(ay + t * (by - ay))];
  }
  if (c === 0 && isWithin(cx, cy, ax, ay, bx, by)) return [cx, cy];
  if (d === 0 && isWithin(dx, dy, ax, ay, bx, by)) return [dx, dy];
  if (a === 0 && isWithin(ax, ay, cx, cy, dx, dy)) return [ax, ay];
  if (b === 0 && isWithin(bx, by, cx, cy, dx, dy)) return [bx, by];
  return null;
}

/** The sign of the turn from the edge at offset `i` to the point. */
function side(ring: number[], i: number, x: number, y: number): number {
  const ax = ring[i] as number;
  const ay = ring[i + 1] as number;
  return Math.sign(((ring[i + 2] as number) - ax) * (y - ay) - ((ring[i + 3] as number) - ay) * (x - ax));
}

function isWithin(x: number, y: number, ax: number, ay: number, bx: number, by: number): boolean {
  return x >= Math.min(ax, bx) && x <= Math.max(ax, bx) && y >= Math.min(ay, by) && y <= Math.max(ay, by);
}

/** Whether the point lies strictly inside (or strictly outside) the closed ring: not on an edge. */
function isStrictly(ring: number[], x: number, y: number, inside: boolean): boolean {
  let within = false;
  for (let i = 0; i + 3 < ring.length; i += 2) {
    const ax = ring[i] as number, ay = ring[i + 1] as number, bx = ring[i + 2] as number, by = ring[i + 3] as number;
    if (side(ring, i, x, y) === 0 && isWithin(x, y, ax, ay, bx, by)) return false;
    if (ay > y !== by > y && x < ax + ((y - ay) * (bx - ax)) / (by - ay)) within = !within;
  }
  return within === inside;
}

/**
 * Splits ring `r` where its edges meet, at as many of `contacts` (from `findSelfContacts`) as nest or keep
 * apart, each cutting off the loop between its two edges. The piece with most area keeps the ring's place;
 * each other piece is kept when it is a real one: wound the same way it is a lobe of its own (another
 * exterior, or another hole), wound the other way inside the first it is a hole of it (a lake pinched off
 * a coast), and anything else (a fold of the coast, an island in a hole) is dropped.
 */
function splitRing(rings: number[][], exteriors: boolean[], r: number, contacts: number[]): void {
  const ring = rings[r] as number[];
  const pieces = cutLoops(ring, chooseCuts(contacts)).map(dropCollinear);
  const areas = pieces.map(ringArea);
  let main = 0;
  for (let p = 1; p < pieces.length; p++) if (Math.abs(areas[p] as number) > Math.abs(areas[main] as number)) main = p;
  const kept = pieces[main] as number[];
  const mainArea = areas[main] as number;
  if (kept.length < 8 || mainArea === 0) return dropRing(rings, exteriors, r);
  const exterior = exteriors[r] as boolean;
  if (mainArea > 0 !== exterior) reversePath(kept);
  rings[r] = kept;
  pieces.forEach((other, p) => {
    const area = areas[p] as number;
    if (p === main || other.length < 8 || area === 0) return;
    const sameWinding = area > 0 === mainArea > 0;
    if (sameWinding && exterior) addRing(rings, exteriors, rings.length, other, true);
    else if (sameWinding || (exterior && isInside(other, kept))) addRing(rings, exteriors, r + 1, other, false);
    else if (exterior) addRing(rings, exteriors, rings.length, other, true);
  });
}

/** The contacts to cut at once: shortest loop first, each edge cut once, loops nested or apart, never overlapping. */
function chooseCuts(contacts: number[]): number[] {
  const order = Array.from({ length: contacts.length >> 2 }, (_, c) => c * 4);
  order.sort((a, b) => (contacts[a + 1] as number) - (contacts[a] as number) - ((contacts[b + 1] as number) - (contacts[b] as number)));
  const chosen: number[] = [];
  const cut = new Set<number>();
  for (const c of order) {
    const i = contacts[c] as number;
    const j = contacts[c + 1] as number;
    if (cut.has(i) || cut.has(j)) continue;
    const overlaps = chosen.some((d) => {
      const k = contacts[d] as number;
      const l = contacts[d + 1] as number;
      return (k < i && i < l && l < j) || (i < k && k < j && j < l);
    });
    if (overlaps) continue;
    chosen.push(i, j, contacts[c + 2] as number, contacts[c + 3] as number);
    cut.add(i).add(j);
  }
  return chosen;
}

/** The ring cut at each chosen contact: the rest first, then each loop closed at its meeting point. */
function cutLoops(ring: number[], cuts: number[]): number[][] {
  const at = new Map<number, number>();
  for (let c = 0; c < cuts.length; c += 4) at.set(cuts[c] as number, c);
  const loops: number[][] = [];
  const walk = (from: number, to: number, into: number[]) => {
    for (let k = from; k <= to; k += 2) {
      into.push(ring[k] as number, ring[k + 1] as number);
      const c = at.get(k);
      if (c === undefined) continue;
      const j = cuts[c + 1] as number;
      const x = cuts[c + 2] as number;
      const y = cuts[c + 3] as number;
      into.push(x, y);
      const loop = [x, y];
      walk(k + 2, j, loop);
      loop.push(x, y);
      loops.push(loop);
      k = j;
    }
  };
  const rest: number[] = [];
  walk(0, ring.length - 2, rest);
  return [rest, ...loops];
}

/** Whether a ring that touches `other` lies inside it: its first edge midpoint off `other`'s edges decides. */
function isInside(ring: number[], other: number[]): boolean {
  for (let i = 0; i + 3 < ring.length; i += 2) {
    const x = ((ring[i] as number) + (ring[i + 2] as number)) / 2;
    const y = ((ring[i + 1] as number) + (ring[i + 3] as number)) / 2;
    if (isStrictly(other, x, y, true)) return true;
    if (isStrictly(other, x, y, false)) return false;
  }
  return false;
}

/** Inserts a ring wound for its role: an exterior with positive area, a hole negative. */
function addRing(rings: number[][], exteriors: boolean[], at: number, ring: number[], exterior: boolean): void {
  if (ringArea(ring) > 0 !== exterior) reversePath(ring);
  rings.splice(at, 0, ring);
  exteriors.splice(at, 0, exterior);
}

/** Empties ring `r`, and the holes after it when it is an exterior. */
function dropRing(rings: number[][], exteriors: boolean[], r: number): void {
  rings[r] = [];
  if (exteriors[r]) for (let h = r + 1; h < rings.length && !exteriors[h]; h++) rings[h] = [];
}
