import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { isLonLat, reprojectBounds, resolveCrs } from '../../core/geo/crs.ts';
import { quoteIdentifier, quoteLiteral } from '../../core/sql.ts';
import type { InvalidGeometryReason } from '../../schemas/file-metadata.ts';
import { computeColumnStats, type ColumnFacts } from './column-stats.ts';
import { scanGeoJsonColumn, scanWkbColumn, type GeometryScan } from '../../runtime/geometry-scan.ts';

/**
 * Bumped whenever inspection returns something different for the same file; older cache entries are dropped.
 * 3: validity by GEOS, reasons named after its error types, empty geometries counted apart.
 * 4: bounds of longitude/latitude data that straddles ±180° have west > east (RFC 7946 §5.2).
 * 5: first and last values of date and timestamp columns (temporal extents of OGC feature collections).
 * 6: a plain Parquet file's WKB column is named in its warning, with the command that converts it.
 */
export const DATA_FACTS_VERSION = 6;

/** Everything the build learns from one data file. Cached by the file's content hash. */
export interface DataFacts {
  rows: number;
  columns: ColumnFacts[];
  geometry: {
    column: string;
    types: Record<string, number>;
    /** Geometries GEOS calls invalid, or malformed WKB. */
    invalid: number;
    /** `invalid` by reason; the counts add up to it. */
    reasons: Partial<Record<InvalidGeometryReason, number>>;
    /** Geometries with no position (valid by the OGC rules). */
    empty: number;
    nulls: number;
    /**
     * WGS84 extent [west, south, east, north]; west > east when longitude/latitude geometries straddle ±180°.
     * Reprojected when the file's CRS is not longitude/latitude (then never crossing); null when unknown.
     */
    bounds: [number, number, number, number] | null;
    /** The file's CRS as AUTHORITY:CODE, or null when it could not be identified. */
    crs: string | null;
  } | null;
  /** Things a steward should know, e.g. a CRS that cannot be reprojected. */
  warnings: string[];
}

/**
 * The DuckDB instance that reads data files for their facts (the build's enrichment and `geoshelf add`), loaded
 * only when a file must be read, so a build whose facts all come from the cache skips the native module.
 */
export async function openInspectionInstance(): Promise<DuckDBInstance> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  return DuckDBInstance.create(':memory:', { threads: '2' });
}

interface GeoMetadata {
  primary_column?: string;
  columns?: Record<string, { crs?: unknown; encoding?: string }>;
}

const RELATION = 'inspected';

