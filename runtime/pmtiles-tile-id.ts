/** Tile ids of PMTiles v3: one number per z/x/y, zoom by zoom along a Hilbert curve, as directories address tiles. */

/** The deepest zoom a v3 archive addresses. */
export const MAX_ZOOM = 31;

/** Tile ids of zooms 0 to z − 1: (4^z − 1) / 3. */
function zoomBase(z: number): number {
  return (4 ** z - 1) / 3;
}

/** The tile id of z/x/y: tiles of lower zooms first, then the position along the zoom's Hilbert curve. */
export function zxyToTileId(z: number, x: number, y: number): number {
  if (!Number.isInteger(z) || z < 0 || z > MAX_ZOOM) throw new RangeError(`zoom ${z} is outside 0–${MAX_ZOOM}`);
  const size = 2 ** z;
  if (!Number.isInteger(x) || !Number.isInteger(y) || x < 0 || y < 0 || x >= size || y >= size) throw new RangeError(`tile ${z}/${x}/${y} does not exist`);
  let d = 0;
  let [tx, ty] = [x, y];
  for (let s = size / 2; s >= 1; s /= 2) {
    const rx = tx >= s ? 1 : 0;
    const ry = ty >= s ? 1 : 0;
    tx -= rx * s;
    ty -= ry * s;
    d += s * s * ((3 * rx) ^ ry);
    // Rotate the quadrant so the curve stays continuous.
    if (ry === 0) {
      if (rx === 1) [tx, ty] = [s - 1 - tx, s - 1 - ty];
      [tx, ty] = [ty, tx];
    }
  }
  return zoomBase(z) + d;
}

/** The z/x/y of a tile id. */
export function tileIdToZxy(id: number): [z: number, x: number, y: number] {
  if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`tile id ${id} is not a non-negative integer`);
  let z = 0;
  while (z <= MAX_ZOOM && zoomBase(z + 1) <= id) z++;
  if (z > MAX_ZOOM) throw new RangeError(`tile id ${id} is past zoom ${MAX_ZOOM}`);
  let d = id - zoomBase(z);
  let [x, y] = [0, 0];
  for (let s = 1; s < 2 ** z; s *= 2) {
    const rx = 1 & Math.floor(d / 2);
    const ry = 1 & (d ^ rx);
    if (ry === 0) {
      if (rx === 1) [x, y] = [s - 1 - x, s - 1 - y];
      [x, y] = [y, x];
    }
    x += s * rx;
    y += s * ry;
    d = Math.floor(d / 4);
  }
  return [z, x, y];
}
