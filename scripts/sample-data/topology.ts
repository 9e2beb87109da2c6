/**
 * TopoJSON → GeoJSON geometry helpers on top of topojson-client. Coordinates
 * are kept exactly as topojson-client decodes them (quantized, not rounded).
 */
import { feature, mesh, neighbors } from 'topojson-client';
import type { GeometryCollection, GeometryObject, Topology } from 'topojson-specification';
import type { Geometry, LineString, MultiLineString, Polygon, Position } from '../../core/geo/wkb.ts';

/** A decoded feature: its TopoJSON id, properties and geometry. */
export type TopoFeature = { id: string | null; properties: Record<string, unknown>; geometry: Geometry };

/** A pair of neighbouring geometries, by index, with the lines they share. */
export type SharedBorder = { left: number; right: number; geometry: MultiLineString };

/** The geometry collection named `name` in a topology. */
export function readCollection(topology: Topology, name: string): GeometryCollection {
  const object = topology.objects[name];
  if (object === undefined || object.type !== 'GeometryCollection') {
    throw new Error(`topology has no geometry collection "${name}"`);
  }
  return object as GeometryCollection;
}

/**
 * Decodes every geometry of a collection, in source order, exactly as
 * topojson-client returns it; the geometry pass of repair.ts comes later.
 */
export function readFeatures(topology: Topology, name: string): TopoFeature[] {
  return readCollection(topology, name).geometries.map((object, index) => {
    const decoded = feature(topology, object);
    if (!('geometry' in decoded) || decoded.geometry === null) throw new Error(`${name}[${index}] has no geometry`);
    return {
      id: object.id === undefined ? null : String(object.id),
      properties: (object.properties ?? {}) as Record<string, unknown>,
      geometry: decoded.geometry as Geometry,
    };
  });
}

/** The name property of a feature; every source here has one. */
export function readName(feature: TopoFeature): string {
  const name = feature.properties['name'];
  if (typeof name !== 'string' || name === '') throw new Error(`feature ${feature.id} has no name`);
  return name;
}

/** Splits a Polygon or MultiPolygon into its polygons, in source order. */
export function explodePolygons(geometry: Geometry): Polygon[] {
  if (geometry.type === 'Polygon') return [geometry];
  if (geometry.type === 'MultiPolygon') return geometry.coordinates.map((rings) => ({ type: 'Polygon', coordinates: rings }));
  throw new Error(`expected polygons, got ${geometry.type}`);
}

/** The mesh of a collection (each arc once, stitched into lines), one LineString per line. */
export function meshLines(topology: Topology, name: string): LineString[] {
  const lines = mesh(topology, readCollection(topology, name));
  return lines.coordinates.map((coordinates) => ({ type: 'LineString', coordinates }));
}

/**
 * The borders between every pair of neighbouring geometries of a collection.
 * Each pair is meshed on its own two-geometry collection, so the cost is the
 * size of the two geometries, not of the whole topology.
 */
export function meshSharedBorders(topology: Topology, name: string): SharedBorder[] {
  const geometries = readCollection(topology, name).geometries;
  const borders: SharedBorder[] = [];
  neighbors(geometries).forEach((adjacent, left) => {
    for (const right of adjacent) {
      if (right <= left) continue;
      const pair = [geometries[left], geometries[right]] as GeometryObject[];
      const lines = mesh(topology, { type: 'GeometryCollection', geometries: pair }, (a, b) => a !== b);
      if (lines.coordinates.length > 0) borders.push({ left, right, geometry: { type: 'MultiLineString', coordinates: lines.coordinates } });
    }
  });
  return borders;
}
