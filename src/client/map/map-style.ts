/**
 * The map's style: a light basemap from the site's own Natural Earth files
 * (no glyphs, no sprite, no text) and the layers that draw data on top of it.
 */
import type { FeatureCollection } from 'geojson';
import type { FilterSpecification, LayerSpecification, StyleSpecification } from 'maplibre-gl';

/**
 * Basemap colours are quiet; the data colour keeps a contrast of at least
 * 4.5:1 against both land and water, and the extent frame is near black.
 * Coasts are the edge between the land and water fills, not a stroke: a
 * stroke would also draw the land's cuts along ±180° (Chukotka, Fiji,
 * Antarctica) as lines across the land.
 */
export const MAP_COLORS = {
  water: '#cbdbe9',
  land: '#f7f5ef',
  border: '#b7ab98',
  data: '#a3165f',
  dataFill: 'rgba(163, 22, 95, 0.22)',
  halo: '#ffffff',
  extent: '#1f2937',
} as const;

/** Ids of the sources the style starts with; the query result and the file's PMTiles archive are added when shown. */
export const SOURCE_IDS = { land: 'basemap-land', borders: 'basemap-borders', extent: 'extent', features: 'features', query: 'query', archive: 'archive' } as const;

/** A FeatureCollection with nothing in it, for sources that start empty. */
export const EMPTY_COLLECTION: FeatureCollection = { type: 'FeatureCollection', features: [] };

const IS_POLYGON: FilterSpecification = ['match', ['geometry-type'], ['Polygon', 'MultiPolygon'], true, false];
const IS_LINE: FilterSpecification = ['match', ['geometry-type'], ['LineString', 'MultiLineString'], true, false];
const IS_POINT: FilterSpecification = ['match', ['geometry-type'], ['Point', 'MultiPoint'], true, false];

/** The ids of the layers drawing one data source; `counted` are the ones whose features are counted (outlines are not). */
export function listDataLayerIds(source: string): { all: string[]; counted: string[] } {
  const [fill, outline, line, point] = [`${source}-fill`, `${source}-outline`, `${source}-line`, `${source}-point`];
  return { all: [fill, outline, line, point], counted: [fill, line, point] };
}

/**
 * The layers that draw a data source: polygon fill and outline, lines, and
 * points with a white halo so they stay visible over dark fills.
 * `sourceLayer` is the vector tile layer (query results); absent for GeoJSON.
 */
export function createDataLayers(source: string, sourceLayer?: string): LayerSpecification[] {
  const from = sourceLayer === undefined ? { source } : { source, 'source-layer': sourceLayer };
  return [
    { id: `${source}-fill`, type: 'fill', ...from, filter: IS_POLYGON, paint: { 'fill-color': MAP_COLORS.dataFill } },
    { id: `${source}-outline`, type: 'line', ...from, filter: IS_POLYGON, paint: { 'line-color': MAP_COLORS.data, 'line-width': 1.5 } },
    { id: `${source}-line`, type: 'line', ...from, filter: IS_LINE, paint: { 'line-color': MAP_COLORS.data, 'line-width': 2.5 } },
    {
      id: `${source}-point`, type: 'circle', ...from, filter: IS_POINT,
      paint: { 'circle-color': MAP_COLORS.data, 'circle-radius': 5, 'circle-stroke-color': MAP_COLORS.halo, 'circle-stroke-width': 1.5 },
    },
  ];
}

/**
 * The whole style: water, land, coasts and borders from `basemapUrl`
 * (absolute, with land.geojson and borders.geojson in it), the file extent
 * frame, and the empty GeoJSON data layers that showFeatures fills.
 */
export function createMapStyle(basemapUrl: string): StyleSpecification {
  const folder = basemapUrl.endsWith('/') ? basemapUrl : `${basemapUrl}/`;
  // A 1:110m basemap has nothing more to show past zoom 5; deeper tiles are overzoomed from it.
  const basemapSource = (file: string) => ({ type: 'geojson' as const, data: new URL(file, folder).href, maxzoom: 5 });
  return {
    version: 8,
    sources: {
      [SOURCE_IDS.land]: basemapSource('land.geojson'),
      [SOURCE_IDS.borders]: basemapSource('borders.geojson'),
      [SOURCE_IDS.extent]: { type: 'geojson', data: EMPTY_COLLECTION },
      // Generated ids let renderedFeatureCount count a feature once, however many tiles it spans.
      [SOURCE_IDS.features]: { type: 'geojson', data: EMPTY_COLLECTION, generateId: true },
    },
    layers: [
      { id: 'water', type: 'background', paint: { 'background-color': MAP_COLORS.water } },
      { id: 'land', type: 'fill', source: SOURCE_IDS.land, paint: { 'fill-color': MAP_COLORS.land, 'fill-outline-color': MAP_COLORS.land } },
      { id: 'borders', type: 'line', source: SOURCE_IDS.borders, paint: { 'line-color': MAP_COLORS.border, 'line-width': 0.75 } },
      {
        id: 'extent-line', type: 'line', source: SOURCE_IDS.extent, filter: IS_LINE,
        paint: { 'line-color': MAP_COLORS.extent, 'line-width': 2, 'line-dasharray': [3, 2] },
      },
      {
        id: 'extent-point', type: 'circle', source: SOURCE_IDS.extent, filter: IS_POINT,
        paint: { 'circle-radius': 9, 'circle-opacity': 0, 'circle-stroke-color': MAP_COLORS.extent, 'circle-stroke-width': 2 },
      },
      ...createDataLayers(SOURCE_IDS.features),
    ],
  };
}
