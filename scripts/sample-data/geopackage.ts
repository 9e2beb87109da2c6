/**
 * Writes feature layers into one OGC GeoPackage 1.3 file with node:sqlite:
 * the required metadata tables, EPSG:4326 (lon/lat axis order, as GeoPackage
 * geometries always are) and StandardGeoPackageBinary geometries.
 */
import { rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { encodeWkb } from '../../core/geo/wkb.ts';
import type { Geometry } from '../../core/geo/wkb.ts';
import { bboxOfRow, bboxOfTable } from './table.ts';
import type { FeatureTable } from './table.ts';
import { GPKG_APPLICATION_ID, GPKG_SCHEMA, GPKG_SPATIAL_REF_SYS, GPKG_USER_VERSION, WGS84_SRS_ID } from './geopackage-schema.ts';

/** A GeoPackage geometry type name (a subset of GeoPackage 1.3 table 30). */
export type GeoPackageGeometryType = 'POINT' | 'LINESTRING' | 'POLYGON' | 'MULTIPOINT' | 'MULTILINESTRING' | 'MULTIPOLYGON';

/** One feature table of the package. */
export type GeoPackageLayer = { name: string; description: string; geometryType: GeoPackageGeometryType; table: FeatureTable };

/** `lastChange` is the fixed gpkg_contents.last_change, so the bytes do not depend on the clock. */
export type GeoPackageOptions = { lastChange: string };

/**
 * StandardGeoPackageBinary: "GP", version 0, flags (little-endian header,
 * envelope [minx, maxx, miny, maxy]), srs_id, envelope, then ISO WKB.
 */
export function encodeGeoPackageBinary(geometry: Geometry, srsId: number, envelope: [number, number, number, number]): Uint8Array {
  const wkb = encodeWkb(geometry);
  const bytes = new Uint8Array(8 + 32 + wkb.length);
  const view = new DataView(bytes.buffer);
  bytes.set([0x47, 0x50, 0, 0b0000_0011]);
  view.setInt32(4, srsId, true);
  const [minX, minY, maxX, maxY] = envelope;
  [minX, maxX, minY, maxY].forEach((value, index) => view.setFloat64(8 + 8 * index, value, true));
  bytes.set(wkb, 40);
  return bytes;
}

/** Wraps a single geometry in its Multi type when the layer declares one (GDAL's PROMOTE_TO_MULTI). */
export function promoteGeometry(geometry: Geometry, layerType: GeoPackageGeometryType): Geometry {
  if (layerType === 'MULTIPOLYGON' && geometry.type === 'Polygon') return { type: 'MultiPolygon', coordinates: [geometry.coordinates] };
  if (layerType === 'MULTILINESTRING' && geometry.type === 'LineString') return { type: 'MultiLineString', coordinates: [geometry.coordinates] };
  if (layerType === 'MULTIPOINT' && geometry.type === 'Point') return { type: 'MultiPoint', coordinates: [geometry.coordinates] };
  if (geometry.type.toUpperCase() !== layerType) throw new Error(`a ${geometry.type} cannot go into a ${layerType} layer`);
  return geometry;
}

const SQL_TYPES = { VARCHAR: 'TEXT', INTEGER: 'INTEGER', BIGINT: 'INTEGER', DOUBLE: 'DOUBLE' } as const;

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function writeLayer(db: DatabaseSync, layer: GeoPackageLayer, options: GeoPackageOptions): void {
  const { name, table } = layer;
  const attributes = table.columns.map((column) => `${quoteIdentifier(column.name)} ${SQL_TYPES[column.type]}`);
  db.exec(
    `CREATE TABLE ${quoteIdentifier(name)} (fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, ` +
      `geometry ${layer.geometryType}${attributes.map((column) => `, ${column}`).join('')})`,
  );
  const extent = bboxOfTable(table);
  db.prepare(
    'INSERT INTO gpkg_contents (table_name, data_type, identifier, description, last_change, min_x, min_y, max_x, max_y, srs_id) ' +
      "VALUES (?, 'features', ?, ?, ?, ?, ?, ?, ?, ?)",
  ).run(name, name, layer.description, options.lastChange, ...(extent ?? [null, null, null, null]), WGS84_SRS_ID);
  db.prepare('INSERT INTO gpkg_geometry_columns VALUES (?, ?, ?, ?, 0, 0)').run(name, 'geometry', layer.geometryType, WGS84_SRS_ID);
  const columnList = ['fid', 'geometry', ...table.columns.map((column) => quoteIdentifier(column.name))];
  const insert = db.prepare(
    `INSERT INTO ${quoteIdentifier(name)} (${columnList.join(', ')}) VALUES (${columnList.map(() => '?').join(', ')})`,
  );
  table.rows.forEach((row, index) => {
    const geometry = encodeGeoPackageBinary(promoteGeometry(row.geometry, layer.geometryType), WGS84_SRS_ID, bboxOfRow(row));
    insert.run(index + 1, geometry, ...row.values);
  });
}

/** Writes a new GeoPackage at `path` (replacing any file there) holding `layers`, then VACUUMs it. */
export function writeGeoPackage(path: string, layers: GeoPackageLayer[], options: GeoPackageOptions): void {
  rmSync(path, { force: true });
  const db = new DatabaseSync(path);
  try {
    db.exec(`PRAGMA application_id = ${GPKG_APPLICATION_ID}; PRAGMA user_version = ${GPKG_USER_VERSION};`);
    db.exec('BEGIN');
    db.exec(GPKG_SCHEMA);
    const insertSrs = db.prepare('INSERT INTO gpkg_spatial_ref_sys VALUES (?, ?, ?, ?, ?, ?)');
    for (const srs of GPKG_SPATIAL_REF_SYS) {
      insertSrs.run(srs.srs_name, srs.srs_id, srs.organization, srs.organization_coordsys_id, srs.definition, srs.description);
    }
    for (const layer of layers) writeLayer(db, layer, options);
    db.exec('COMMIT');
    db.exec('VACUUM');
  } finally {
    db.close();
  }
}
