import type { OgcLink } from '../../../schemas/ogc.ts';
import type { FeatureLayer } from './layers.ts';
import { QUERY_ROUTES } from '../catalog/routes.ts';
import { OGC_ROUTES, OGC_TYPES } from './routes.ts';

/**
 * OGC API - Tiles (Core, TileSet, TileSets list, geodata tilesets, MVT) over the PMTiles twins: each GeoParquet file's
 * twin is its collection's vector tileset in the one tiling scheme the twins use, WebMercatorQuad (OGC 17-083r4).
 */

/** The id of the one tile matrix set, and its URI in the OGC register. */
export const WEB_MERCATOR_QUAD = 'WebMercatorQuad';
const TMS_URI = 'http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad';
const EPSG_3857 = 'http://www.opengis.net/def/crs/EPSG/0/3857';
/** Half the width of the world in EPSG:3857 metres: the origin of the matrices is (-HALF, HALF). */
const HALF = 20_037_508.342_789_244;
/** The tile matrices WebMercatorQuad defines: zoom levels 0 to 24. */
const MAX_TILE_MATRIX = 24;

/** The link relations of OGC API - Tiles. */
export const TILES_RELS = {
  tilingScheme: 'http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme',
  tilingSchemes: 'http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes',
  vectorTilesets: 'http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector',
};

/** The media type of a Mapbox Vector Tile. */
export const MVT_TYPE = 'application/vnd.mapbox-vector-tile';

/** What a tileset document says of its archive: the header's zooms and bounds, and its vector layers. */
export interface ArchiveFacts {
  minZoom: number;
  maxZoom: number;
  /** [west, south, east, north] in CRS84. */
  bounds: [number, number, number, number];
  layers: { id: string; fields: Record<string, string> }[];
}

const link = (href: string, rel: string, type: string, title: string, templated?: boolean): OgcLink & { templated?: boolean } => ({ href, rel, type, title, ...(templated ? { templated } : {}) });

/** `GET /features/tileMatrixSets`. */
export function renderTileMatrixSets(baseUrl: string): object {
  const url = `${baseUrl}${OGC_ROUTES.getTileMatrixSet.fillPath({ tileMatrixSetId: WEB_MERCATOR_QUAD })}`;
  return {
    tileMatrixSets: [{ id: WEB_MERCATOR_QUAD, title: 'Google Maps Compatible for the World', uri: TMS_URI, links: [link(url, 'self', OGC_TYPES.json, 'WebMercatorQuad')] }],
    links: [link(`${baseUrl}${OGC_ROUTES.getTileMatrixSets.path}`, 'self', OGC_TYPES.json, 'Tile matrix sets')],
  };
}

/** `GET /features/tileMatrixSets/WebMercatorQuad`: the definition, in the JSON encoding of OGC TMS 2.0. */
export function renderTileMatrixSet(): object {
  const tileMatrices = Array.from({ length: MAX_TILE_MATRIX + 1 }, (_, z) => {
    const cellSize = (2 * HALF) / 256 / 2 ** z;
    return {
      id: String(z), scaleDenominator: cellSize / 0.000_28, cellSize, cornerOfOrigin: 'topLeft', pointOfOrigin: [-HALF, HALF],
      tileWidth: 256, tileHeight: 256, matrixWidth: 2 ** z, matrixHeight: 2 ** z,
    };
  });
  return {
    id: WEB_MERCATOR_QUAD, title: 'Google Maps Compatible for the World', uri: TMS_URI, crs: EPSG_3857, orderedAxes: ['X', 'Y'],
    wellKnownScaleSet: 'http://www.opengis.net/def/wkss/OGC/1.0/GoogleMapsCompatible', tileMatrices,
  };
}

/** The tiles a box covers at a zoom, as rows and columns of WebMercatorQuad. */
export function tileRange(bounds: ArchiveFacts['bounds'], z: number): { minTileRow: number; maxTileRow: number; minTileCol: number; maxTileCol: number } {
  const n = 2 ** z;
  const column = (lon: number) => Math.min(n - 1, Math.max(0, Math.floor(((lon + 180) / 360) * n)));
  const row = (lat: number) => {
    const clamped = Math.max(-85.051_128_78, Math.min(85.051_128_78, lat));
    const radians = (clamped * Math.PI) / 180;
    return Math.min(n - 1, Math.max(0, Math.floor(((1 - Math.log(Math.tan(radians) + 1 / Math.cos(radians)) / Math.PI) / 2) * n)));
  };
  const [west, south, east, north] = bounds;
  // A box across the antimeridian (west > east) takes every column: the limits are one range.
  const across = west > east;
  return { minTileRow: row(north), maxTileRow: row(south), minTileCol: across ? 0 : column(west), maxTileCol: across ? n - 1 : column(east) };
}

