/**
 * The longitude extent of geometries on the circle, as RFC 7946 §5.2 and STAC draw a box: the smallest
 * interval that covers every part, written [west, east] with west > east when it crosses ±180°.
 *
 * Each part (a point, a line, a polygon with its holes) adds the interval of its own longitudes, taken as it
 * is: a part that spans more than 180° (Antarctica, a ring that was never cut at the antimeridian) covers
 * that span and is not read as wrapping the other way. The answer is the complement of the largest gap
 * between the parts on the circle, when that gap is wider than 180°: the parts then fit in less than a
 * hemisphere (Fiji, Russia, the United States with Guam), and no other gap can compete. Data that needs more
 * than a hemisphere keeps its plain [min, max]: world-wide cities, whose largest gap lies somewhere in the
 * Pacific, would otherwise get a box of 350° written west > east, which frames no better than the plain one
 * and misleads every client that ignores crossing boxes.
 *
 * Intervals go into 360 buckets of 1° that keep the exact least and greatest longitude covered in each, so a
 * point costs O(1) and nothing grows with the data. The buckets only lose gaps inside one bucket, narrower
 * than 1°, so a gap wider than 180° is always found exactly.
 */

/** A running longitude extent: per-bucket coverage plus the plain least and greatest longitude. */
export interface LonExtent {
  /** Least longitude covered in each bucket (bucket i holds [i − 180, i − 179), and 180 the last); +Infinity when empty. */
  lo: Float64Array;
  /** Greatest longitude covered in each bucket; −Infinity when empty. */
  hi: Float64Array;
  /** Least longitude seen, as a planar extent gives it. */
  min: number;
  /** Greatest longitude seen. */
  max: number;
}

const BUCKETS = 360;

/** A gap must be wider than this for the box to cross ±180°: the parts then fit in less than a hemisphere. */
const HEMISPHERE = 180;

/** An extent with no longitude yet. */
export function createLonExtent(): LonExtent {
  return { lo: new Float64Array(BUCKETS).fill(Infinity), hi: new Float64Array(BUCKETS).fill(-Infinity), min: Infinity, max: -Infinity };
}

function bucketOf(lon: number): number {
  const shifted = lon + 180;
  // Longitudes outside ±180 are clamped here; `finishLonExtent` then answers with the plain extent.
  return shifted >= BUCKETS - 1 ? BUCKETS - 1 : shifted <= 0 ? 0 : shifted | 0;
}

/** Adds one finite longitude: a point. */
export function addLongitude(extent: LonExtent, lon: number): void {
  if (lon < extent.min) extent.min = lon;
  if (lon > extent.max) extent.max = lon;
  const bucket = bucketOf(lon);
  if (lon < (extent.lo[bucket] as number)) extent.lo[bucket] = lon;
  if (lon > (extent.hi[bucket] as number)) extent.hi[bucket] = lon;
}

/**
 * Adds the longitudes of one part, `west` ≤ `east`: the least and greatest longitude of a line, a polygon or
 * a bbox covering's row. A box written across ±180° (`west` > `east`) counts as its two halves.
 * @example
 * const extent = createLonExtent();
 * addLonInterval(extent, 177.3, 180); // Fiji, east of the cut
 * addLonInterval(extent, -180, -179.8); // and west of it
 * finishLonExtent(extent); // [177.3, -179.8]
 */
export function addLonInterval(extent: LonExtent, west: number, east: number): void {
  if (west > east) {
    addLonInterval(extent, west, Math.max(west, 180));
    addLonInterval(extent, Math.min(east, -180), east);
    return;
  }
  if (west < extent.min) extent.min = west;
  if (east > extent.max) extent.max = east;
  const first = bucketOf(west);
  const last = bucketOf(east);
  const { lo, hi } = extent;
  if (west < (lo[first] as number)) lo[first] = west;
  if (first === last) {
    if (east > (hi[first] as number)) hi[first] = east;
    return;
  }
  // The part covers the rest of its first bucket, every bucket between, and the start of its last.
  hi[first] = first - 179;
  for (let bucket = first + 1; bucket < last; bucket++) {
    lo[bucket] = bucket - 180;
    hi[bucket] = bucket - 179;
  }
  lo[last] = last - 180;
  if (east > (hi[last] as number)) hi[last] = east;
}

/**
 * The smallest interval covering every part, as [west, east] with west > east when it crosses ±180°, when
 * that interval is narrower than 180°; else the plain [min, max] ([-180, 180] when the parts go round the
 * world). Null when nothing was added. Longitudes outside ±180 give the plain extent, so that they still show.
 */
export function finishLonExtent(extent: LonExtent): [number, number] | null {
  const { lo, hi, min, max } = extent;
  if (!(min <= max)) return null;
  if (min < -180 || max > 180) return [min, max];
  let previous = -1;
  let widest = 0;
  let west = min;
  let east = max;
  for (let bucket = 0; bucket < BUCKETS; bucket++) {
    if (!((lo[bucket] as number) <= (hi[bucket] as number))) continue;
    if (previous >= 0) {
      const gap = (lo[bucket] as number) - (hi[previous] as number);
      if (gap > widest) {
        widest = gap;
        west = lo[bucket] as number;
        east = hi[previous] as number;
      }
    }
    previous = bucket;
  }
  // Only one gap can be wider than a hemisphere, so the gap across ±180° (the plain extent's) is not it.
  return widest > HEMISPHERE ? [west, east] : [min, max];
}

/** A box as one or two boxes with west ≤ east, cut at ±180° when it crosses (west > east). */
export function splitBox(west: number, south: number, east: number, north: number): [number, number, number, number][] {
  return west <= east ? [[west, south, east, north]] : [[west, south, 180, north], [-180, south, east, north]];
}
