/**
 * The one map of the web app (file preview, SQL console): a MapLibre map on
 * the site's own Natural Earth basemap that draws GeoJSON features, a query
 * result's vector tiles and a file's extent. Importing this module is cheap;
 * maplibre-gl loads when the first map is created.
 */
import type { FeatureCollection } from 'geojson';
import type { GeoJSONSource, Map as MapLibreMap } from 'maplibre-gl';
import type { MapConfiguration } from '../../../schemas/query.ts';
import { boundsOfFeatures, isValidBounds, toBoxRing, toCameraTarget } from './bounds.ts';
import type { Bounds } from './bounds.ts';
import { loadMapLibre, type MapLibre } from './load-maplibre.ts';
import { createDataLayers, createMapStyle, listDataLayerIds, SOURCE_IDS } from './map-style.ts';
import { createTileRequestTransform, readTilePrefix } from './tile-request.ts';
import type { TileAuth } from './tile-request.ts';

export type { Bounds } from './bounds.ts';

/** Where the site build puts land.geojson and borders.geojson. */
export const DEFAULT_BASEMAP_URL = '/_site/basemap';

/** Zoom for bounds that are a single point: a town and its surroundings. */
const POINT_ZOOM = 9;
/** Fitting a tiny box never zooms past this, so a few metres of extent still show where they are. */
const MAX_FIT_ZOOM = 14;
const EASE_MS = 400;
/** MapLibre draws the world 512 pixels wide at zoom 0. */
const WORLD_PIXELS = 512;

/**
 * The lowest zoom at which one copy of the world is as wide as the map: zoomed out further, a near-global layer
 * showed three small worlds side by side. It is the map's minimum zoom, so fitting bounds taller than the map
 * frames them across its whole width instead.
 */
export function worldFillZoom(width: number): number {
  return Math.max(0, Math.log2(Math.max(1, width) / WORLD_PIXELS));
}

export interface MapViewOptions {
  /** Accessible name of the map region (aria-label), e.g. "Map of the file's extent". */
  label: string;
  /** Initial frame; the whole world when absent or null. */
  bounds?: Bounds | null;
  /** Folder of the basemap files; default '/_site/basemap'. */
  basemapUrl?: string;
}

export interface MapView {
  map: MapLibreMap;
  /** Draws GeoJSON features (points, lines, polygons; replaces what showFeatures drew before) and frames them unless `frame: false`. */
  showFeatures(collection: FeatureCollection, options?: { frame?: boolean }): void;
  /** Draws a query result from its vector tiles, the token sent only to its tile URLs; replaces the previous result; frames `bounds` when given. */
  showQueryTiles(config: MapConfiguration, token: string, bounds?: Bounds | null): void;
  /**
   * Draws a whole file from its PMTiles archive (`url`, read with range requests, no server): the first vector
   * layer its metadata names (a twin has one). Resolves once the archive's tiles in view are drawn.
   */
  showArchive(url: string): Promise<void>;
  /** Outlines a bounds box (the file's extent; a ring for a single point) and frames it. */
  showBounds(bounds: Bounds): void;
  fitBounds(bounds: Bounds): void;
  /** Features of the drawn data layers (not the basemap, not the extent) rendered in the current view. */
  renderedFeatureCount(): number;
  remove(): void;
}

function prefersReducedMotion(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;
}

/** Moves the camera to a bounds: fit a box (crossing ±180° by unwrapping east), centre a point at POINT_ZOOM. */
function frameBounds(map: MapLibreMap, bounds: Bounds | null | undefined, animate: boolean): void {
  const target = toCameraTarget(bounds);
  const duration = animate && !prefersReducedMotion() ? EASE_MS : 0;
  if (target.kind === 'point') {
    map.easeTo({ center: target.center, zoom: POINT_ZOOM, duration });
    return;
  }
  const canvas = map.getCanvas();
  // MapLibre refuses to fit when padding eats the canvas; a small map gets a small margin.
  const padding = Math.floor(Math.min(24, canvas.clientWidth / 8, canvas.clientHeight / 8));
  map.fitBounds([target.southWest, target.northEast], { padding, maxZoom: MAX_FIT_ZOOM, linear: true, duration });
}

/** Counts the distinct rendered features of the data layers; a feature without an id counts once per tile it is drawn in. */
function countRenderedFeatures(map: MapLibreMap): number {
  const layers = [SOURCE_IDS.features, SOURCE_IDS.query, SOURCE_IDS.archive].flatMap((source) => listDataLayerIds(source).counted).filter((id) =>
    map.getLayer(id),
  );
  if (layers.length === 0) return 0;
  const seen = new Set<string>();
  let anonymous = 0;
  for (const feature of map.queryRenderedFeatures({ layers })) {
    if (feature.id === undefined) anonymous++;
    else seen.add(`${feature.source}:${feature.id}`);
  }
  return seen.size + anonymous;
}

type PmTilesModule = typeof import('pmtiles');
let pmTiles: Promise<{ protocol: InstanceType<PmTilesModule['Protocol']>; PMTiles: PmTilesModule['PMTiles'] }> | null = null;

/** Teaches MapLibre the `pmtiles://` scheme, once per page; the pmtiles module loads only for a file that has an archive. */
function registerPmTiles(maplibre: MapLibre) {
  pmTiles ??= import('pmtiles').then(({ Protocol, PMTiles }) => {
    const protocol = new Protocol();
    maplibre.addProtocol('pmtiles', protocol.tile);
    return { protocol, PMTiles };
  });
  return pmTiles;
}