/** The media type of a MapLibre (Mapbox GL) style document. */
export const STYLE_TYPE = 'application/vnd.mapbox.style+json';

/** The URLs of a layer's tiles: the tilesets list, the tileset, its tile template (OGC and TileJSON spellings). */
export function tileUrls(baseUrl: string, layer: FeatureLayer) {
  const tileset = `${baseUrl}${OGC_ROUTES.getCollectionTileset.fillPath({ collectionId: layer.id, tileMatrixSetId: WEB_MERCATOR_QUAD })}`;
  return {
    tilesets: `${baseUrl}${OGC_ROUTES.getCollectionTilesets.fillPath({ collectionId: layer.id })}`,
    tileset,
    template: `${tileset}/{tileMatrix}/{tileRow}/{tileCol}`,
    xyz: `${tileset}/{z}/{y}/{x}`,
    tileJson: `${tileset}?f=tilejson`,
    style: `${baseUrl}${OGC_ROUTES.getCollectionStyle.fillPath({ collectionId: layer.id })}`,
    tileMatrixSet: `${baseUrl}${OGC_ROUTES.getTileMatrixSet.fillPath({ tileMatrixSetId: WEB_MERCATOR_QUAD })}`,
  };
}

/** `GET /features/collections/{id}/tiles`: the one tileset of a collection. */
export function renderTilesets(baseUrl: string, layer: FeatureLayer): object {
  const urls = tileUrls(baseUrl, layer);
  return {
    tilesets: [{
      title: `${layer.dataset.name}: ${layer.file.name}`, dataType: 'vector', crs: EPSG_3857, tileMatrixSetURI: TMS_URI,
      links: [
        link(urls.tileset, 'self', OGC_TYPES.json, 'The tileset in WebMercatorQuad'),
        link(urls.tileMatrixSet, TILES_RELS.tilingScheme, OGC_TYPES.json, 'WebMercatorQuad'),
      ],
    }],
    links: [link(urls.tilesets, 'self', OGC_TYPES.json, 'The tilesets of this collection')],
  };
}

