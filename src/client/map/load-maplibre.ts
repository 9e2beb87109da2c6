/**
 * Loads maplibre-gl, its worker and the map styles on first use, so a page
 * that imports the map module pays nothing until it draws a map. Vite puts
 * each of them in its own chunk or asset.
 */
// MapLibre 6 looks for its worker beside its own file, which a bundler moves; Vite builds the worker and gives its URL.
import workerUrl from 'maplibre-gl/dist/maplibre-gl-worker.mjs?worker&url';

/** The maplibre-gl module namespace. */
export type MapLibre = typeof import('maplibre-gl');

let loading: Promise<MapLibre> | null = null;

async function importMapLibre(): Promise<MapLibre> {
  const [maplibre] = await Promise.all([
    import('maplibre-gl'),
    import('maplibre-gl/dist/maplibre-gl.css'),
    import('../../styles/map.css'),
  ]);
  maplibre.setWorkerUrl(workerUrl);
  return maplibre;
}

/** maplibre-gl with its worker URL set and its CSS on the page; loaded once, retried after a failure. */
export function loadMapLibre(): Promise<MapLibre> {
  loading ??= importMapLibre().catch((error: unknown) => {
    loading = null;
    throw error;
  });
  return loading;
}
