/**
 * One GEOS context of `geos-wasm` with its own error handler, shared by the validity check and the `intersects`
 * filter. Importing this module loads nothing: the 2.5 MB of WebAssembly is loaded by `openGeosContext`, which
 * its callers call lazily.
 */

/**
 * The parts of geos-wasm every caller uses; its bundled types mistype the Emscripten runtime helpers. A caller
 * extends it with the functions it calls and passes its own interface to `openGeosContext`.
 */
export interface Geos {
  Module: {
    HEAPU8: Uint8Array;
    _malloc(size: number): number;
    _free(pointer: number): void;
    UTF8ToString(pointer: number): string;
    addFunction(fn: (message: number) => void, signature: string): number;
  };
  GEOS_init_r(): number;
  GEOSContext_setErrorMessageHandler_r(context: number, handler: number, data: number): number;
  GEOSisValid_r(context: number, geometry: number): number;
  GEOSisValidReason_r(context: number, geometry: number): number;
  GEOSGeom_destroy_r(context: number, geometry: number): unknown;
  GEOSFree_r(context: number, pointer: number): unknown;
}

/** A GEOS context (the handle every `_r` function takes) and the last error GEOS reported on it. */
export interface GeosContext<G extends Geos = Geos> {
  geos: G;
  context: number;
  /** The last message GEOS reported on this context, or '' since `clearError`. */
  lastError(): string;
  /** Forgets the last message, so that the next failure is not explained by an older one. */
  clearError(): void;
}

/**
 * Loads geos-wasm and opens a context with an own error handler: geos-wasm's default handler throws through the
 * WebAssembly frames, and another caller of initGeosJs may have installed a different one.
 * @example const { geos, context, lastError } = await openGeosContext<ValidityGeos>();
 */
export async function openGeosContext<G extends Geos = Geos>(): Promise<GeosContext<G>> {
  const { default: initGeosJs } = await import('geos-wasm');
  const geos = (await initGeosJs()) as unknown as G;
  const context = geos.GEOS_init_r();
  let lastError = '';
  const onError = geos.Module.addFunction((message: number) => {
    lastError = geos.Module.UTF8ToString(message);
  }, 'vii');
  geos.GEOSContext_setErrorMessageHandler_r(context, onError, 0);
  return {
    geos,
    context,
    lastError: () => lastError,
    clearError: () => {
      lastError = '';
    },
  };
}

/** The GeoJSON reader of GEOS, which the `intersects` test and the CQL2 spatial functions read geometries with. */
export interface GeoJsonGeos extends Geos {
  GEOSGeoJSONReader_create_r(context: number): number;
  GEOSGeoJSONReader_readGeometry_r(context: number, reader: number, text: number): number;
}

/**
 * Reads a GeoJSON geometry (its JSON text) with a reader of `GEOSGeoJSONReader_create_r`; 0 when GEOS cannot,
 * `lastError` then saying why. The caller destroys the geometry.
 */
export function readGeoJsonGeometry({ geos, context, clearError }: GeosContext<GeoJsonGeos>, reader: number, text: string): number {
  const bytes = new TextEncoder().encode(text);
  const buffer = geos.Module._malloc(bytes.length + 1);
  geos.Module.HEAPU8.set(bytes, buffer);
  geos.Module.HEAPU8[buffer + bytes.length] = 0;
  clearError();
  const geometry = geos.GEOSGeoJSONReader_readGeometry_r(context, reader, buffer);
  geos.Module._free(buffer);
  return geometry;
}
