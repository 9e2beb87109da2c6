import { createLinker } from '../catalog/links.ts';
import { filePath, SITE_PATHS } from '../../site/paths.ts';
import { licenseTitle, licenseUrl } from '../../../schemas/about.ts';
import type {
  OgcCollection, OgcFeature, OgcFeatureCollection, OgcLink, OgcQueryables,
} from '../../../schemas/ogc.ts';
import type { z } from 'zod';
import type { OgcCollectionsSchema, OgcConformanceSchema, OgcLandingPageSchema } from '../../../schemas/ogc.ts';
import type { FeatureLayer } from './layers.ts';
import { CRS84, DEFAULT_COLLECTIONS_LIMIT } from './params.ts';
import { OGC_RELS, OGC_ROUTES, OGC_TYPES } from './routes.ts';

/**
 * The conformance classes served: Part 1 core, GeoJSON and the OpenAPI 3.0 definition (no HTML); Part 3's filter on
 * items with queryables; the CQL2 classes the compiler covers; and OGC API - Tiles for the collections' vector tiles in
 * the one tile matrix set, WebMercatorQuad. Not declared: array functions (no queryable holds an array) and custom
 * functions (there are none beside CASEI and ACCENTI).
 */
export const CONFORMANCE_CLASSES = [
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter',
  ...['cql2-text', 'cql2-json', 'basic-cql2', 'advanced-comparison-operators', 'case-insensitive-comparison', 'accent-insensitive-comparison',
    'basic-spatial-functions', 'basic-spatial-functions-plus', 'spatial-functions', 'temporal-functions', 'property-property', 'arithmetic']
    .map((name) => `http://www.opengis.net/spec/cql2/1.0/conf/${name}`),
  ...['core', 'tileset', 'tilesets-list', 'geodata-tilesets', 'mvt', 'oas30'].map((name) => `http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/${name}`),
  'http://www.opengis.net/spec/tms/2.0/conf/tilematrixset',
  'http://www.opengis.net/spec/tms/2.0/conf/json-tilematrixset',
];

const link = (href: string, rel: string, type: string, title?: string): OgcLink => ({ href, rel, type, ...(title ? { title } : {}) });

/** `GET /features`. */
export function renderLandingPage(baseUrl: string): z.infer<typeof OgcLandingPageSchema> {
  const url = (path: string) => `${baseUrl}${path}`;
  return {
    title: 'geoshelf OGC API - Features',
    description: 'Every file (layer) of the catalog that has a GeoParquet source, as a feature collection: GeoJSON in CRS84, read from its latest version.',
    links: [
      link(url(OGC_ROUTES.getFeaturesLanding.path), 'self', OGC_TYPES.json, 'This document'),
      link(url(OGC_ROUTES.getFeaturesApi.path), 'service-desc', OGC_TYPES.openapi, 'The API definition (OpenAPI 3.0)'),
      link(url(SITE_PATHS.developers), 'service-doc', OGC_TYPES.html, 'Documentation for developers'),
      link(url(OGC_ROUTES.getFeaturesConformance.path), 'conformance', OGC_TYPES.json, 'Conformance classes'),
      link(url(OGC_ROUTES.getFeatureCollections.path), 'data', OGC_TYPES.json, 'Feature collections'),
      link(url(OGC_ROUTES.getTileMatrixSets.path), 'http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes', OGC_TYPES.json, 'Tile matrix sets of the vector tiles'),
    ],
  };
}

/** `GET /features/conformance`. */
export function renderConformance(): z.infer<typeof OgcConformanceSchema> {
  return { conformsTo: CONFORMANCE_CLASSES };
}

/** URLs of a collection's documents. */
export function collectionUrls(baseUrl: string, layer: FeatureLayer) {
  const collectionId = layer.id;
  return {
    collection: `${baseUrl}${OGC_ROUTES.getFeatureCollection.fillPath({ collectionId })}`,
    items: `${baseUrl}${OGC_ROUTES.getFeatures.fillPath({ collectionId })}`,
    queryables: `${baseUrl}${OGC_ROUTES.getFeatureQueryables.fillPath({ collectionId })}`,
    feature: (featureId: number) => `${baseUrl}${OGC_ROUTES.getFeature.fillPath({ collectionId, featureId })}`,
  };
}

