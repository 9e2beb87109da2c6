/**
 * Each zoom's tiles of a twin made from the feature store (generator/tiles/twin-store.ts) through buckets spilled
 * to disk, so that neither JavaScript nor DuckDB ever holds or sorts more than a bucket of a zoom's features.
 *
 * A zoom's tiles are laid in tile-id order into buckets of at most BUCKET_BYTES. One sequential read of the
 * store places each feature in the tiles its box meets, as the staging database's `tilesOfFeatures` counts them
 * (keeping only the first feature of each finest cell of a tile that will be thinned), and appends it to its
 * tile's bucket. Each bucket is then read back whole, its records grouped by tile (they are in file order
 * already), and its tiles handed out one at a time. Before, DuckDB sorted each zoom's rows with their geometry
 * and columns; that sort ran out of its memory on a file of 100M points (BENCHMARKS.md). */
import { closeSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_TILE_BUFFER, DEFAULT_TILE_EXTENT, type TileFeature } from '../../core/geo/mvt.ts';
import { zxyToTileId } from '../../runtime/pmtiles-tile-id.ts';
import { readFeature, readStore, SpillFile, STORE_HEAD } from './twin-store.ts';

/** A tile as it comes out of the staged features: its address, its features in file order, and their cells. */
export interface StagedTile {
  x: number;
  y: number;
  /** Features of the tile in all: more than `features` when only the first of each cell came out. */
  count: number;
  /** The tile's features (all, or the first of each finest cell), in file order. */
  features: TileFeature[];
  /** Each feature's cell of the finest grid, `cx * 2^FINEST_GRID_LEVEL + cy`, by its box's centre. */
  cells: number[];
}

/**
 * Finest thinning grid, as a power of two of cells per tile side: 32, a cell of 8 pixels of a 256-pixel tile
 * (16 of MapLibre's 512), about the width of a drawn point. A thinned tile keeps at most one feature per cell
 * however much room the size cap leaves: finer grids drew no more on screen and cost more to draw. With 256
 * cells, the 1M-point twin's world view was four tiles of 4,096 points (340 KB each), and the file page took
 * 1.1–2.5 s to its first screen in headless Chromium on 2 cores, software-rendered; see BENCHMARKS.md.
 */
export const FINEST_GRID_LEVEL = 5;
const CELLS = 2 ** FINEST_GRID_LEVEL;

/**
 * Bytes of a bucket, read back whole to hand out its tiles: with the tile being encoded, what a zoom holds in
 * JavaScript whatever the file's size.
 */
export const BUCKET_BYTES = 64 * 1024 ** 2;

/**
 * Payloads (geometry and properties) larger than this go into a bucket as a reference to the store rather than
 * a copy, so that a large polygon met by hundreds of tiles is not copied into each: the country polygons of
 * 1:10m, copied, took a twin to 0.6 GB (BENCHMARKS.md).
 */
const REFERENCE_BYTES = 1024;

/** Buffer of each bucket being written. */
const BUCKET_BUFFER = 128 * 1024;

/** Buckets written in one read of the store at most (each holds a file open). */
const MOST_OPEN_BUCKETS = 256;

/**
 * Bucket record: the length of what follows the head (u32), the tile's place in its bucket (u32), the finest
 * cell (u16), whether a copy or a reference follows (u8), then the payload, or the record's place in the store
 * (f64) and the payload's length (u32).
 */
const BUCKET_HEAD = 4 + 4 + 2 + 1;
const REFERENCE = 8 + 4;

/** A zoom's occupied tiles, from the staging database: their keys (`x·2^z + y`) ascending, and features in each. */
export interface ZoomCounts {
  keys: Float64Array;
  counts: Float64Array;
}

/** Options of {@link tilesFromStore}. */
export interface StoreTilesOptions {
  /** The store, its size, its largest payload, and the folder its buckets are written in. */
  store: { path: string; bytes: number; count: number; largest: number; folder: string };
  /** Bytes of a bucket; BUCKET_BYTES by default. */
  bucketBytes?: number;
  /** Property names, in the order the store holds them. */
  names: string[];
  z: number;
  /** A tile of more features than this gives the first of each finest cell only. */
  fullLimit: number;
  counts: ZoomCounts;
}

/**
 * Zoom z's tiles in tile-id order, each with its features (or the first of each finest cell), in file order, as
 * the staging database's `tilesOfFeatures` places them.
 */
export function* tilesFromStore({ store, names, z, fullLimit, counts: { keys, counts }, bucketBytes = BUCKET_BYTES }: StoreTilesOptions): Generator<StagedTile> {
  const n = 2 ** z;
  const plan = planBuckets({ store, z, fullLimit, counts: { keys, counts }, bucketBytes });
  for (let pass = 0; pass + 1 < plan.passStarts.length; pass++) {
    const [first, end] = [plan.passStarts[pass]!, plan.passStarts[pass + 1]!];
    if (first === end) continue;
    const paths = spillZoom({ store, z, fullLimit, keys, counts, bucketOf: plan.bucketOf, placeOf: plan.placeOf, first, end });
    for (let bucket = first; bucket < end; bucket++) {
      const path = paths[bucket - first]!;
      try {
        yield* tilesOfBucket({ path, store: store.path, names, tiles: plan.order.subarray(plan.bucketStarts[bucket]!, plan.bucketStarts[bucket + 1]!), keys, counts, n });
      } finally {
        rmSync(path, { force: true });
      }
    }
  }
}