function removeQueryResult(map: MapLibreMap): void {
  for (const id of listDataLayerIds(SOURCE_IDS.query).all) if (map.getLayer(id)) map.removeLayer(id);
  if (map.getSource(SOURCE_IDS.query)) map.removeSource(SOURCE_IDS.query);
}

/**
 * Creates a map in `container` and resolves once its style and basemap are
 * loaded. The container gets `data-map-ready="true"` then, and after every idle
 * `data-rendered-features` (the count of drawn data features) and `data-zoom`.
 *
 * @example
 * const view = await createMapView(element, { label: "Map of the file's extent", bounds: [170, -20, -170, 10] });
 * view.showFeatures(rows);
 */
export async function createMapView(container: HTMLElement, options: MapViewOptions): Promise<MapView> {
  const maplibre = await loadMapLibre();
  const pageUrl = () => document.baseURI;
  let tileAuth: TileAuth | null = null;
  container.classList.add('map-view');
  const crosses = isValidBounds(options.bounds) && options.bounds[0] > options.bounds[2];
  const map = new maplibre.Map({
    container,
    style: createMapStyle(new URL(options.basemapUrl ?? DEFAULT_BASEMAP_URL, pageUrl()).href),
    // The canvas is the focusable region; MapLibre names it with this UI string.
    locale: { 'Map.Title': options.label },
    attributionControl: { compact: true, customAttribution: 'Basemap: Natural Earth' },
    transformRequest: createTileRequestTransform(() => tileAuth, pageUrl),
    // A flat north-up map: rotation and pitch only confuse a catalog preview.
    dragRotate: false,
    pitchWithRotate: false,
    touchPitch: false,
    maxPitch: 0,
    // Page scroll and one-finger swipes keep scrolling the page; Ctrl+wheel and two fingers move the map.
    cooperativeGestures: true,
    fadeDuration: 0,
    minZoom: worldFillZoom(container.clientWidth),
    // A copy of the world beside the first is needed only to show a layer across the antimeridian whole.
    renderWorldCopies: crosses || !options.bounds,
  });
  map.on('resize', () => map.setMinZoom(worldFillZoom(container.clientWidth)));
  map.keyboard.disableRotation();
  map.touchZoomRotate.disableRotation();
  map.addControl(new maplibre.NavigationControl({ showCompass: false }), 'top-right');
  map.on('idle', () => {
    container.dataset['renderedFeatures'] = String(countRenderedFeatures(map));
    container.dataset['zoom'] = map.getZoom().toFixed(3);
  });
  frameBounds(map, options.bounds, false);
  await new Promise<void>((resolve) => map.once('load', () => resolve()));
  container.dataset['mapReady'] = 'true';

  return {
    map,
    showFeatures(collection, { frame = true } = {}) {
      void map.getSource<GeoJSONSource>(SOURCE_IDS.features)?.setData(collection);
      const bounds = frame ? boundsOfFeatures(collection) : null;
      if (bounds !== null) frameBounds(map, bounds, true);
    },
    showQueryTiles(config, token, bounds) {
      removeQueryResult(map);
      const template = config.source.tiles[0] ?? '';
      tileAuth = { prefix: readTilePrefix(template, pageUrl()), header: config.token_header, token };
      map.addSource(SOURCE_IDS.query, config.source);
      const firstFeatureLayer = listDataLayerIds(SOURCE_IDS.features).all[0];
      for (const layer of createDataLayers(SOURCE_IDS.query, config.source_layer)) map.addLayer(layer, firstFeatureLayer);
      if (bounds) frameBounds(map, bounds, true);
    },
    async showArchive(url) {
      const { protocol, PMTiles } = await registerPmTiles(maplibre);
      const archive = new PMTiles(new URL(url, pageUrl()).href);
      // The map reads the archive through this same object, so its header and directories are fetched once.
      protocol.add(archive);
      const metadata = (await archive.getMetadata()) as { vector_layers?: { id?: unknown }[] } | undefined;
      const layer = metadata?.vector_layers?.[0]?.id;
      if (typeof layer !== 'string') throw new Error('the PMTiles archive names no vector layer');
      map.addSource(SOURCE_IDS.archive, { type: 'vector', url: `pmtiles://${archive.source.getKey()}` });
      const firstFeatureLayer = listDataLayerIds(SOURCE_IDS.features).all[0];
      for (const each of createDataLayers(SOURCE_IDS.archive, layer)) map.addLayer(each, firstFeatureLayer);
      // The first frame painted with every tile in view loaded. Not 'idle', which also waits for the camera's
      // easing to end: in headless Chromium that put the mark 1.3 s after the last tile arrived.
      await new Promise<void>((resolve) => {
        const drawn = () => {
          if (!map.isSourceLoaded(SOURCE_IDS.archive)) return;
          map.off('render', drawn);
          resolve();
        };
        map.on('render', drawn);
      });
    },
    showBounds(bounds) {
      const target = toCameraTarget(bounds);
      const outline: FeatureCollection = { type: 'FeatureCollection', features: [] };
      if (isValidBounds(bounds)) {
        const geometry = target.kind === 'point'
          ? { type: 'Point' as const, coordinates: target.center }
          : { type: 'LineString' as const, coordinates: toBoxRing(bounds) };
        outline.features.push({ type: 'Feature', properties: {}, geometry });
      }
      void map.getSource<GeoJSONSource>(SOURCE_IDS.extent)?.setData(outline);
      frameBounds(map, bounds, true);
    },
    fitBounds(bounds) {
      frameBounds(map, bounds, true);
    },
    renderedFeatureCount() {
      return countRenderedFeatures(map);
    },
    remove() {
      map.remove();
      delete container.dataset['mapReady'];
      delete container.dataset['renderedFeatures'];
      delete container.dataset['zoom'];
    },
  };
}
