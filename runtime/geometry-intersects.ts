/**
 * The exact test of STAC item search's `intersects`: does a GeoJSON geometry meet an Item's footprint box? GEOS
 * answers it (the library PostGIS, GDAL, QGIS and shapely use; DESIGN.md decision 11), through `geos-wasm`, with
 * the geometry prepared once per request so each box costs a few microseconds. Lives outside `core/` because it
 * loads 2.5 MB of WebAssembly, imported lazily: a server that is never asked `intersects` never loads it.
 */
import type { FootprintFilter } from '../core/stac/search.ts';
import type { GeoJsonGeometry } from '../schemas/stac-api.ts';
import { openGeosContext, type Geos, type GeosContext } from './geos.ts';

/** A prepared geometry: the filter the search runs, and `release` to free it once the search is done. */
export interface PreparedFootprintFilter extends FootprintFilter {
  release(): void;
}

/** The parts of geos-wasm the `intersects` test adds to the shared ones. */
interface IntersectsGeos extends Geos {
  GEOSGeoJSONReader_create_r(context: number): number;
  GEOSGeoJSONReader_readGeometry_r(context: number, reader: number, text: number): number;
  GEOSPrepare_r(context: number, geometry: number): number;
  GEOSPreparedIntersects_r(context: number, prepared: number, geometry: number): number;
  GEOSGeom_createRectangle_r(context: number, xmin: number, ymin: number, xmax: number, ymax: number): number;
  GEOSPreparedGeom_destroy_r(context: number, prepared: number): unknown;
}

/** The process's GEOS context and its GeoJSON reader, made once. */
interface GeosSession extends GeosContext<IntersectsGeos> {
  reader: number;
}

/**
 * A box with no width or no height is widened by this many degrees (about 0.1 mm): GEOS builds such a box as a
 * polygon of zero area, which its predicates do not read as the line it is. A box that is one position stays a point.
 */
const DEGENERATE_WIDTH = 1e-9;

let loading: Promise<GeosSession> | undefined;

/**
 * Prepares an `intersects` geometry: its envelope for the index, and GEOS's prepared `intersects` for the exact
 * test. A geometry GEOS calls invalid (a self-intersecting polygon, say) is refused with GEOS's reason, as STAC API
 * allows, rather than answered with results nobody can explain.
 */
export async function prepareFootprintFilter(geometry: GeoJsonGeometry): Promise<{ ok: true; filter: PreparedFootprintFilter } | { ok: false; detail: string }> {
  loading ??= openSession();
  const { geos, context, reader, lastError, clearError } = await loading;
  const text = new TextEncoder().encode(JSON.stringify(geometry));
  const buffer = geos.Module._malloc(text.length + 1);
  geos.Module.HEAPU8.set(text, buffer);
  geos.Module.HEAPU8[buffer + text.length] = 0;
  clearError();
  const parsed = geos.GEOSGeoJSONReader_readGeometry_r(context, reader, buffer);
  geos.Module._free(buffer);
  if (!parsed) return { ok: false, detail: `is not a geometry GEOS can read: ${lastError() || 'unknown reason'}` };
  if (geos.GEOSisValid_r(context, parsed) !== 1) {
    const reason = geos.GEOSisValidReason_r(context, parsed);
    const message = reason ? geos.Module.UTF8ToString(reason) : 'invalid';
    if (reason) geos.GEOSFree_r(context, reason);
    geos.GEOSGeom_destroy_r(context, parsed);
    return { ok: false, detail: `is not a valid geometry (GEOS: ${message}); repair it, for example with ST_MakeValid` };
  }
  const prepared = geos.GEOSPrepare_r(context, parsed);
  return {
    ok: true,
    filter: {
      envelope: geometryEnvelope(geometry),
      intersects(west, south, east, north) {
        const flatX = west === east && south !== north;
        const flatY = south === north && west !== east;
        const box = geos.GEOSGeom_createRectangle_r(context, west, south, flatX ? east + DEGENERATE_WIDTH : east, flatY ? north + DEGENERATE_WIDTH : north);
        const answer = geos.GEOSPreparedIntersects_r(context, prepared, box);
        geos.GEOSGeom_destroy_r(context, box);
        if (answer === 2) throw new Error(`GEOS could not test intersects: ${lastError()}`);
        return answer === 1;
      },
      release() {
        geos.GEOSPreparedGeom_destroy_r(context, prepared);
        geos.GEOSGeom_destroy_r(context, parsed);
      },
    },
  };
}

/** [west, south, east, north] of every position of a geometry, taken as it is (GeoJSON geometries are cut at ±180°). */
export function geometryEnvelope(geometry: GeoJsonGeometry): [number, number, number, number] {
  const box: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  const visit = (value: unknown): void => {
    if (!Array.isArray(value)) return;
    if (typeof value[0] === 'number') {
      box[0] = Math.min(box[0], value[0]);
      box[1] = Math.min(box[1], value[1] as number);
      box[2] = Math.max(box[2], value[0]);
      box[3] = Math.max(box[3], value[1] as number);
    } else value.forEach(visit);
  };
  if (geometry.type === 'GeometryCollection') geometry.geometries.forEach((part) => visit(part.coordinates));
  else visit(geometry.coordinates);
  return box;
}

async function openSession(): Promise<GeosSession> {
  const session = await openGeosContext<IntersectsGeos>();
  return { ...session, reader: session.geos.GEOSGeoJSONReader_create_r(session.context) };
}
