/**
 * A position on a Hilbert curve over an extent: rows sorted by it put features that lie near each other next to
 * each other, so a file's row groups each cover a small area and a reader can skip most of them by their bbox
 * statistics (the same order as DuckDB spatial's `ST_Hilbert`).
 *
 * Hand-written, and kept after a comparison with npm (`npm run bench -- wkt`; BENCHMARKS.md, "WKT reading and the
 * Hilbert index"). hilbert-curve 2.0.5 gives the same index for every point and is as fast (0.81–1.22× our time per
 * round), but has had no commit since January 2020, fewer than 500 downloads a month, mutates the point it is given,
 * and brings d3-array for a function we would not use. hilbert 2.0.0 (2014) is the same curve transposed and 1.9–3.0×
 * slower. This walk is the textbook one those two implement, in twenty lines with no dependency.
 */

/** Cells per axis: 2^16, so an index fits in 32 bits and is exact in a JavaScript number. */
export const HILBERT_SIDE = 65_536;

/**
 * The Hilbert index (0 … 2^32 − 1) of the point (`x`, `y`) in `extent` [xmin, ymin, xmax, ymax]; points outside
 * are clamped to its edge. An extent of zero width or height puts every point in its first column or row.
 * @example hilbertIndex(0, 0, [-180, -90, 180, 90]) // the centre cell's index
 */
export function hilbertIndex(x: number, y: number, extent: readonly [number, number, number, number]): number {
  return hilbertOfCell(toCell(x, extent[0], extent[2]), toCell(y, extent[1], extent[3]));
}

function toCell(value: number, min: number, max: number): number {
  if (!(max > min)) return 0;
  const cell = Math.floor(((value - min) / (max - min)) * HILBERT_SIDE);
  return cell < 0 ? 0 : cell >= HILBERT_SIDE ? HILBERT_SIDE - 1 : cell;
}

/** The classic xy → d walk: at each level, which quadrant, then rotate so the sub-curve starts where it should. */
function hilbertOfCell(cellX: number, cellY: number): number {
  let x = cellX;
  let y = cellY;
  let index = 0;
  for (let side = HILBERT_SIDE / 2; side >= 1; side /= 2) {
    const rx = (x & side) > 0 ? 1 : 0;
    const ry = (y & side) > 0 ? 1 : 0;
    index += side * side * ((3 * rx) ^ ry);
    if (ry === 0) {
      if (rx === 1) {
        x = side - 1 - (x & (side - 1));
        y = side - 1 - (y & (side - 1));
      }
      [x, y] = [y, x];
    }
  }
  return index;
}
