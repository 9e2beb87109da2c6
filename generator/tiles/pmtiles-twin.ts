/**
 * The PMTiles twin of a GeoParquet file: every feature as vector tiles from zoom 0 to a zoom chosen from the
 * data, in one archive a map reads from static hosting (runtime/pmtiles.ts), made with the project's own MVT
 * encoder (core/geo/mvt.ts).
 *
 * The file is streamed once into a staging database and a feature store on disk (generator/tiles/twin-stage.ts);
 * each zoom's tiles come out of them in tile-id order through buckets on disk, one tile's features at a time,
 * never by a query per tile, so the memory a twin takes does not grow with the file. Where a tile would pass the
 * size cap, features are dropped densest first, as tippecanoe's `--drop-densest-as-needed` does: a grid is laid
 * over the tile and only the first feature (in file order) whose centre falls in each cell is kept, the grid
 * coarsened until the tile fits. Dense areas lose features, sparse ones keep them all. The archive's metadata says
 * how many were dropped at each zoom. The same file gives the same bytes.
 */
import { tmpdir } from 'node:os';
import type { DuckDBInstance } from '@duckdb/node-api';
import { DEFAULT_TILE_EXTENT, encodeTile } from '../../core/geo/mvt.ts';
import { readPmTilesInfo } from '../../runtime/pmtiles-info.ts';
import { writePmTiles, type PmTilesTile } from '../../runtime/pmtiles.ts';
import { FINEST_GRID_LEVEL, stageFeatures, type StagedFeatures, type StagedTile } from './twin-stage.ts';

export { NoGeometryError } from './twin-stage.ts';

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
  /** Bytes of a bucket of tiles, read back whole while tiling (twin-spill.ts's BUCKET_BYTES by default). */
  bucketBytes?: number;
  /** Hears how far the twin is (0–1), and the step it is at or has done (`zoom 3 of 10 made`). */
  progress?: (fraction: number, step: string) => void;
}

/**
 * The share of a twin's progress given to staging the file and choosing its zooms; the rest is shared equally
 * between the zooms. Measured: 0.19 of the 100M-point twin's time (14.6 of 77 minutes), 0.12 of the 1M-point one's.
 */
const STAGING_SHARE = 0.25;

/**
 * The features of a tile thinned on a grid of 2^level cells per side: the first (in file order) in each cell,
 * by the finest cell of each feature's box centre (a cell of a coarser grid is a block of finest cells).
 */
function thin(tile: StagedTile, level: number): number[] {
  const shift = FINEST_GRID_LEVEL - level;
  const finest = 2 ** FINEST_GRID_LEVEL;
  const taken = new Set<number>();
  const kept: number[] = [];
  tile.cells.forEach((cell, index) => {
    const coarse = (Math.floor(cell / finest) >> shift) * 2 ** level + ((cell % finest) >> shift);
    if (taken.has(coarse)) return;
    taken.add(coarse);
    kept.push(index);
  });
  return kept;
}

/**
 * The highest zoom: the lowest at which every tile fits the cap with all its features (estimated from the bytes
 * a feature takes in a sample tile), and at least the zoom whose tile units are a quarter of a typical segment
 * (the median over features of the box's perimeter per position), so lines and polygons keep their shape when
 * maps overzoom past it; for points, at least the zoom at which neighbours are POINT_SPACING_UNITS apart.
 */
async function chooseMaxZoom(staged: StagedFeatures, bytesPerFeature: number, cap: number): Promise<number> {
  const shapes = await staged.sampledShapes(Math.max(1, Math.floor(staged.count / 10_000)));
  const segments = shapes.map(({ box: [minX, minY, maxX, maxY], positions }) => (2 * (maxX - minX + maxY - minY)) / positions).sort((a, b) => a - b);
  const segment = segments[segments.length >> 1];
  const resolved = segment ? Math.ceil(Math.log2(4 / (DEFAULT_TILE_EXTENT * segment))) : 0;
  // The typical distance between neighbouring points: the geometric mean of the gaps between points taken in
  // Z-order, which tippecanoe's `-zg` also starts from. The mean of logarithms keeps a few empty oceans from
  // outweighing the towns of a dense region.
  const spacing = await staged.pointSpacing();
  const separated = spacing ? Math.ceil(Math.log2(POINT_SPACING_UNITS / (DEFAULT_TILE_EXTENT * spacing))) : 0;
  // The lowest zoom at which every tile fits, looked for from the zoom the shapes and points ask for: a tile's
  // features are among its parent's (its buffered square lies inside the parent's), so the most a tile holds
  // never grows with the zoom, and a zoom below that one would not change the answer.
  let zoom = Math.min(ZOOM_CEILING, Math.max(0, resolved, separated));
  while (zoom < ZOOM_CEILING && (await staged.mostPerTile(zoom)) * bytesPerFeature * 1.25 > cap) zoom++;
  return zoom;
}

/** The most features a tile may have to be encoded whole first: `count × bytesPerFeature ≤ 2 × cap`. */
function wholeLimit(bytesPerFeature: number, cap: number): number {
  let limit = Math.floor((cap * 2) / bytesPerFeature);
  while ((limit + 1) * bytesPerFeature <= cap * 2) limit++;
  while (limit > 0 && limit * bytesPerFeature > cap * 2) limit--;
  return limit;
}

