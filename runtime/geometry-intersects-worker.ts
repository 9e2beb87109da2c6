/**
 * The worker thread of STAC item search's `intersects` (runtime/geometry-intersects.ts starts it): it checks a
 * geometry against GeoJsonGeometrySchema, has GEOS read it, refuses it when GEOS calls it invalid, prepares it, and
 * tests it against every footprint box that meets its envelope. All of that takes up to about a second for the
 * largest geometry allowed, which the server's main thread could not spare.
 */
import { parentPort } from 'node:worker_threads';
import { hashText } from '../core/api/stac/page-token.ts';
import { GeoJsonGeometrySchema, type GeoJsonGeometry } from '../schemas/stac-api.ts';
import { openGeosContext, readGeoJsonGeometry, type GeoJsonGeos, type GeosContext } from './geos.ts';

/** A geometry to test (as parsed from JSON) against the footprint boxes of a search index: eight numbers per entry. */
export interface FootprintJob {
  id: number;
  geometry: unknown;
  boxes: Float64Array;
}

/**
 * Per entry 1 when the geometry meets its footprint, and a digest of the geometry for page tokens; or why the
 * geometry was refused.
 */
export type FootprintVerdict = { id: number; ok: true; hits: Uint8Array; digest: string } | { id: number; ok: false; detail: string };

/** The parts of geos-wasm the `intersects` test adds to the shared ones. */
interface IntersectsGeos extends GeoJsonGeos {
  GEOSPrepare_r(context: number, geometry: number): number;
  GEOSPreparedIntersects_r(context: number, prepared: number, geometry: number): number;
  GEOSGeom_createRectangle_r(context: number, xmin: number, ymin: number, xmax: number, ymax: number): number;
  GEOSPreparedGeom_destroy_r(context: number, prepared: number): unknown;
}

/** The thread's GEOS context and its GeoJSON reader, made once. */
interface GeosSession extends GeosContext<IntersectsGeos> {
  reader: number;
}

/**
 * A box with no width or no height is widened by this many degrees (about 0.1 mm): GEOS builds such a box as a
 * polygon of zero area, which its predicates do not read as the line it is. A box that is one position stays a point.
 */
const DEGENERATE_WIDTH = 1e-9;

let session: Promise<GeosSession> | undefined;

parentPort?.on('message', (job: FootprintJob) => {
  testFootprints(job).then(
    (verdict) => parentPort?.postMessage(verdict, verdict.ok ? [verdict.hits.buffer as ArrayBuffer] : []),
    (error: unknown) => parentPort?.postMessage({ id: job.id, error: (error as Error).message ?? String(error) }),
  );
});

/**
 * Tests one geometry. A geometry that is not GeoJSON within the limits, or that GEOS cannot read or calls invalid
 * (a self-intersecting polygon, say), is refused with the reason, as STAC API allows, rather than answered with
 * results nobody can explain.
 */
async function testFootprints({ id, geometry, boxes }: FootprintJob): Promise<FootprintVerdict> {
  const checked = GeoJsonGeometrySchema.safeParse(geometry);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const path = issue.path.map(String).join('.');
    return { id, ok: false, detail: `is not a usable GeoJSON geometry: ${path ? `${path}: ` : ''}${issue.message}` };
  }
  session ??= openSession();
  const opened = await session;
  const { geos, context, reader, lastError } = opened;
  const text = JSON.stringify(geometry);
  const parsed = readGeoJsonGeometry(opened, reader, text);
  if (!parsed) return { id, ok: false, detail: `is not a geometry GEOS can read: ${lastError() || 'unknown reason'}` };
  try {
    if (geos.GEOSisValid_r(context, parsed) !== 1) {
      const reason = geos.GEOSisValidReason_r(context, parsed);
      const message = reason ? geos.Module.UTF8ToString(reason) : 'invalid';
      if (reason) geos.GEOSFree_r(context, reason);
      return { id, ok: false, detail: `is not a valid geometry (GEOS: ${message}); repair it, for example with ST_MakeValid` };
    }
    const prepared = geos.GEOSPrepare_r(context, parsed);
    try {
      const meets = (west: number, south: number, east: number, north: number) => {
        const flatX = west === east && south !== north;
        const flatY = south === north && west !== east;
        const box = geos.GEOSGeom_createRectangle_r(context, west, south, flatX ? east + DEGENERATE_WIDTH : east, flatY ? north + DEGENERATE_WIDTH : north);
        const answer = geos.GEOSPreparedIntersects_r(context, prepared, box);
        geos.GEOSGeom_destroy_r(context, box);
        if (answer === 2) throw new Error(`GEOS could not test intersects: ${lastError()}`);
        return answer === 1;
      };
      return { id, ok: true, hits: testBoxes(boxes, geometryEnvelope(checked.data), meets), digest: hashText(text) };
    } finally {
      geos.GEOSPreparedGeom_destroy_r(context, prepared);
    }
  } finally {
    geos.GEOSGeom_destroy_r(context, parsed);
  }
}

/**
 * Per entry, whether one of its boxes (two per entry; NaN when absent, which fails every comparison) meets the
 * envelope, closed intervals, and then the geometry itself.
 */
function testBoxes(boxes: Float64Array, [left, bottom, right, top]: readonly number[], meets: (west: number, south: number, east: number, north: number) => boolean): Uint8Array {
  const hits = new Uint8Array(boxes.length / 8);
  for (let entry = 0; entry < hits.length; entry++) {
    for (let at = entry * 8; at < entry * 8 + 8; at += 4) {
      const west = boxes[at]!;
      const south = boxes[at + 1]!;
      const east = boxes[at + 2]!;
      const north = boxes[at + 3]!;
      if (!(west <= right! && east >= left! && south <= top! && north >= bottom!)) continue;
      if (meets(west, south, east, north)) {
        hits[entry] = 1;
        break;
      }
    }
  }
  return hits;
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
  const opened = await openGeosContext<IntersectsGeos>();
  return { ...opened, reader: opened.geos.GEOSGeoJSONReader_create_r(opened.context) };
}