/**
 * One collection: title `<dataset>: <file>`, extent from the file's WGS84 bounds (see {@link describeSpatialExtent})
 * and, when the file has a time column, its first and last value (read by the build).
 */
export function renderCollection(baseUrl: string, layer: FeatureLayer): OgcCollection {
  const urls = collectionUrls(baseUrl, layer);
  const interval = layer.timeColumn?.interval;
  const { collection, dataset, file, source } = layer;
  const bounds = source.metadata?.bounds;
  const description = file.description ?? dataset.description;
  return {
    id: layer.id,
    title: `${dataset.name}: ${file.name}`,
    ...(description ? { description } : {}),
    links: [
      link(urls.items, 'items', OGC_TYPES.geojson, 'Features'),
      link(urls.collection, 'self', OGC_TYPES.json, 'This collection'),
      link(`${baseUrl}${filePath(collection.slug, dataset.slug, file.slug)}`, 'alternate', OGC_TYPES.html, 'Web page of the file'),
      link(createLinker(baseUrl).file(collection.slug, dataset.slug, file.slug), 'describedby', OGC_TYPES.json, 'Catalog document of the file'),
      link(urls.queryables, OGC_RELS.queryables, OGC_TYPES.schema, 'Queryables'),
      ...(layer.tiles ? [link(`${baseUrl}${OGC_ROUTES.getCollectionTilesets.fillPath({ collectionId: layer.id })}`, 'http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector', OGC_TYPES.json, 'Vector tiles')] : []),
      ...(dataset.license ? [link(licenseUrl(dataset.license), 'license', OGC_TYPES.html, licenseTitle(dataset.license))] : []),
    ],
    ...(bounds || interval ? {
      extent: {
        spatial: { bbox: describeSpatialExtent(bounds ?? [-180, -90, 180, 90]), crs: CRS84 },
        ...(interval ? { temporal: { interval: [interval], trs: 'http://www.opengis.net/def/uom/ISO-8601/0/Gregorian' as const } } : {}),
      },
    } : {}),
    itemType: 'feature',
    crs: [CRS84],
  };
}

/**
 * The `bbox` array of a collection's extent. A box that crosses the antimeridian (west > east) comes second, after
 * the same box from -180° to 180°: Part 1 says the first box is the overall extent, the one clients that read a
 * single box use, and QGIS 3.22 and GDAL 3.6 read only that one. QGIS 3.22 swaps a west > east pair into
 * [east, west] (the Atlantic for the United States, from Guam to the Virgin Islands); GDAL 3.6 widens it to the
 * world. The second box keeps the precise extent, and every feature lies inside both (§7.14.4, fc-md-extent-multi).
 */
export function describeSpatialExtent([west, south, east, north]: [number, number, number, number]): number[][] {
  return west > east ? [[-180, south, 180, north], [west, south, east, north]] : [[west, south, east, north]];
}

/** Where a page of `/features/collections` starts and how many it holds. */
export interface CollectionsPage {
  offset: number;
  limit: number;
}

/**
 * A page of `GET /features/collections`: the collections of `layers` from `page.offset`, with a self link that
 * names the page, next and prev links where there are collections after or before it, and the counts.
 */
export function renderCollections(baseUrl: string, layers: readonly FeatureLayer[], page: CollectionsPage): z.infer<typeof OgcCollectionsSchema> {
  const route = OGC_ROUTES.getFeatureCollections;
  const url = (offset: number) => {
    const query = route.encodeQuery({ ...(page.limit === DEFAULT_COLLECTIONS_LIMIT ? {} : { limit: page.limit }), ...(offset > 0 ? { offset } : {}) });
    return `${baseUrl}${route.path}${query ? `?${query}` : ''}`;
  };
  const collections = layers.slice(page.offset, page.offset + page.limit).map((layer) => renderCollection(baseUrl, layer));
  const links = [link(url(page.offset), 'self', OGC_TYPES.json, 'Feature collections')];
  if (page.offset + page.limit < layers.length) links.push(link(url(page.offset + page.limit), 'next', OGC_TYPES.json, 'The next page of collections'));
  if (page.offset > 0) links.push(link(url(Math.max(0, page.offset - page.limit)), 'prev', OGC_TYPES.json, 'The previous page of collections'));
  return { links, collections, numberMatched: layers.length, numberReturned: collections.length };
}