/**
 * Encodes a tile under the cap: all its features when they fit, else the densest thinned away, starting from a
 * grid the estimate says fits and coarsening it until the tile does. A tile of more than the whole limit
 * comes with the first feature of each finest cell only, which is all any grid keeps.
 */
function encodeUnderCap(tile: StagedTile, z: number, layerName: string, cap: number, bytesPerFeature: number, whole: number): { bytes: Uint8Array; kept: number } {
  if (tile.count <= whole) {
    const encoded = encodeTile(tile.features, z, tile.x, tile.y, { layerName, maxFeatures: tile.features.length });
    if (encoded.bytes.length <= cap) return { bytes: encoded.bytes, kept: tile.count };
  }
  let level = Math.min(FINEST_GRID_LEVEL, Math.floor(Math.log2(cap / bytesPerFeature) / 2) + 1);
  for (; level >= 0; level--) {
    const kept = thin(tile, level);
    const encoded = encodeTile(kept.map((index) => tile.features[index]!), z, tile.x, tile.y, { layerName, maxFeatures: kept.length });
    if (encoded.bytes.length <= cap || level === 0) return { bytes: encoded.bytes, kept: kept.length };
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
  let doing = 'staging the file';
  const report = options.progress;
  const staging = report && ((rows: number, total: number) => report((STAGING_SHARE * rows) / total, doing));
  const staged = await stageFeatures(options.instance, options.source, { bucketBytes: options.bucketBytes, ...(staging ? { progress: staging } : {}) }).catch((error: unknown) => {
    throw explainFailure(error, doing);
  });
  try {
    if (staged.count === 0) throw new Error('the file has no geometry to draw');
    doing = 'choosing the zooms';
    const sample = await staged.first(2000);
    const bytesPerFeature = Math.max(8, encodeTile(sample, 0, 0, 0, { layerName: options.name, maxFeatures: sample.length }).bytes.length / sample.length);
    const maxZoom = await chooseMaxZoom(staged, bytesPerFeature, cap);
    const whole = wholeLimit(bytesPerFeature, cap);
    const dropped: Record<string, number> = {};
    let largest = 0;
    let count = 0;
    const tiles = async function* (): AsyncGenerator<PmTilesTile> {
      for (let z = 0; z <= maxZoom; z++) {
        doing = `placing the features of zoom ${z} of ${maxZoom}`;
        for await (const tile of staged.tiles(z, whole)) {
          const { bytes, kept } = encodeUnderCap(tile, z, options.name, cap, bytesPerFeature, whole);
          if (kept < tile.count) dropped[z] = (dropped[z] ?? 0) + tile.count - kept;
          if (bytes.length === 0) continue;
          largest = Math.max(largest, bytes.length);
          count++;
          yield { z, x: tile.x, y: tile.y, bytes };
        }
        report?.(STAGING_SHARE + ((1 - STAGING_SHARE) * (z + 1)) / (maxZoom + 1), `zoom ${z} of ${maxZoom} made`);
      }
    };
    const [west, south, east, north] = staged.bounds;
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
        vector_layers: [{ id: options.name, fields: staged.fields, minzoom: 0, maxzoom: maxZoom }],
        geoshelf: { stamp: options.stamp, tiler_version: TILER_VERSION, features: staged.count, max_tile_bytes: cap, dropped },
      },
    });
    return { minZoom: 0, maxZoom, tiles: count, largestTileBytes: largest, dropped, bytes: result.bytes, ms: Math.round(performance.now() - started) };
  } catch (error) {
    throw explainFailure(error, doing);
  } finally {
    await staged.close();
  }
}

/**
 * A twin's lack of memory or disk said as what happened (`doing`) and what to do: DuckDB's out-of-memory error
 * rather than its advice to use fewer threads or keep no insertion order, which the twin cannot take; a full
 * temporary folder (the feature store's or DuckDB's writes) with the room a twin needs there.
 */
function explainFailure(error: unknown, doing: string): unknown {
  if (!(error instanceof Error)) return error;
  if (error.message.startsWith('Out of Memory Error')) {
    const limit = /\/([\d.]+ [KMG]iB) used\)/.exec(error.message)?.[1];
    return new Error(`${doing} took more than the ${limit ?? 'memory'} that DuckDB has for a twin`, { cause: error });
  }
  if ((error as NodeJS.ErrnoException).code === 'ENOSPC' || error.message.includes('No space left on device')) {
    return new Error(`the temporary folder ${tmpdir()} ran out of room while ${doing}: a twin needs about 6 times its GeoParquet file there (set TMPDIR to a larger disk)`, { cause: error });
  }
  return error;
}

/** The stamp recorded in an existing twin, or null when the file is missing, unreadable or not a twin. */
export async function readTwinStamp(target: string): Promise<string | null> {
  return (await readTwinMark(target))?.stamp ?? null;
}

/** The stamp and the layer's name recorded in an existing twin; null when the file is missing, unreadable or not a twin. */
export async function readTwinMark(target: string): Promise<{ stamp: string; layer: unknown } | null> {
  try {
    const { metadata } = await readPmTilesInfo(target);
    const stamp = stampOf(metadata);
    return stamp === null ? null : { stamp, layer: (metadata.vector_layers as { id?: unknown }[] | undefined)?.[0]?.id };
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