/** Where a zoom's tiles go: their order by id, each one's bucket and place in it, and where buckets and reads of the store start. */
interface BucketPlan {
  order: Uint32Array;
  bucketOf: Int32Array;
  placeOf: Int32Array;
  /** The rank (in id order) of each bucket's first tile, then the number of tiles. */
  bucketStarts: number[];
  /** The first bucket of each read of the store, then the number of buckets. */
  passStarts: number[];
}

/**
 * The zoom's tiles in id order cut into buckets of at most `bucketBytes`, and the buckets into reads of the store
 * that each spill at most about the store's size (or 16 buckets) and keep at most MOST_OPEN_BUCKETS files open.
 */
function planBuckets({ store, z, fullLimit, counts: { keys, counts }, bucketBytes: bucketLimit }: Omit<StoreTilesOptions, 'names' | 'bucketBytes'> & { bucketBytes: number }): BucketPlan {
  const n = 2 ** z;
  const tiles = keys.length;
  const ids = new Float64Array(tiles);
  for (let t = 0; t < tiles; t++) ids[t] = zxyToTileId(z, Math.floor(keys[t]! / n), keys[t]! % n);
  const order = Uint32Array.from({ length: tiles }, (_, t) => t).sort((a, b) => ids[a]! - ids[b]!);
  // For a bucket, each record is taken to be as large as the largest, so that no bucket is larger than asked;
  // for the disk a read of the store fills, as large as the average.
  const largest = BUCKET_HEAD + Math.min(store.largest, REFERENCE_BYTES);
  const average = BUCKET_HEAD + Math.min(Math.max(0, store.bytes / Math.max(1, store.count) - STORE_HEAD), REFERENCE_BYTES);
  const passLimit = Math.max(16 * bucketLimit, store.bytes);
  const plan: BucketPlan = { order, bucketOf: new Int32Array(tiles), placeOf: new Int32Array(tiles), bucketStarts: [], passStarts: [0] };
  let bucketBytes = Infinity;
  let passBytes = 0;
  for (let rank = 0; rank < tiles; rank++) {
    const t = order[rank]!;
    const records = Math.min(counts[t]!, counts[t]! > fullLimit ? CELLS * CELLS : Infinity);
    if (bucketBytes + records * largest > bucketLimit && bucketBytes > 0) {
      const bucket = plan.bucketStarts.length;
      if (bucket > 0 && (passBytes + records * average > passLimit || bucket - plan.passStarts.at(-1)! >= MOST_OPEN_BUCKETS)) {
        plan.passStarts.push(bucket);
        passBytes = 0;
      }
      plan.bucketStarts.push(rank);
      bucketBytes = 0;
    }
    plan.bucketOf[t] = plan.bucketStarts.length - 1;
    plan.placeOf[t] = rank - plan.bucketStarts.at(-1)!;
    bucketBytes += records * largest;
    passBytes += records * average;
  }
  plan.bucketStarts.push(tiles);
  plan.passStarts.push(plan.bucketStarts.length - 1);
  return plan;
}

/** What {@link spillZoom} takes: the tiles' buckets and places, and the buckets [first, end) to write in this read. */
interface SpillOptions {
  store: StoreTilesOptions['store'];
  z: number;
  fullLimit: number;
  keys: Float64Array;
  counts: Float64Array;
  bucketOf: Int32Array;
  placeOf: Int32Array;
  first: number;
  end: number;
}