/** The queryables: a JSON Schema of the columns a filter names (Part 3); `?name=value` filters on the scalar ones. */
export function renderQueryables(baseUrl: string, layer: FeatureLayer): OgcQueryables {
  const properties: OgcQueryables['properties'] = Object.create(null);
  for (const [name, type] of layer.filterables) {
    properties[name] = type === 'geometry' ? { format: 'geometry-any', title: name }
      : type === 'date' || type === 'timestamp' ? { type: 'string', format: type === 'date' ? 'date' : 'date-time', title: name }
      : { type, title: name };
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: collectionUrls(baseUrl, layer).queryables,
    type: 'object',
    title: `${layer.dataset.name}: ${layer.file.name}`,
    properties,
    additionalProperties: false,
  };
}

/** What a page of features needs beside its rows: its own URL and its neighbours'. */
export interface FeaturePageLinks {
  self: string;
  next?: string;
  prev?: string;
}

/** A page of features as a FeatureCollection. */
export function renderFeatureCollection(baseUrl: string, layer: FeatureLayer, features: OgcFeature[], links: FeaturePageLinks, matched: number | undefined): OgcFeatureCollection {
  const urls = collectionUrls(baseUrl, layer);
  return {
    type: 'FeatureCollection',
    features,
    links: [
      link(links.self, 'self', OGC_TYPES.geojson, 'This page'),
      link(urls.collection, 'collection', OGC_TYPES.json, 'The collection'),
      ...(links.next ? [link(links.next, 'next', OGC_TYPES.geojson, 'Next page')] : []),
      ...(links.prev ? [link(links.prev, 'prev', OGC_TYPES.geojson, 'Previous page')] : []),
    ],
    timeStamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(matched === undefined ? {} : { numberMatched: matched }),
    numberReturned: features.length,
  };
}

/**
 * A page of features as UTF-8 JSON, as JSON.stringify would write {@link renderFeatureCollection}'s document, with
 * the features spliced in as the query worker wrote them (`featuresJson`, a JSON array of `count` features).
 */
export function writeFeatureCollection(baseUrl: string, layer: FeatureLayer, featuresJson: Uint8Array, count: number, links: FeaturePageLinks, matched: number | undefined): Uint8Array {
  const { type: _type, features: _features, ...rest } = renderFeatureCollection(baseUrl, layer, [], links, matched);
  return joinBytes([encoder.encode('{"type":"FeatureCollection","features":'), featuresJson, encoder.encode(`,${JSON.stringify({ ...rest, numberReturned: count }).slice(1)}`)]);
}

/**
 * One feature with its links as UTF-8 JSON, as JSON.stringify would write {@link renderFeature}'s document, from the
 * query worker's JSON array holding that one feature (`[{"type":"Feature","id","geometry","properties"}]`).
 */
export function writeFeature(baseUrl: string, layer: FeatureLayer, id: number, featuresJson: Uint8Array): Uint8Array {
  const { links } = renderFeature(baseUrl, layer, { id, geometry: null, properties: {} });
  // The array's brackets and the feature's closing brace go; the links and a closing brace come instead.
  return joinBytes([featuresJson.subarray(1, -2), encoder.encode(`,"links":${JSON.stringify(links)}}`)]);
}

const encoder = new TextEncoder();

/** Byte arrays one after another, in one array. */
function joinBytes(parts: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}

/** One feature with its links. */
export function renderFeature(baseUrl: string, layer: FeatureLayer, feature: Omit<OgcFeature, 'type' | 'links'>): OgcFeature {
  const urls = collectionUrls(baseUrl, layer);
  return {
    type: 'Feature',
    id: feature.id,
    geometry: feature.geometry,
    properties: feature.properties,
    links: [link(urls.feature(feature.id), 'self', OGC_TYPES.geojson, 'This feature'), link(urls.collection, 'collection', OGC_TYPES.json, 'The collection')],
  };
}