async function describe(connection: DuckDBConnection): Promise<{ name: string; duckdbType: string }[]> {
  const rows = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${RELATION}`)).getRowObjects();
  return rows.map((row) => ({ name: String(row.column_name), duckdbType: String(row.column_type) }));
}

function finishGeometry(scan: GeometryScan, column: string, rows: number, crs: string | null, warnings: string[]): NonNullable<DataFacts['geometry']> {
  let bounds = scan.extent;
  if (bounds && crs === null) {
    warnings.push('the CRS is not one geoshelf can identify, so bounds are not given');
    bounds = null;
  } else if (bounds && crs && !isLonLat(crs)) {
    bounds = reprojectBounds(bounds, crs);
  } else if (bounds) {
    // Only longitude/latitude coordinates lie on the circle, so only they can cross the antimeridian.
    bounds = scan.lonLatExtent;
  }
  const counted = Object.values(scan.types).reduce((sum, count) => sum + count, 0);
  return { column, types: scan.types, invalid: scan.invalid, reasons: scan.reasons, empty: scan.empty, nulls: rows - counted, bounds, crs };
}

/**
 * Inspects a GeoParquet file: its GeoParquet metadata (primary column, CRS), column statistics, and every
 * geometry (types, validity by GEOS, extent), the extent reprojected to WGS84 when the file's CRS needs it.
 */
export async function inspectGeoParquet(instance: DuckDBInstance, path: string): Promise<DataFacts> {
  const connection = await instance.connect();
  const second = await instance.connect();
  try {
    return await inspectGeoParquetWith(connection, second, path);
  } finally {
    second.closeSync();
    connection.closeSync();
  }
}

async function inspectGeoParquetWith(connection: DuckDBConnection, second: DuckDBConnection, path: string): Promise<DataFacts> {
  const file = quoteLiteral(path);
  // Read WKB as the bytes it is: DuckDB's own conversion rejects the whole file at the first malformed geometry,
  // and counting those is the point here.
  await connection.run('SET GLOBAL enable_geoparquet_conversion = false');
  await connection.run(`CREATE OR REPLACE VIEW ${RELATION} AS SELECT * FROM read_parquet(${file})`);
  const rows = Number((await connection.runAndReadAll(`SELECT sum(num_rows) AS n FROM parquet_file_metadata(${file})`)).getRowObjects()[0]?.n ?? 0);
  const kv = (await connection.runAndReadAll(`SELECT decode(value) AS value FROM parquet_kv_metadata(${file}) WHERE decode(key) = 'geo'`)).getRowObjects();
  const geo = kv[0] ? (JSON.parse(String(kv[0].value)) as GeoMetadata) : undefined;
  const columns = await describe(connection);
  const primary = geo?.primary_column && columns.some((column) => column.name === geo.primary_column) ? geo.primary_column : undefined;
  if (!primary) {
    const facts: DataFacts = { rows, columns: await computeColumnStats(connection, RELATION, columns, rows, null), geometry: null, warnings: [] };
    const wkb = columns.find((column) => /^(geometry|geom)$/i.test(column.name) && /^(BLOB|GEOMETRY)$/i.test(column.duckdbType));
    facts.warnings.push(wkb
      ? `"${wkb.name}" looks like WKB geometries, but the file has no GeoParquet metadata saying so: it gets no bounds, map, twin or /features collection; \`npx geoshelf convert\` writes GeoParquet 1.1 from it`
      : 'the file has no GeoParquet metadata naming a geometry column');
    return facts;
  }
  const declared = geo?.columns?.[primary];
  // GeoParquet: an absent crs means OGC:CRS84; an explicit null means the CRS is unknown.
  const crs = declared && 'crs' in declared ? (declared.crs === null ? null : (resolveCrs(declared.crs) ?? null)) : 'OGC:CRS84';
  const type = columns.find((column) => column.name === primary)?.duckdbType.toUpperCase();
  const expression = type === 'GEOMETRY' ? `st_asbinary(${quoteIdentifier(primary)})` : quoteIdentifier(primary);
  // Geometries are inspected in JavaScript while DuckDB computes the column statistics on a second connection,
  // which leaves the geometry column to the scan: the file is read about once, plus each column's values again.
  const [statistics, scan] = await Promise.all([
    computeColumnStats(second, RELATION, columns, rows, primary, { geometryNullsElsewhere: true }),
    scanWkbColumn(connection, RELATION, expression, { validity: true }),
  ]);
  const facts: DataFacts = { rows, columns: statistics, geometry: null, warnings: [] };
  facts.geometry = finishGeometry(scan, primary, rows, crs, facts.warnings);
  statistics.find((column) => column.name === primary)!.nulls = facts.geometry.nulls;
  return facts;
}

/**
 * Inspects a GeoJSON FeatureCollection through DuckDB's JSON reader: one row per feature, the properties as
 * columns and the geometry as JSON. Throws when the reader cannot read the file, which makes it not
 * schema-capable.
 */
export async function inspectGeoJson(instance: DuckDBInstance, path: string): Promise<DataFacts> {
  const connection = await instance.connect();
  try {
    return await inspectGeoJsonWith(connection, path);
  } finally {
    connection.closeSync();
  }
}

async function inspectGeoJsonWith(connection: DuckDBConnection, path: string): Promise<DataFacts> {
  await connection.run(
    `CREATE OR REPLACE VIEW ${RELATION} AS SELECT unnest(f.properties), f.geometry::JSON AS geometry FROM (SELECT unnest(features) AS f FROM read_json(${quoteLiteral(path)}, maximum_object_size = 1073741824))`,
  );
  const rows = Number((await connection.runAndReadAll(`SELECT count(*) AS n FROM ${RELATION}`)).getRowObjects()[0]?.n ?? 0);
  const columns = await describe(connection);
  const facts: DataFacts = { rows, columns: await computeColumnStats(connection, RELATION, columns, rows, 'geometry'), geometry: null, warnings: [] };
  facts.geometry = finishGeometry(await scanGeoJsonColumn(connection, RELATION, 'geometry', { validity: true }), 'geometry', rows, 'OGC:CRS84', facts.warnings);
  return facts;
}