/** Reads the store once and appends each feature to the buckets of its tiles in [first, end); their paths. */
function spillZoom({ store, z, fullLimit, keys, counts, bucketOf, placeOf, first, end }: SpillOptions): string[] {
  const n = 2 ** z;
  const margin = DEFAULT_TILE_BUFFER / DEFAULT_TILE_EXTENT;
  const scale = n * CELLS;
  const buckets = Array.from({ length: end - first }, (_, index) => new SpillFile(join(store.folder, `z${z}-b${first + index}`), BUCKET_BUFFER));
  // Cells already taken in each tile that will be thinned: only the first feature of each comes out.
  const taken = new Map<number, Uint8Array>();
  const place = (buffer: Buffer, at: number, payload: number, position: number, tx: number, ty: number, cx: number, cy: number) => {
    const t = findKey(keys, tx * n + ty);
    const bucket = bucketOf[t]!;
    if (bucket < first || bucket >= end) return;
    const cell = Math.min(CELLS - 1, Math.max(0, Math.floor(cx * scale - tx * CELLS))) * CELLS + Math.min(CELLS - 1, Math.max(0, Math.floor(cy * scale - ty * CELLS)));
    if (counts[t]! > fullLimit) {
      let cells = taken.get(t);
      if (!cells) taken.set(t, (cells = new Uint8Array(CELLS * CELLS)));
      if (cells[cell]) return;
      cells[cell] = 1;
    }
    const file = buckets[bucket - first]!;
    const referred = payload > REFERENCE_BYTES;
    const to = file.reserve(BUCKET_HEAD + (referred ? REFERENCE : payload));
    const { buffer: target, view } = file;
    view.setUint32(to, referred ? REFERENCE : payload, true);
    view.setUint32(to + 4, placeOf[t]!, true);
    view.setUint16(to + 8, cell, true);
    target[to + 10] = referred ? 1 : 0;
    if (referred) {
      view.setFloat64(to + BUCKET_HEAD, position + STORE_HEAD, true);
      view.setUint32(to + BUCKET_HEAD + 8, payload, true);
    } else buffer.copy(target, to + BUCKET_HEAD, at + STORE_HEAD, at + STORE_HEAD + payload);
  };
  // Every file is closed, even after a write failed (a full disk); the first failure is thrown.
  let failure: { error: unknown } | undefined;
  try {
    readStore(store.path, (buffer, view, at, payload, position) => {
      const x0 = view.getFloat64(at + 4, true);
      const y0 = view.getFloat64(at + 12, true);
      const x1 = view.getFloat64(at + 20, true);
      const y1 = view.getFloat64(at + 28, true);
      const cx = (x0 + x1) / 2;
      const cy = (y0 + y1) / 2;
      const tx0 = Math.floor(x0 * n - margin);
      const tx1 = Math.floor(x1 * n + margin);
      const ty0 = Math.max(0, Math.floor(y0 * n - margin));
      const ty1 = Math.min(n - 1, Math.floor(y1 * n + margin));
      // A box as wide as the world meets every column; a narrower one meets its columns wrapped at ±180°, which
      // are distinct when fewer than n.
      const everyColumn = tx1 - tx0 + 1 >= n;
      for (let v = everyColumn ? 0 : tx0; v <= (everyColumn ? n - 1 : tx1); v++) {
        const tx = ((v % n) + n) % n;
        for (let ty = ty0; ty <= ty1; ty++) place(buffer, at, payload, position, tx, ty, cx, cy);
      }
    });
  } catch (error) {
    failure = { error };
  }
  for (const bucket of buckets) {
    try {
      bucket.close();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
  return buckets.map((bucket) => bucket.path);
}

/** The index of `key` in the ascending `keys`; every tile a feature meets was counted, so it is there. */
function findKey(keys: Float64Array, key: number): number {
  let low = 0;
  let high = keys.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (keys[middle]! < key) low = middle + 1;
    else high = middle;
  }
  if (keys[low] !== key) throw new Error(`tile ${key} of a feature was not counted`);
  return low;
}

/** A bucket to read back: its file, the store its references point into, and its tiles (indexes in id order). */
interface BucketOptions {
  path: string;
  store: string;
  names: string[];
  tiles: Uint32Array;
  keys: Float64Array;
  counts: Float64Array;
  n: number;
}

/** A bucket's tiles, each with its records grouped, in the order they were written. */
function* tilesOfBucket({ path, store, names, tiles, keys, counts, n }: BucketOptions): Generator<StagedTile> {
  const buffer = readFileSync(path);
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.length);
  const starts = new Int32Array(tiles.length + 1);
  let records = 0;
  for (let at = 0; at < buffer.length; at += BUCKET_HEAD + view.getUint32(at, true), records++) starts[view.getUint32(at + 4, true) + 1]!++;
  for (let place = 0; place < tiles.length; place++) starts[place + 1]! += starts[place]!;
  const offsets = new Int32Array(records);
  const next = starts.slice(0, tiles.length);
  for (let at = 0; at < buffer.length; at += BUCKET_HEAD + view.getUint32(at, true)) offsets[next[view.getUint32(at + 4, true)]!++] = at;
  const fd = openSync(store, 'r');
  try {
    for (let place = 0; place < tiles.length; place++) {
      const t = tiles[place]!;
      const key = keys[t]!;
      // The staging database counted this tile's features; the placing here must have found them too.
      if (starts[place] === starts[place + 1]) throw new Error(`tile ${key} was counted but given no feature`);
      const tile: StagedTile = { x: Math.floor(key / n), y: key % n, count: counts[t]!, features: [], cells: [] };
      for (let record = starts[place]!; record < starts[place + 1]!; record++) {
        const at = offsets[record]!;
        tile.cells.push(view.getUint16(at + 8, true));
        if (buffer[at + 10] === 0) tile.features.push(readFeature(buffer, view, at + BUCKET_HEAD, names));
        else {
          const payload = Buffer.allocUnsafe(view.getUint32(at + BUCKET_HEAD + 8, true));
          const position = view.getFloat64(at + BUCKET_HEAD, true);
          for (let read = 0; read < payload.length;) {
            const got = readSync(fd, payload, read, payload.length - read, position + read);
            if (got === 0) throw new Error('the feature store ends inside a record');
            read += got;
          }
          tile.features.push(readFeature(payload, new DataView(payload.buffer, payload.byteOffset, payload.length), 0, names));
        }
      }
      yield tile;
    }
  } finally {
    closeSync(fd);
  }
}
