import type { DuckDBConnection } from '@duckdb/node-api';

/** Bumped whenever `readParquetFacts` returns something different for the same file; older cache entries are dropped. */
export const PARQUET_FACTS_VERSION = 1;

/** What a GeoParquet file says about itself in its footer and GeoParquet metadata. */
export interface ParquetFacts {
  rows: number;
  columns: { name: string; type: string; nullable: boolean }[];
  geometryColumn: string | null;
  geometryTypes: string[];
  bbox: [number, number, number, number] | null;
}

/** Reads a GeoParquet file's footer: row count, columns and their DuckDB types, and the `geo` metadata. */
export async function readParquetFacts(connection: DuckDBConnection, path: string): Promise<ParquetFacts> {
  const literal = `'${path.replaceAll("'", "''")}'`;
  const rows = Number((await connection.runAndReadAll(`SELECT sum(num_rows) AS n FROM parquet_file_metadata(${literal})`)).getRowObjects()[0]?.n ?? 0);
  const described = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${literal})`)).getRowObjects();
  const schema = (await connection.runAndReadAll(`SELECT name, repetition_type FROM parquet_schema(${literal})`)).getRowObjects();
  const optional = new Set(schema.filter((row) => row.repetition_type === 'OPTIONAL').map((row) => String(row.name)));
  const kv = (await connection.runAndReadAll(`SELECT decode(value) AS value FROM parquet_kv_metadata(${literal}) WHERE decode(key) = 'geo'`)).getRowObjects();
  const geo = kv[0] ? (JSON.parse(String(kv[0].value)) as { primary_column?: string; columns?: Record<string, { geometry_types?: string[]; bbox?: number[] }> }) : undefined;
  const primary = geo?.primary_column ?? null;
  const geometry = primary ? geo?.columns?.[primary] : undefined;
  return {
    rows,
    columns: described.map((row) => ({ name: String(row.column_name), type: String(row.column_type), nullable: optional.has(String(row.column_name)) })),
    geometryColumn: primary,
    geometryTypes: [...(geometry?.geometry_types ?? [])].sort(),
    bbox: geometry?.bbox?.length === 4 ? (geometry.bbox as [number, number, number, number]) : null,
  };
}

/** Maps a DuckDB type to the contract's type names, with further documented names for the rest. */
export function logicalType(duckdbType: string): string {
  const type = duckdbType.toUpperCase();
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/.test(type)) return 'integer';
  if (/^(FLOAT|DOUBLE|REAL)$/.test(type) || type.startsWith('DECIMAL')) return 'float';
  if (type === 'VARCHAR') return 'string';
  if (type === 'BOOLEAN') return 'boolean';
  if (type === 'DATE') return 'date';
  if (type.startsWith('TIMESTAMP')) return 'timestamp';
  if (type === 'GEOMETRY') return 'geometry';
  if (type === 'BLOB') return 'binary';
  if (type.startsWith('STRUCT')) return 'struct';
  if (type.endsWith('[]') || type.startsWith('MAP')) return 'list';
  return type.toLowerCase();
}
