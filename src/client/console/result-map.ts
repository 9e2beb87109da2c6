/**
 * The result's map: the query service's vector tiles (server mode) or the decoded geometries (in-browser
 * mode), drawn by the shared map module, which is loaded with the first result that has geometries.
 */
import type { MapConfiguration } from '../../../schemas/query.ts';
import type { Bounds, MapView } from '../map/create-map.ts';

/** What the console app asks of the map. */
export interface ResultMap {
  /** Draws a server result's tiles; the browser fetches them from the query service itself. */
  showTiles(configuration: MapConfiguration, token: string, bounds: Promise<Bounds | null>): Promise<void>;
  /** Draws geometries read in the browser and frames them; `rows` is the result's row count, when more were left out. */
  showFeatures(features: GeoJSON.FeatureCollection, rows?: number): Promise<void>;
  hide(): void;
}

const LABEL = 'Map of the query result';

/** A map in `container`, created on first use and removed when a result has no geometry. */
export function createResultMap(container: HTMLElement, status: HTMLElement): ResultMap {
  let view: MapView | null = null;
  let kind: 'tiles' | 'features' | null = null;
  let generation = 0;

  const remove = () => {
    view?.remove();
    view = null;
    kind = null;
  };

  /** The view for a drawing of `wanted` kind; a view that drew the other kind is replaced, not mixed. */
  const prepare = async (wanted: 'tiles' | 'features', bounds: Bounds | null, run: number): Promise<MapView | null> => {
    container.hidden = false;
    if (view && kind === wanted) return view;
    remove();
    try {
      const { createMapView } = await import('../map/create-map.ts');
      const created = await createMapView(container, { label: LABEL, bounds });
      if (run !== generation) {
        created.remove();
        return null;
      }
      view = created;
      kind = wanted;
      return view;
    } catch (error) {
      status.textContent = `The map could not be shown: ${(error as Error).message}`;
      container.hidden = true;
      return null;
    }
  };

  return {
    async showTiles(configuration, token, boundsPromise) {
      const run = ++generation;
      status.textContent = 'Loading the map…';
      const bounds = await boundsPromise.catch(() => null);
      const target = await prepare('tiles', bounds, run);
      if (!target || run !== generation) return;
      target.showQueryTiles(configuration, token, bounds);
      status.textContent = bounds ? 'The map shows the whole result, framed by its extent.' : 'The map shows the whole result; its extent could not be computed.';
    },
    async showFeatures(features, rows) {
      const run = ++generation;
      status.textContent = 'Loading the map…';
      const target = await prepare('features', null, run);
      if (!target || run !== generation) return;
      target.showFeatures(features, { frame: true });
      const drawn = features.features.length;
      status.textContent = rows !== undefined && rows > drawn
        ? `The map shows the first ${drawn.toLocaleString('en')} geometries of the result's ${rows.toLocaleString('en')} rows.`
        : `The map shows ${drawn.toLocaleString('en')} ${drawn === 1 ? 'geometry' : 'geometries'} of the result.`;
    },
    hide() {
      generation++;
      remove();
      container.hidden = true;
      status.textContent = '';
    },
  };
}
