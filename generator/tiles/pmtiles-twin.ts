/**
 * The PMTiles twin of a GeoParquet file: every feature as vector tiles from zoom 0 to a zoom chosen from the
 * data, in one archive a map reads from static hosting (runtime/pmtiles.ts), made with the project's own MVT
 * encoder (core/geo/mvt.ts).
 *
 * The file is read once; each zoom's tiles are made by bucketing the features by the tiles their box meets
 * (with the encoder's buffer), never by a query per tile. Where a tile would pass the size cap, features are
 * dropped densest first, as tippecanoe's `--drop-densest-as-needed` does: a grid is laid over the tile and only
 * the first feature (in file order) whose centre falls in each cell is kept, the grid coarsened until the tile
 * fits. Dense areas lose features, sparse ones keep them all. The archive's metadata says how many were dropped
 * at each zoom. The same file gives the same bytes.
 */
import type { DuckDBInstance } from '@duckdb/node-api';
import { resolveCrs, isLonLat } from '../../core/geo/crs.ts';
import { DEFAULT_TILE_BUFFER, DEFAULT_TILE_EXTENT, encodeTile, type TileFeature } from '../../core/geo/mvt.ts';
import { readPmTilesInfo } from '../../runtime/pmtiles-info.ts';
import { zxyToTileId } from '../../runtime/pmtiles-tile-id.ts';
import { writePmTiles, type PmTilesTile } from '../../runtime/pmtiles.ts';
import { bboxOfGeometry, decodeWkb } from '../../core/geo/wkb.ts';
import { quoteIdentifier, quoteLiteral } from '../../core/sql.ts';

/** Bumped whenever the tiles made for the same data change; part of a twin's stamp. */
export const TILER_VERSION = 2;

/** Default cap on a tile's uncompressed MVT bytes. */
export const MAX_TILE_BYTES = 500_000;

/** Highest zoom a twin goes to; maps overzoom past it. */
const ZOOM_CEILING = 14;

/**
 * Tile units (of 4,096) between neighbouring points at the highest zoom: then, zoomed in until neighbours are a
 * tile apart, four zooms further, a point drawn from the overzoomed tile is off by at most a 256-pixel tile's pixel.
 */
const POINT_SPACING_UNITS = 256;

/**
 * Finest thinning grid, as a power of two of cells per tile side: 32, a cell of 8 pixels of a 256-pixel tile
 * (16 of MapLibre's 512), about the width of a drawn point. A thinned tile keeps at most one feature per cell
 * however much room the size cap leaves: finer grids drew no more on screen and cost more to draw. With 256
 * cells, the 1M-point twin's world view was four tiles of 4,096 points (340 KB each), and the file page took
 * 1.1–2.5 s to its first screen in headless Chromium on 2 cores, software-rendered; see BENCHMARKS.md.
 */
const FINEST_GRID_LEVEL = 5;

/** What making a twin did. */
export interface TwinFacts {
  minZoom: number;
  maxZoom: number;
  tiles: number;
  /** Uncompressed MVT bytes of the largest tile. */
  largestTileBytes: number;
  /** Features left out of tiles, by zoom, to keep tiles under the cap (one left out of two tiles counts twice). */
  dropped: Record<string, number>;
  bytes: number;
  ms: number;
}

/** Options of {@link writePmTilesTwin}. */
export interface TwinOptions {
  instance: DuckDBInstance;
  /** The GeoParquet file. */
  source: string;
  /** The archive to write. */
  target: string;
  /** Recorded in the metadata, for `readTwinStamp` to tell whether the twin is current. */
  stamp: string;
  /** The layer's id and the archive's name. */
  name: string;
  description?: string;
  maxTileBytes?: number;
  progress?: (done: number, total: number) => void;
}

/** The features of a file, as the encoder takes them, with their boxes in the unit square of Web Mercator. */
interface FeatureSet {
  features: TileFeature[];
  /** minX, minY, maxX, maxY per feature, Web Mercator scaled to 0–1 (y down). */
  boxes: Float64Array;
  /** WGS84 [west, south, east, north] of every feature. */
  bounds: [number, number, number, number];
  fields: Record<string, 'Number' | 'String' | 'Boolean'>;
  /** Positions of each feature, estimated from its WKB's length, for the zoom the data resolves at. */
  positions: Uint32Array;
}