/** `GET /features/collections/{id}/tiles/WebMercatorQuad`: the tileset, its limits from the archive's header. */
export function renderTileset(baseUrl: string, layer: FeatureLayer, facts: ArchiveFacts): object {
  const urls = tileUrls(baseUrl, layer);
  const limits = [];
  for (let z = facts.minZoom; z <= facts.maxZoom; z++) limits.push({ tileMatrix: String(z), ...tileRange(facts.bounds, z) });
  return {
    title: `${layer.dataset.name}: ${layer.file.name}`,
    description: `Vector tiles of version ${layer.source.version}, from its PMTiles archive (zooms ${facts.minZoom}–${facts.maxZoom}).`,
    dataType: 'vector', crs: EPSG_3857, tileMatrixSetURI: TMS_URI, tileMatrixSetLimits: limits,
    boundingBox: { lowerLeft: facts.bounds.slice(0, 2), upperRight: facts.bounds.slice(2), crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84' },
    layers: facts.layers.map((layer) => ({ id: layer.id, dataType: 'vector', minTileMatrix: String(facts.minZoom), maxTileMatrix: String(facts.maxZoom) })),
    links: [
      link(urls.tileset, 'self', OGC_TYPES.json, 'This tileset'),
      link(urls.tileMatrixSet, TILES_RELS.tilingScheme, OGC_TYPES.json, 'WebMercatorQuad'),
      link(urls.template, 'item', MVT_TYPE, 'A tile', true),
      link(urls.tileJson, 'alternate', OGC_TYPES.json, 'This tileset as TileJSON 3.0'),
      link(urls.style, 'describedby', STYLE_TYPE, 'A MapLibre style that draws this tileset'),
    ],
  };
}

/**
 * A MapLibre style (version 8) that draws a collection from its TileJSON: circles for points, lines, or fills with
 * an outline, by the file's geometry type (all three for a file of mixed types), in the web app's map colour.
 */
export function renderStyle(baseUrl: string, layer: FeatureLayer, facts: ArchiveFacts): object {
  const type = (layer.source.metadata?.geometry_type ?? '').toLowerCase();
  const draws = (kind: string) => type === '' || type.includes('geometry') || type.includes(kind);
  const colour = '#2563eb';
  const layers = facts.layers.flatMap(({ id }) => [
    ...(draws('polygon') ? [
      { id: `${id}-fill`, type: 'fill', source: 'collection', 'source-layer': id, filter: ['==', ['geometry-type'], 'Polygon'], paint: { 'fill-color': colour, 'fill-opacity': 0.25 } },
      { id: `${id}-outline`, type: 'line', source: 'collection', 'source-layer': id, filter: ['==', ['geometry-type'], 'Polygon'], paint: { 'line-color': colour, 'line-width': 1 } },
    ] : []),
    ...(draws('line') ? [{ id: `${id}-line`, type: 'line', source: 'collection', 'source-layer': id, filter: ['==', ['geometry-type'], 'LineString'], paint: { 'line-color': colour, 'line-width': 1.5 } }] : []),
    ...(draws('point') ? [{ id: `${id}-point`, type: 'circle', source: 'collection', 'source-layer': id, filter: ['==', ['geometry-type'], 'Point'], paint: { 'circle-color': colour, 'circle-radius': 4, 'circle-stroke-color': '#ffffff', 'circle-stroke-width': 1 } }] : []),
  ]);
  return {
    version: 8,
    name: `${layer.dataset.name}: ${layer.file.name}`,
    sources: { collection: { type: 'vector', url: tileUrls(baseUrl, layer).tileJson } },
    layers: [{ id: 'background', type: 'background', paint: { 'background-color': '#f8fafc' } }, ...layers],
  };
}

/** The tileset as TileJSON 3.0.0, which MapLibre reads as a vector source. */
export function renderTileJson(baseUrl: string, layer: FeatureLayer, facts: ArchiveFacts): object {
  const [west, south, east, north] = facts.bounds;
  return {
    tilejson: '3.0.0', name: `${layer.dataset.name}: ${layer.file.name}`, version: layer.source.version, scheme: 'xyz',
    tiles: [tileUrls(baseUrl, layer).xyz], minzoom: facts.minZoom, maxzoom: facts.maxZoom, bounds: facts.bounds,
    center: [(west + east) / 2, (south + north) / 2, facts.minZoom],
    vector_layers: facts.layers.map((vectorLayer) => ({ id: vectorLayer.id, fields: vectorLayer.fields, minzoom: facts.minZoom, maxzoom: facts.maxZoom })),
  };
}

/**
 * A query result's tiles as a tileset: the OGC TileSet document (`json`) or TileJSON 3.0.0 (`tilejson`), whose tile
 * template is the query's own tile route with its token, the only way to read the result. Its bounds are the
 * result's; a token past its lifetime makes the tiles, not this document, answer 401.
 */
export function renderQueryTileset(baseUrl: string, queryId: string, token: string, bounds: [number, number, number, number], format: 'json' | 'tilejson'): object {
  // The query's own routes, with the token as their query parameter: the tileset only points at them.
  const xyz = `${baseUrl}${QUERY_ROUTES.getQueryTile.path.replace('{query_id}', encodeURIComponent(queryId))}?${QUERY_ROUTES.getQueryTile.encodeQuery({ token })}`;
  if (format === 'tilejson') {
    return {
      tilejson: '3.0.0', name: `Query ${queryId}`, scheme: 'xyz', tiles: [xyz], minzoom: 0, maxzoom: MAX_TILE_MATRIX,
      bounds, vector_layers: [{ id: 'result', fields: {} }],
    };
  }
  return {
    title: `Query ${queryId}`, dataType: 'vector', crs: EPSG_3857, tileMatrixSetURI: TMS_URI,
    tileMatrixSetLimits: Array.from({ length: MAX_TILE_MATRIX + 1 }, (_, z) => ({ tileMatrix: String(z), ...tileRange(bounds, z) })),
    boundingBox: { lowerLeft: bounds.slice(0, 2), upperRight: bounds.slice(2), crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84' },
    layers: [{ id: 'result', dataType: 'vector' }],
    links: [
      link(`${baseUrl}${QUERY_ROUTES.getQueryTileset.fillPath({ query_id: queryId })}?${QUERY_ROUTES.getQueryTileset.encodeQuery({ token })}`, 'self', OGC_TYPES.json, 'This tileset'),
      link(`${baseUrl}${OGC_ROUTES.getTileMatrixSet.fillPath({ tileMatrixSetId: WEB_MERCATOR_QUAD })}`, TILES_RELS.tilingScheme, OGC_TYPES.json, 'WebMercatorQuad'),
      link(xyz.replace('{z}', '{tileMatrix}').replace('{x}', '{tileCol}').replace('{y}', '{tileRow}'), 'item', MVT_TYPE, 'A tile', true),
    ],
  };
}

