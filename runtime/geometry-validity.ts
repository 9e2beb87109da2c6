/**
 * Geometry validity by GEOS (DESIGN.md decision 11), the library PostGIS, GDAL, QGIS and shapely use, compiled
 * to WebAssembly by `geos-wasm`. Chosen over jsts after measuring both (README "The data dictionary"). Lives
 * outside `core/` because it loads 2.5 MB of WebAssembly; it is imported lazily, so a process that never
 * checks validity (a query worker computing bounds) never loads it.
 */
import type { InvalidGeometryReason } from '../schemas/file-metadata.ts';
import { openGeosContext, type Geos } from './geos.ts';

/** Checks WKB geometries one at a time. Synchronous and not re-entrant, like the WKB readers. */
export interface GeometryValidator {
  /** Why GEOS calls `bytes` invalid, or undefined when it is valid; see `reasonOfReadError` for what it cannot read. */
  check(bytes: Uint8Array): InvalidGeometryReason | undefined;
}

/** GEOS's validity messages (TopologyValidationError::errMsg, GEOS 3.13; JTS words one differently). */
const REASONS_BY_MESSAGE: Readonly<Record<string, InvalidGeometryReason>> = {
  'Topology Validation Error': 'topology-error',
  'Repeated Point': 'repeated-point',
  'Hole lies outside shell': 'hole-outside-shell',
  'Holes are nested': 'nested-holes',
  'Interior is disconnected': 'disconnected-interior',
  'Self-intersection': 'self-intersection',
  'Ring Self-intersection': 'ring-self-intersection',
  'Nested shells': 'nested-shells',
  'Duplicate Rings': 'duplicate-rings',
  'Too few points in geometry component': 'too-few-points',
  'Too few distinct points in geometry component': 'too-few-points',
  'Invalid Coordinate': 'invalid-coordinate',
  'Ring is not closed': 'unclosed-ring',
};

/**
 * The reason a GEOS validity message names (`GEOSisValidReason`), its location dropped.
 * @example reasonOfGeosMessage('Ring Self-intersection[5 5]') // 'ring-self-intersection'
 */
export function reasonOfGeosMessage(message: string): InvalidGeometryReason {
  return REASONS_BY_MESSAGE[message.replace(/\[[^\]]*\]$/, '')] ?? 'topology-error';
}

/**
 * The reason for a geometry GEOS's WKB reader refused to build. GEOS builds no ring that is not closed and no
 * line of one point, so those arrive here rather than as validity reasons; anything else it cannot read is
 * `malformed`.
 * @example reasonOfReadError('IllegalArgumentException: Points of LinearRing do not form a closed linestring') // 'unclosed-ring'
 */
export function reasonOfReadError(message: string): InvalidGeometryReason {
  if (/do not form a closed linestring/i.test(message)) return 'unclosed-ring';
  if (/Invalid number of points in LinearRing|point array must contain 0 or >1 elements/i.test(message)) return 'too-few-points';
  return 'malformed';
}

/** The parts of geos-wasm the validity check adds to the shared ones. */
interface ValidityGeos extends Geos {
  GEOSGeomFromWKB_buf_r(context: number, wkb: number, size: number): number;
}

let loading: Promise<GeometryValidator> | undefined;

/** The process's validator; the first call loads and compiles GEOS (about 50 ms). */
export function loadGeometryValidator(): Promise<GeometryValidator> {
  loading ??= createValidator();
  return loading;
}

async function createValidator(): Promise<GeometryValidator> {
  const { geos, context, lastError, clearError } = await openGeosContext<ValidityGeos>();
  let buffer = 0;
  let capacity = 0;

  return {
    check(bytes) {
      if (bytes.length > capacity) {
        if (buffer) geos.Module._free(buffer);
        capacity = Math.max(65536, 2 ** Math.ceil(Math.log2(bytes.length)));
        buffer = geos.Module._malloc(capacity);
      }
      // HEAPU8 is replaced when the WebAssembly memory grows, so it is looked up on every call.
      geos.Module.HEAPU8.set(bytes, buffer);
      clearError();
      const geometry = geos.GEOSGeomFromWKB_buf_r(context, buffer, bytes.length);
      if (!geometry) return reasonOfReadError(lastError());
      try {
        if (geos.GEOSisValid_r(context, geometry) === 1) return undefined;
        // Asked only for the few invalid geometries: it runs the whole check again to word the reason.
        const text = geos.GEOSisValidReason_r(context, geometry);
        if (!text) return 'topology-error';
        const message = geos.Module.UTF8ToString(text);
        geos.GEOSFree_r(context, text);
        return reasonOfGeosMessage(message);
      } finally {
        geos.GEOSGeom_destroy_r(context, geometry);
      }
    },
  };
}
