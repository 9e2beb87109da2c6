import { DatabaseSync } from 'node:sqlite';
import { DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { bboxOfGeometry, decodeWkb } from '../../core/geo/wkb.ts';
import { createGeoParquetCopyOptions, type GeoMetadata } from '../../core/geo/geoparquet.ts';
import { quoteIdentifier, quoteLiteral } from '../../core/sql.ts';

/** DuckDB's type for a GeoPackage column's declared type. */
function duckType(declared: string): string {
  const type = declared.toUpperCase();
  if (type.startsWith('TEXT')) return 'VARCHAR';
  if (type === 'INTEGER' || type === 'MEDIUMINT' || type === 'INT') return 'BIGINT';
  if (type === 'REAL' || type === 'DOUBLE' || type === 'FLOAT') return 'DOUBLE';
  if (type === 'DATETIME') return 'TIMESTAMP';
  return type;
}

/** The WKB of a GeoPackage geometry blob: its header (magic, version, flags, SRS id, envelope) cut off. */
function gpkgToWkb(blob: Uint8Array): Uint8Array {
  const flags = blob[3]!;
  const envelope = [0, 32, 48, 48, 64][(flags >> 1) & 0b111] ?? 0;
  return blob.subarray(8 + envelope);
}

/**
 * Writes a table of a GeoPackage as a GeoParquet 1.1 file: its columns typed as declared, its geometry column (by
 * the name the GeoPackage gives it) as WKB with a bbox covering, in CRS84. For the CQL2 test data (OGC's
 * `ne110m4cql2.gpkg`), read with `node:sqlite`.
 */
export async function writeGeoPackageTable(gpkg: string, table: string, out: string): Promise<void> {
  const sqlite = new DatabaseSync(gpkg, { readOnly: true });
  const { column_name: geometryColumn, geometry_type_name: geometryType } = sqlite.prepare('SELECT column_name, geometry_type_name FROM gpkg_geometry_columns WHERE table_name = ?').get(table) as { column_name: string; geometry_type_name: string };
  const columns = (sqlite.prepare(`PRAGMA table_info(${quoteIdentifier(table)})`).all() as { name: string; type: string }[]).filter((column) => column.name !== 'fid' && column.name !== geometryColumn);
  const rows = sqlite.prepare(`SELECT * FROM ${quoteIdentifier(table)} ORDER BY fid`).all() as Record<string, unknown>[];
  sqlite.close();
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  await connection.run(`CREATE TABLE t (${columns.map((column) => `${quoteIdentifier(column.name)} ${duckType(column.type)}`).join(', ')}, wkb BLOB, xmin DOUBLE, ymin DOUBLE, xmax DOUBLE, ymax DOUBLE)`);
  const bounds = [Infinity, Infinity, -Infinity, -Infinity];
  for (const row of rows) {
    const wkb = gpkgToWkb(row[geometryColumn] as Uint8Array);
    const box = bboxOfGeometry(decodeWkb(wkb))!;
    box.forEach((value, index) => (bounds[index] = index < 2 ? Math.min(bounds[index]!, value) : Math.max(bounds[index]!, value)));
    const values: DuckDBValue[] = columns.map((column) => {
      const value = row[column.name];
      if (value === null || value === undefined) return null;
      return duckType(column.type) === 'BOOLEAN' ? value === 1 : typeof value === 'bigint' ? Number(value) : (value as DuckDBValue);
    });
    const placeholders = [...columns.map((column, index) => `CAST($${index + 1} AS ${duckType(column.type)})`), `from_hex($${columns.length + 1})`, ...[0, 1, 2, 3].map((index) => `$${columns.length + 2 + index}`)];
    await connection.run(`INSERT INTO t VALUES (${placeholders.join(', ')})`, [...values, Buffer.from(wkb).toString('hex'), ...box]);
  }
  const types = { POINT: 'Point', LINESTRING: 'LineString', MULTIPOLYGON: 'MultiPolygon', POLYGON: 'Polygon', MULTILINESTRING: 'MultiLineString' } as const;
  const geo = {
    version: '1.1.0', primary_column: geometryColumn,
    columns: { [geometryColumn]: { encoding: 'WKB', geometry_types: [types[geometryType as keyof typeof types]], bbox: bounds, covering: { bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] } } } },
  } as unknown as GeoMetadata;
  await connection.run(`COPY (SELECT * EXCLUDE (wkb, xmin, ymin, xmax, ymax), st_geomfromwkb(wkb) AS ${quoteIdentifier(geometryColumn)}, {'xmin': xmin, 'ymin': ymin, 'xmax': xmax, 'ymax': ymax} AS bbox FROM t) TO ${quoteLiteral(out)} (${createGeoParquetCopyOptions(geo)})`);
  connection.closeSync();
  instance.closeSync();
}
