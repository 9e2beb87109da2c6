/**
 * Tile addressing for vector tiles: XYZ (slippy) tile bounds in WGS84 and the spherical
 * Web Mercator projection of lon/lat into one tile's coordinates.
 */

/** The Web Mercator latitude limit: the latitude whose Mercator y is ±π, so the world is square. */
export const MERCATOR_MAX_LATITUDE = 85.0511287798;

/** Deepest zoom accepted in a tile address. */
export const MAX_TILE_ZOOM = 24;

const DEGREES = Math.PI / 180;

/** An affine-after-Mercator transform from lon/lat to one tile's coordinates (extent units, y down). */
export interface TileProjection {
  /** Tile units per degree of longitude. */
  kx: number;
  /** Tile x of longitude 0. */
  ox: number;
  /** Tile units per unit of `atanh(sin(latitude))`. */
  ky: number;
  /** Tile y of the equator. */
  oy: number;
}

/**
 * Whether z/x/y is a valid tile address: integers, 0 <= z <= 24 and 0 <= x, y < 2^z.
 * @example isValidTile(1, 1, 0) // true
 */
export function isValidTile(z: number, x: number, y: number): boolean {
  if (!Number.isInteger(z) || !Number.isInteger(x) || !Number.isInteger(y)) return false;
  if (z < 0 || z > MAX_TILE_ZOOM) return false;
  const size = 2 ** z;
  return x >= 0 && x < size && y >= 0 && y < size;
}

/**
 * WGS84 bounds `[west, south, east, north]` of tile z/x/y (XYZ scheme), grown by `buffer` tile units of
 * `extent` on each side. Longitudes clamp to ±180 (the buffer across the antimeridian is `tileWrapBounds`)
 * and latitudes to the Web Mercator limit ±85.0511287798.
 * @example tileBounds(1, 1, 0) // [0, 0, 180, 85.0511287798]
 * @throws RangeError for an invalid tile address, a negative buffer or a non-positive extent.
 */
export function tileBounds(z: number, x: number, y: number, buffer = 0, extent = 4096): [number, number, number, number] {
  assertTileArguments(z, x, y, buffer, extent);
  const size = 2 ** z;
  const grow = buffer / extent;
  const west = clamp(((x - grow) / size) * 360 - 180, 180);
  const east = clamp(((x + 1 + grow) / size) * 360 - 180, 180);
  const north = clamp(latitudeOfWorldY((y - grow) / size), MERCATOR_MAX_LATITUDE);
  const south = clamp(latitudeOfWorldY((y + 1 + grow) / size), MERCATOR_MAX_LATITUDE);
  return [west, south, east, north];
}

/**
 * Where rows must lie, as stored, to show in tile z/x/y moved one world east or west: the buffered bounds of
 * a tile at the world's west edge (x = 0) shifted by +360°, of one at the east edge by -360° (tile 0/0/0 has
 * both), and none for other tiles. `encodeTile` draws those rows shifted into the tile's buffer, so fetch
 * them along with `tileBounds`. Latitudes as in `tileBounds`; longitudes are not clamped.
 * @example tileWrapBounds(1, 0, 0, 64) // [[177.1875, -2.81…, 362.8125, 85.0511287798]]
 * @throws RangeError like `tileBounds`.
 */
export function tileWrapBounds(z: number, x: number, y: number, buffer = 0, extent = 4096): [number, number, number, number][] {
  const [, south, , north] = tileBounds(z, x, y, buffer, extent);
  const size = 2 ** z;
  const grow = buffer / extent;
  const west = ((x - grow) / size) * 360 - 180;
  const east = ((x + 1 + grow) / size) * 360 - 180;
  const copies: [number, number, number, number][] = [];
  if (x === 0) copies.push([west + 360, south, east + 360, north]);
  if (x === size - 1) copies.push([west - 360, south, east - 360, north]);
  return copies;
}

/** Checks a tile address and the tile options shared by `tileBounds` and `encodeTile`. */
export function assertTileArguments(z: number, x: number, y: number, buffer: number, extent: number): void {
  if (!isValidTile(z, x, y)) throw new RangeError(`invalid tile address ${z}/${x}/${y}`);
  if (!Number.isFinite(buffer) || buffer < 0) throw new RangeError(`tile buffer must be a finite number >= 0, got ${buffer}`);
  if (!Number.isInteger(extent) || extent <= 0) throw new RangeError(`tile extent must be a positive integer, got ${extent}`);
}

/** The transform that takes lon/lat to coordinates of tile z/x/y in `extent` units, y growing downward. */
export function createTileProjection(z: number, x: number, y: number, extent: number): TileProjection {
  const worldSize = 2 ** z * extent;
  return {
    kx: worldSize / 360,
    ox: worldSize / 2 - x * extent,
    ky: worldSize / (2 * Math.PI),
    oy: worldSize / 2 - y * extent,
  };
}

/** Tile x of a longitude. */
export function projectX(projection: TileProjection, lon: number): number {
  return lon * projection.kx + projection.ox;
}

/** Tile y of a latitude; latitudes beyond the Mercator limit clamp to the top or bottom edge of the world. */
export function projectY(projection: TileProjection, lat: number): number {
  const clamped = lat > MERCATOR_MAX_LATITUDE ? MERCATOR_MAX_LATITUDE : lat < -MERCATOR_MAX_LATITUDE ? -MERCATOR_MAX_LATITUDE : lat;
  return projection.oy - Math.atanh(Math.sin(clamped * DEGREES)) * projection.ky;
}

/** Latitude at fraction `t` of the world's Mercator height, 0 at the top. */
function latitudeOfWorldY(t: number): number {
  return Math.atan(Math.sinh(Math.PI * (1 - 2 * t))) / DEGREES;
}

function clamp(value: number, limit: number): number {
  return value > limit ? limit : value < -limit ? -limit : value;
}
