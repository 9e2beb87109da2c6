/**
 * Mapbox Vector Tile (spec 2.1) encoding of query results, for `GET /api/queries/{id}/tiles/{z}/{x}/{y}.mvt`.
 *
 * The caller takes `tileBounds(z, x, y, buffer)`, and for a tile at the world's west or east edge
 * `tileWrapBounds`, to fetch the rows that may touch the tile, then streams them through `encodeTile`,
 * which writes one layer in a single pass: read WKB straight into tile coordinates (edges the short way
 * across ±180°), clip each world copy that meets the tile grown by its buffer, simplify for the zoom, snap
 * to the integer grid, enforce ring winding, and write the feature with its properties as tags. Clipping
 * keeps every edge within the buffered tile: none spans more than `extent + 2 * buffer` in x or y.
 */
import { PbfWriter } from 'pbf';
import { createProjectedGeometry, readProjectedWkb } from './mvt-read.ts';
import { encodeLines, encodePoints, encodePolygons, findCopies } from './mvt-shape.ts';
import type { ShapeWindow } from './mvt-shape.ts';
import { assertTileArguments, createTileProjection } from './mvt-tile-math.ts';
import {
  GEOMETRY_LINESTRING,
  GEOMETRY_POINT,
  GEOMETRY_POLYGON,
  createLayerScratch,
  writeFeature,
  writeLayerHeader,
  writeLayerTables,
} from './mvt-write.ts';

export { MAX_TILE_ZOOM, MERCATOR_MAX_LATITUDE, isValidTile, tileBounds, tileWrapBounds } from './mvt-tile-math.ts';

/** One feature from a query result: WKB geometry in WGS84 lon/lat, plus attribute values. */
export interface TileFeature {
  wkb: Uint8Array;
  properties: Record<string, string | number | boolean | null>;
}

/** How `encodeTile` writes its one layer. */
export interface TileOptions {
  /** Name of the layer, e.g. `result`. */
  layerName: string;
  /** Tile units per tile side; default 4096. */
  extent?: number;
  /** Tile units kept beyond each tile edge, so that styles can draw across edges; default 64. */
  buffer?: number;
  /** Cap on features written into the tile. */
  maxFeatures: number;
}

/** An encoded tile. `bytes` is empty when no feature landed in the tile (the route answers 204). */
export interface EncodedTile {
  bytes: Uint8Array;
  features: number;
  /** True when more features would have landed in the tile than `maxFeatures` allowed. */
  truncated: boolean;
}

/** Default tile extent, as in the MVT spec's examples and every common renderer. */
export const DEFAULT_TILE_EXTENT = 4096;

/** Default buffer in tile units: 64 of 4096, 1/64 of the tile on each side. */
export const DEFAULT_TILE_BUFFER = 64;

/** Douglas–Peucker tolerance in tile units: one unit, a sixteenth of a pixel on a 256-pixel tile. */
const SIMPLIFY_TOLERANCE = 1;

const TILE_LAYERS_FIELD = 3;

/**
 * Encodes the features that land in tile z/x/y as one MVT layer. Features whose WKB is malformed, holds a
 * non-finite coordinate, or leaves nothing inside the buffered tile are skipped. A GeometryCollection
 * becomes one feature per geometry type it holds (points, lines, polygons), each with all its properties.
 * Features carry no id: a sequential id would differ from tile to tile for the same row.
 * Near ±180° a feature is drawn in each world copy that meets the buffered tile, so a tile at the world's
 * edge also holds what lies within its buffer on the other side, shifted by 360°; a ring that winds around
 * a pole (Antarctica read from world-atlas) becomes a band over the world's width, closed along the pole.
 * @throws RangeError for an invalid tile address or invalid options.
 * @example encodeTile(rows, 4, 8, 5, { layerName: 'result', maxFeatures: 50_000 })
 */
export function encodeTile(features: Iterable<TileFeature>, z: number, x: number, y: number, options: TileOptions): EncodedTile {
  const extent = options.extent ?? DEFAULT_TILE_EXTENT;
  const buffer = options.buffer ?? DEFAULT_TILE_BUFFER;
  assertTileArguments(z, x, y, buffer, extent);
  if (!Number.isInteger(options.maxFeatures) || options.maxFeatures < 0) {
    throw new RangeError(`maxFeatures must be an integer >= 0, got ${options.maxFeatures}`);
  }
  const projection = createTileProjection(z, x, y, extent);
  const window: ShapeWindow = { min: -buffer, max: extent + buffer, tolerance: SIMPLIFY_TOLERANCE, world: 2 ** z * extent };
  const geometry = createProjectedGeometry();
  const scratch = createLayerScratch();
  const pbf = new PbfWriter();
  let written = 0;
  let truncated = false;

  const writeLayer = () => {
    writeLayerHeader(pbf, options.layerName, extent);
    for (const feature of features) {
      if (!readProjectedWkb(feature.wkb, projection, geometry)) continue;
      const copies = findCopies(geometry, window);
      if (copies === 0) continue;
      for (let type = GEOMETRY_POINT; type <= GEOMETRY_POLYGON; type++) {
        const encoded =
          type === GEOMETRY_POINT
            ? geometry.points.length > 0 && encodePoints(geometry.points, window, copies, scratch.commands)
            : type === GEOMETRY_LINESTRING
              ? geometry.lines.length > 0 && encodeLines(geometry, window, copies, scratch.commands)
              : geometry.polygons.length + geometry.bands.length > 0 && encodePolygons(geometry, window, copies, scratch.commands);
        if (!encoded) continue;
        if (written === options.maxFeatures) {
          truncated = true;
          break;
        }
        writeFeature(pbf, scratch, type, feature.properties);
        written++;
      }
      if (truncated) break;
    }
    writeLayerTables(pbf, scratch.tables);
  };
  pbf.writeTag(TILE_LAYERS_FIELD, 2);
  pbf.writeRawMessage(writeLayer, undefined);
  return { bytes: written === 0 ? new Uint8Array(0) : pbf.finish(), features: written, truncated };
}
