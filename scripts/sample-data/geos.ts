/**
 * GEOS (geos-wasm 3.1.1, GEOS 3.13) for the conversion: OGC validity with its
 * reason, and GEOS MakeValid for geometries the conversion repairs. The
 * module is loaded once, asynchronously, before any table is built; after
 * that every call is synchronous. Geometries cross as ISO WKB, so doubles
 * pass unchanged both ways.
 */
import initGeosJs from 'geos-wasm';
import { decodeWkb, encodeWkb } from '../../core/geo/wkb.ts';
import type { Geometry } from '../../core/geo/wkb.ts';

type Geos = Awaited<ReturnType<typeof initGeosJs>>;

/** GEOSMakeValidMethods.GEOS_MAKE_VALID_STRUCTURE: rebuild areas from shells and holes (JTS GeometryFixer). */
const MAKE_VALID_STRUCTURE = 1;
const WKB_ISO = 2;

let loaded: Geos | null = null;

/** Loads GEOS once; GEOS notices (it prints each invalidity) are silenced. */
export async function loadGeos(): Promise<void> {
  loaded ??= await initGeosJs({ noticeHandler: () => {}, errorHandler: () => {} });
}

function requireGeos(): Geos {
  if (loaded === null) throw new Error('GEOS is not loaded: await loadGeos() before building tables');
  return loaded;
}

function withGeometry<T>(geometry: Geometry, use: (geos: Geos, pointer: number) => T): T {
  const geos = requireGeos();
  const wkb = encodeWkb(geometry);
  const buffer = geos.Module._malloc(wkb.length);
  geos.Module.HEAPU8.set(wkb, buffer);
  const pointer = geos.GEOSGeomFromWKB_buf(buffer, wkb.length);
  geos.Module._free(buffer);
  if (!pointer) throw new Error(`GEOS cannot read a ${geometry.type}`);
  try {
    return use(geos, pointer);
  } finally {
    geos.GEOSGeom_destroy(pointer);
  }
}

function writeGeometry(geos: Geos, pointer: number): Geometry {
  const writer = geos.GEOSWKBWriter_create();
  const size = geos.Module._malloc(4);
  try {
    geos.GEOSWKBWriter_setFlavor(writer, WKB_ISO);
    const bytes = geos.GEOSWKBWriter_write(writer, pointer, size);
    const length = geos.Module.getValue(size, 'i32');
    const wkb = geos.Module.HEAPU8.slice(bytes, bytes + length);
    geos.GEOSFree(bytes);
    return decodeWkb(wkb);
  } finally {
    geos.Module._free(size);
    geos.GEOSWKBWriter_destroy(writer);
  }
}

/** GEOS's reason a geometry is invalid ("Self-intersection[x y]"), or null when it is valid. */
export function findInvalidityReason(geometry: Geometry): string | null {
  return withGeometry(geometry, (geos, pointer) => {
    if (geos.GEOSisValid(pointer) === 1) return null;
    const reason = geos.GEOSisValidReason(pointer);
    const text = geos.Module.UTF8ToString(reason);
    geos.GEOSFree(reason);
    return text;
  });
}

/**
 * GEOS MakeValid with the structure method, dropping parts that collapse to
 * lines or points, then exterior rings turned clockwise as in the sources.
 * Null when nothing with an area is left.
 */
export function makeValidPolygonal(geometry: Geometry): Geometry | null {
  return withGeometry(geometry, (geos, pointer) => {
    const params = geos.GEOSMakeValidParams_create();
    geos.GEOSMakeValidParams_setMethod(params, MAKE_VALID_STRUCTURE);
    geos.GEOSMakeValidParams_setKeepCollapsed(params, 0);
    const valid = geos.GEOSMakeValidWithParams(pointer, params);
    geos.GEOSMakeValidParams_destroy(params);
    if (!valid) throw new Error(`GEOS MakeValid failed on a ${geometry.type}`);
    try {
      if (geos.GEOSisEmpty(valid) === 1) return null;
      geos.GEOSOrientPolygons(valid, 1);
      return writeGeometry(geos, valid);
    } finally {
      geos.GEOSGeom_destroy(valid);
    }
  });
}
