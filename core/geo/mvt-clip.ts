/**
 * Clipping of flat tile-coordinate paths (`[x0, y0, x1, y1, …]`) to a rectangle: the tile grown by its
 * buffer, moved by a world's width when a world copy is clipped. Lines are cut into the pieces inside
 * (Liang–Barsky per segment). Polygons are cut the same way into arcs that enter and leave the box, and the
 * arcs are joined again along the box's edge, as d3-geo's rectangle clip does: a coast that leaves and
 * re-enters the box gives separate polygons, not the zero-width slivers of Sutherland–Hodgman (which GEOS
 * cannot clip again).
 */

/** A clip rectangle in tile units. */
export interface ClipBox {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/** Appends to `pieces` the parts of `line` inside the box; a line that leaves and re-enters gives several. */
export function clipLine(line: number[], box: ClipBox, pieces: number[][]): void {
  let piece: number[] | null = null;
  for (let i = 0; i + 3 < line.length; i += 2) {
    const x0 = line[i] as number;
    const y0 = line[i + 1] as number;
    const dx = (line[i + 2] as number) - x0;
    const dy = (line[i + 3] as number) - y0;
    const span = clipSegment(x0, y0, dx, dy, box);
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

/** The parameter range `[t0, t1]` of a segment inside the box, or null; the returned tuple is reused. */
function clipSegment(x0: number, y0: number, dx: number, dy: number, box: ClipBox): [number, number] | null {
  span[0] = 0;
  span[1] = 1;
  if (!clipParameter(-dx, x0 - box.minX) || !clipParameter(dx, box.maxX - x0)) return null;
  if (!clipParameter(-dy, y0 - box.minY) || !clipParameter(dy, box.maxY - y0)) return null;
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

/**
 * A polygon clipped to the box, as the polygons left (each exterior first, then its holes). The rings
 * must be closed and wound as MVT wants them in tile coordinates: the exterior with positive area by
 * `ringArea`, holes negative, so the polygon lies right of every edge. Empty when nothing is left.
 */
export function clipPolygon(rings: number[][], box: ClipBox): number[][][] {
  const arcs: number[][] = [];
  const holes: number[][] = [];
  let exterior: number[] | null = null;
  let covered = false;
  for (let r = 0; r < rings.length; r++) {
    const ring = rings[r] as number[];
    const start = findOutside(ring, box);
    if (start < 0) {
      if (r === 0) exterior = ring;
      else holes.push(ring);
      continue;
    }
    const before = arcs.length;
    clipLine([...ring.slice(start, -2), ...ring.slice(0, start + 2)], box, arcs);
    // A ring wholly outside the box may still hold it: the exterior around a tile deep inside a country.
    if (arcs.length === before && ring.length >= 8) {
      if (r === 0) covered = containsPoint(ring, box.minX, box.minY);
      else if (covered && containsPoint(ring, box.minX, box.minY)) covered = false;
    }
  }
  const exteriors = arcs.length > 0 ? joinArcs(arcs, box) : [];
  if (exterior !== null) exteriors.push(exterior);
  if (exteriors.length === 0 && covered) exteriors.push([box.minX, box.minY, box.maxX, box.minY, box.maxX, box.maxY, box.minX, box.maxY, box.minX, box.minY]);
  const polygons = exteriors.map((ring) => [ring]);
  for (const hole of holes) {
    const owner = polygons.length === 1 ? polygons[0] : polygons.find(([ring]) => containsPoint(ring as number[], hole[0] as number, hole[1] as number));
    owner?.push(hole);
  }
  return polygons;
}

/** The offset of a position of the ring outside the box, or -1 when every position is inside or on it. */
function findOutside(ring: number[], box: ClipBox): number {
  for (let i = 0; i + 1 < ring.length; i += 2) {
    const x = ring[i] as number;
    const y = ring[i + 1] as number;
    if (x < box.minX || x > box.maxX || y < box.minY || y > box.maxY) return i;
  }
  return -1;
}

/**
 * Closes arcs (each from where a ring enters the box to where it leaves) into rings: from an arc's exit,
 * walk the box's edge clockwise on screen, keeping the polygon on the right, to the next entry.
 */
function joinArcs(arcs: number[][], box: ClipBox): number[][] {
  const width = box.maxX - box.minX;
  const height = box.maxY - box.minY;
  const perimeter = 2 * (width + height);
  const corners = [0, width, width + height, 2 * width + height];
  const cornerX = [box.minX, box.maxX, box.maxX, box.minX];
  const cornerY = [box.minY, box.minY, box.maxY, box.maxY];
  const along = (x: number, y: number) => {
    const top = Math.abs(y - box.minY);
    const right = Math.abs(x - box.maxX);
    const bottom = Math.abs(y - box.maxY);
    const left = Math.abs(x - box.minX);
    const nearest = Math.min(top, right, bottom, left);
    if (nearest === top) return x - box.minX;
    if (nearest === right) return width + y - box.minY;
    if (nearest === bottom) return width + height + box.maxX - x;
    return (2 * width + height + box.maxY - y) % perimeter;
  };
  const entries = arcs.map((arc) => along(arc[0] as number, arc[1] as number));
  const order = arcs.map((_, index) => index).sort((a, b) => (entries[a] as number) - (entries[b] as number));
  const used = new Uint8Array(arcs.length);
  const rings: number[][] = [];
  for (const start of order) {
    if (used[start]) continue;
    const ring: number[] = [];
    let arc = start;
    while (true) {
      used[arc] = 1;
      const path = arcs[arc] as number[];
      for (let i = 0; i < path.length; i++) ring.push(path[i] as number);
      const exit = along(path.at(-2)!, path.at(-1)!);
      let next = order.find((index) => (entries[index] as number) >= exit) ?? (order[0] as number);
      if (used[next] && next !== start) next = start;
      const distance = ((entries[next] as number) - exit + perimeter) % perimeter;
      const firstCorner = Math.max(0, corners.findIndex((corner) => corner > exit));
      for (let c = 0; c < 4; c++) {
        const k = (firstCorner + c) % 4;
        if ((((corners[k] as number) - exit + perimeter) % perimeter) >= distance) break;
        ring.push(cornerX[k] as number, cornerY[k] as number);
      }
      if (next === start) break;
      arc = next;
    }
    ring.push(ring[0] as number, ring[1] as number);
    rings.push(ring);
  }
  return rings;
}

/** Whether the point lies inside the closed ring (even–odd rule). */
function containsPoint(ring: number[], x: number, y: number): boolean {
  let inside = false;
  for (let i = 0; i + 3 < ring.length; i += 2) {
    const ax = ring[i] as number;
    const ay = ring[i + 1] as number;
    const bx = ring[i + 2] as number;
    const by = ring[i + 3] as number;
    if (ay > y !== by > y && x < ax + ((y - ay) * (bx - ax)) / (by - ay)) inside = !inside;
  }
  return inside;
}