/** Scalar column types that become feature properties, as in query tiles (query/tiles.ts). */
const SCALAR = /^(VARCHAR|BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DECIMAL.*|DATE|TIMESTAMP.*)$/;
const MAX_LAT = 85.0511287798066;

function mercatorX(lon: number): number {
  return (Math.min(180, Math.max(-180, lon)) + 180) / 360;
}

function mercatorY(lat: number): number {
  const sin = Math.sin((Math.min(MAX_LAT, Math.max(-MAX_LAT, lat)) * Math.PI) / 180);
  return 0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI);
}

/** A DuckDB value as an MVT property value. */
function toProperty(value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  const text = String(value);
  const number = Number(text);
  // DECIMAL values print as numbers; dates and timestamps as ISO text.
  return /^-?\d+(\.\d+)?$/.test(text) && Number.isFinite(number) ? number : text;
}

/** Reads the features of a GeoParquet file in longitude/latitude, with their scalar columns as properties. */
async function readFeatures(instance: DuckDBInstance, path: string): Promise<FeatureSet> {
  const connection = await instance.connect();
  try {
    const file = quoteLiteral(path);
    const kv = (await connection.runAndReadAll(`SELECT decode(value) AS value FROM parquet_kv_metadata(${file}) WHERE decode(key) = 'geo'`)).getRowObjects();
    const geo = kv[0] ? (JSON.parse(String(kv[0].value)) as { primary_column?: string; columns?: Record<string, { crs?: unknown }> }) : undefined;
    const described = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${file})`)).getRowObjects().map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
    const geometry = described.find((column) => column.name === geo?.primary_column) ?? described.find((column) => column.type === 'GEOMETRY');
    if (!geometry) throw new NoGeometryError('the file has no geometry column');
    const declared = geo?.columns?.[geometry.name];
    const crs = declared && 'crs' in declared ? (declared.crs === null ? null : resolveCrs(declared.crs)) : 'OGC:CRS84';
    if (!crs || !isLonLat(crs)) throw new Error(`the geometries are in ${crs ?? 'an unknown CRS'}, not longitude/latitude; twins are made of longitude/latitude files only`);
    const properties = described.filter((column) => column.name !== geometry.name && SCALAR.test(column.type));
    const wkb = geometry.type === 'GEOMETRY' ? `st_asbinary(${quoteIdentifier(geometry.name)})` : quoteIdentifier(geometry.name);
    const reader = await connection.runAndReadAll(`SELECT ${[wkb, ...properties.map((column) => quoteIdentifier(column.name))].join(', ')} FROM read_parquet(${file})`);
    const columns = reader.getColumns();
    const rows = reader.currentRowCount;
    const features: TileFeature[] = [];
    const boxes = new Float64Array(rows * 4);
    const bounds: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
    const positions = new Uint32Array(rows);
    let kept = 0;
    for (let row = 0; row < rows; row++) {
      const blob = columns[0]![row] as { bytes: Uint8Array } | null;
      if (!blob) continue;
      let box: [number, number, number, number] | null;
      try {
        box = bboxOfGeometry(decodeWkb(blob.bytes));
      } catch {
        box = null;
      }
      if (!box || !box.every(Number.isFinite)) continue;
      const [west, south, east, north] = box;
      // Points are a position each; a line or polygon about one per 16 WKB bytes (two doubles).
      positions[kept] = Math.max(1, Math.floor((blob.bytes.length - 9) / 16));
      bounds[0] = Math.min(bounds[0], west);
      bounds[1] = Math.min(bounds[1], south);
      bounds[2] = Math.max(bounds[2], east);
      bounds[3] = Math.max(bounds[3], north);
      boxes.set([mercatorX(west), mercatorY(north), mercatorX(east), mercatorY(south)], kept * 4);
      const props: TileFeature['properties'] = {};
      properties.forEach((column, index) => (props[column.name] = toProperty(columns[index + 1]![row])));
      features.push({ wkb: blob.bytes, properties: props });
      kept++;
    }
    const fields = Object.fromEntries(properties.map((column) => [column.name, column.type === 'BOOLEAN' ? 'Boolean' : column.type === 'VARCHAR' || /^(DATE|TIMESTAMP)/.test(column.type) ? 'String' : 'Number'] as const));
    return { features, boxes: boxes.subarray(0, kept * 4), bounds, fields, positions: positions.subarray(0, kept) };
  } finally {
    connection.closeSync();
  }
}

/** Feature indexes by tile at zoom z: every tile a feature's box meets, its buffer included, wrapping at ±180°. */
function bucket(set: FeatureSet, z: number): Map<number, number[]> {
  const n = 2 ** z;
  const margin = DEFAULT_TILE_BUFFER / DEFAULT_TILE_EXTENT;
  const tiles = new Map<number, number[]>();
  const { boxes } = set;
  for (let index = 0; index < set.features.length; index++) {
    const x0 = Math.floor(boxes[index * 4]! * n - margin);
    const x1 = Math.floor(boxes[index * 4 + 2]! * n + margin);
    const y0 = Math.max(0, Math.floor(boxes[index * 4 + 1]! * n - margin));
    const y1 = Math.min(n - 1, Math.floor(boxes[index * 4 + 3]! * n + margin));
    const xs = x1 - x0 + 1 >= n ? Array.from({ length: n }, (_, x) => x) : Array.from({ length: x1 - x0 + 1 }, (_, offset) => (((x0 + offset) % n) + n) % n);
    for (const x of new Set(xs)) {
      for (let y = y0; y <= y1; y++) {
        const key = x * n + y;
        const list = tiles.get(key);
        if (list) list.push(index);
        else tiles.set(key, [index]);
      }
    }
  }
  return tiles;
}

/**
 * The features of a tile thinned on a grid of 2^level cells per side: the first (in file order) whose box
 * centre falls in each cell. Centres in the buffer fall in the edge cells.
 */
function thin(set: FeatureSet, indexes: number[], z: number, x: number, y: number, level: number): number[] {
  const cells = 2 ** level;
  const scale = 2 ** z * cells;
  const taken = new Set<number>();
  const kept: number[] = [];
  for (const index of indexes) {
    const cx = Math.min(cells - 1, Math.max(0, Math.floor(((set.boxes[index * 4]! + set.boxes[index * 4 + 2]!) / 2) * scale - x * cells)));
    const cy = Math.min(cells - 1, Math.max(0, Math.floor(((set.boxes[index * 4 + 1]! + set.boxes[index * 4 + 3]!) / 2) * scale - y * cells)));
    const cell = cx * cells + cy;
    if (taken.has(cell)) continue;
    taken.add(cell);
    kept.push(index);
  }
  return kept;
}

/**
 * The highest zoom: the lowest at which every tile fits the cap with all its features (estimated from the bytes
 * a feature takes in a sample tile), and at least the zoom whose tile units are a quarter of a typical segment
 * (the median over features of the box's perimeter per position), so lines and polygons keep their shape when
 * maps overzoom past it.
 */
function chooseMaxZoom(set: FeatureSet, bytesPerFeature: number, cap: number): number {
  const segments: number[] = [];
  const step = Math.max(1, Math.floor(set.features.length / 10_000));
  for (let index = 0; index < set.features.length; index += step) {
    const positions = set.positions[index]!;
    if (positions < 2) continue;
    const [minX, minY, maxX, maxY] = set.boxes.subarray(index * 4, index * 4 + 4);
    segments.push((2 * (maxX! - minX! + maxY! - minY!)) / positions);
  }
  segments.sort((a, b) => a - b);
  const segment = segments[segments.length >> 1];
  const resolved = segment ? Math.ceil(Math.log2(4 / (DEFAULT_TILE_EXTENT * segment))) : 0;
  const spacing = pointSpacing(set);
  const separated = spacing ? Math.ceil(Math.log2(POINT_SPACING_UNITS / (DEFAULT_TILE_EXTENT * spacing))) : 0;
  let fits = 0;
  while (fits < ZOOM_CEILING) {
    let most = 0;
    for (const list of bucket(set, fits).values()) most = Math.max(most, list.length);
    if (most * bytesPerFeature * 1.25 <= cap) break;
    fits++;
  }
  return Math.min(ZOOM_CEILING, Math.max(0, resolved, separated, fits));
}

/**
 * The typical distance between neighbouring points (Web Mercator, 0–1), or undefined without points: the
 * geometric mean of the gaps between points taken in Z-order, which tippecanoe's `-zg` also starts from. The
 * mean of logarithms keeps a few empty oceans from outweighing the towns of a dense region.
 */
function pointSpacing(set: FeatureSet): number | undefined {
  const codes: number[] = [];
  for (let index = 0; index < set.features.length; index++) {
    if (set.positions[index] !== 1) continue;
    const x = Math.min(65_535, Math.floor(set.boxes[index * 4]! * 65_536));
    const y = Math.min(65_535, Math.floor(set.boxes[index * 4 + 1]! * 65_536));
    codes.push(interleave(x) * 2 + interleave(y));
  }
  codes.sort((a, b) => a - b);
  let sum = 0;
  let gaps = 0;
  for (let index = 1; index < codes.length; index++) {
    const [ax, ay] = [deinterleave(Math.floor(codes[index - 1]! / 2)), deinterleave(codes[index - 1]!)];
    const [bx, by] = [deinterleave(Math.floor(codes[index]! / 2)), deinterleave(codes[index]!)];
    const gap = Math.hypot(bx - ax, by - ay) / 65_536;
    if (gap === 0) continue;
    sum += Math.log(gap);
    gaps++;
  }
  return gaps === 0 ? undefined : Math.exp(sum / gaps);
}

/** Spreads a 16-bit number's bits to the even bits of a 32-bit one (as a float, so `* 2` stays exact). */
function interleave(value: number): number {
  let v = value;
  v = (v | (v << 8)) & 0x00ff00ff;
  v = (v | (v << 4)) & 0x0f0f0f0f;
  v = (v | (v << 2)) & 0x33333333;
  v = (v | (v << 1)) & 0x55555555;
  return v >>> 0;
}

/** The 16-bit number spread over the even bits of `value` (the inverse of {@link interleave}). */
function deinterleave(value: number): number {
  let v = (value >>> 0) & 0x55555555;
  v = (v | (v >>> 1)) & 0x33333333;
  v = (v | (v >>> 2)) & 0x0f0f0f0f;
  v = (v | (v >>> 4)) & 0x00ff00ff;
  v = (v | (v >>> 8)) & 0x0000ffff;
  return v;
}

/**
 * Encodes a tile under the cap: all its features when they fit, else the densest thinned away, starting from a
 * grid the estimate says fits and coarsening it until the tile does.
 */
function encodeUnderCap(set: FeatureSet, indexes: number[], z: number, x: number, y: number, layerName: string, cap: number, bytesPerFeature: number): { bytes: Uint8Array; kept: number } {
  const options = { layerName, maxFeatures: indexes.length };
  if (indexes.length * bytesPerFeature <= cap * 2) {
    const tile = encodeTile(indexes.map((index) => set.features[index]!), z, x, y, options);
    if (tile.bytes.length <= cap) return { bytes: tile.bytes, kept: indexes.length };
  }
  let level = Math.min(FINEST_GRID_LEVEL, Math.floor(Math.log2(cap / bytesPerFeature) / 2) + 1);
  for (; level >= 0; level--) {
    const kept = thin(set, indexes, z, x, y, level);
    const tile = encodeTile(kept.map((index) => set.features[index]!), z, x, y, { layerName, maxFeatures: kept.length });
    if (tile.bytes.length <= cap || level === 0) return { bytes: tile.bytes, kept: kept.length };
  }
  throw new Error('unreachable');
}

/**
 * Writes the PMTiles twin of a GeoParquet file: every feature's geometry (the primary geometry column, which
 * must be longitude/latitude) with its scalar columns as properties, in one layer named `name`; the metadata
 * records `stamp`.
 */
export async function writePmTilesTwin(options: TwinOptions): Promise<TwinFacts> {
  const started = performance.now();
  const cap = options.maxTileBytes ?? MAX_TILE_BYTES;
  const set = await readFeatures(options.instance, options.source);
  if (set.features.length === 0) throw new Error('the file has no geometry to draw');
  const sample = set.features.slice(0, 2000);
  const bytesPerFeature = Math.max(8, encodeTile(sample, 0, 0, 0, { layerName: options.name, maxFeatures: sample.length }).bytes.length / sample.length);
  const maxZoom = chooseMaxZoom(set, bytesPerFeature, cap);
  const dropped: Record<string, number> = {};
  let largest = 0;
  let count = 0;
  const tiles = function* (): Generator<PmTilesTile> {
    for (let z = 0; z <= maxZoom; z++) {
      const n = 2 ** z;
      const buckets = [...bucket(set, z)].map(([key, indexes]) => ({ x: Math.floor(key / n), y: key % n, indexes }))
        .sort((a, b) => zxyToTileId(z, a.x, a.y) - zxyToTileId(z, b.x, b.y));
      for (const { x, y, indexes } of buckets) {
        const { bytes, kept } = encodeUnderCap(set, indexes, z, x, y, options.name, cap, bytesPerFeature);
        if (kept < indexes.length) dropped[z] = (dropped[z] ?? 0) + indexes.length - kept;
        if (bytes.length === 0) continue;
        largest = Math.max(largest, bytes.length);
        count++;
        yield { z, x, y, bytes };
      }
      options.progress?.(z + 1, maxZoom + 1);
    }
  };
  const [west, south, east, north] = set.bounds;
  // The writer reads the metadata once it has every tile, so `dropped` is complete by then.
  const result = await writePmTiles(options.target, tiles(), {
    minZoom: 0,
    maxZoom,
    bounds: [Math.max(-180, west), Math.max(-90, south), Math.min(180, east), Math.min(90, north)],
    center: [(Math.max(-180, west) + Math.min(180, east)) / 2, (Math.max(-90, south) + Math.min(90, north)) / 2, 0],
    metadata: {
      name: options.name,
      ...(options.description ? { description: options.description } : {}),
      format: 'pbf',
      generator: `geoshelf tiler ${TILER_VERSION}`,
      vector_layers: [{ id: options.name, fields: set.fields, minzoom: 0, maxzoom: maxZoom }],
      geoshelf: { stamp: options.stamp, tiler_version: TILER_VERSION, features: set.features.length, max_tile_bytes: cap, dropped },
    },
  });
  return { minZoom: 0, maxZoom, tiles: count, largestTileBytes: largest, dropped, bytes: result.bytes, ms: Math.round(performance.now() - started) };
}

/** A GeoParquet file without a geometry column has no twin; the build's inspection of the file says why, once. */
export class NoGeometryError extends Error {
  override name = 'NoGeometryError';
}

/** The stamp recorded in an existing twin, or null when the file is missing, unreadable or not a twin. */
export async function readTwinStamp(target: string): Promise<string | null> {
  try {
    return stampOf((await readPmTilesInfo(target)).metadata);
  } catch {
    return null;
  }
}

/** The stamp in an archive's metadata; null for an archive geoshelf did not make. */
export function stampOf(metadata: Record<string, unknown>): string | null {
  const stamp = (metadata.geoshelf as { stamp?: unknown } | undefined)?.stamp;
  return typeof stamp === 'string' ? stamp : null;
}

/** The stamp of a twin made now of a GeoParquet file with this SHA-256: the data and the tiler it was made by. */
export function twinStamp(sha256: string): string {
  return `sha256:${sha256} tiler:${TILER_VERSION}`;
}
