import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { CatalogModel, FileModel, SourceModel } from '../../core/model.ts';
import type { ColumnSchema } from '../../schemas/column.ts';
import type { BuildIssue } from '../errors.ts';
import type { LocalDataFile } from '../model/build-model.ts';

/** Options of the enrichment stage. */
export interface EnrichOptions {
  dataDir: string;
  log: (line: string) => void;
}

/** What the data says about a GeoParquet file, read from its footer. */
interface ParquetFacts {
  rows: number;
  columns: { name: string; type: string; nullable: boolean }[];
  geometryColumn: string | undefined;
  geometryTypes: string[];
  bbox: [number, number, number, number] | undefined;
}

/**
 * Fills source metadata from the data files: size for every local file, and for GeoParquet the row count,
 * columns and types, geometry types and extent from the Parquet footer and its GeoParquet metadata.
 * Column statistics come with the data-dictionary work (issue 3).
 */
export async function enrichSources(model: CatalogModel, localFiles: LocalDataFile[], options: EnrichOptions): Promise<{ issues: BuildIssue[]; warnings: string[] }> {
  const sources = new Map<number, { source: SourceModel; file: FileModel; formatType: string }>();
  const formatTypes = new Map(model.formats.map((format) => [format.id, format.format_type]));
  for (const collection of model.collections) {
    for (const dataset of collection.datasets) {
      for (const file of dataset.files) {
        for (const link of file.formats) {
          for (const source of link.sources) sources.set(source.id, { source, file, formatType: formatTypes.get(link.format_id) ?? '' });
        }
      }
    }
  }
  const issues: BuildIssue[] = [];
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  try {
    for (const local of localFiles) {
      const found = sources.get(local.sourceId);
      if (!found?.source.metadata) continue;
      const path = join(options.dataDir, local.path);
      const { size } = await stat(path);
      const metadata = found.source.metadata;
      metadata.size_bytes = size;
      if (found.formatType !== 'geoparquet') continue;
      let facts: ParquetFacts;
      try {
        facts = await readParquetFacts(connection, path);
      } catch (error) {
        const reason = (error as Error).message.split('\n')[0]?.replaceAll(path, local.path);
        issues.push({ code: 'UnreadableDataFile', source: local.source, ...(local.line ? { line: local.line } : {}), path: 'path', message: `"${local.path}" is not readable GeoParquet: ${reason}` });
        continue;
      }
      metadata.feature_count = facts.rows;
      metadata.bounds = facts.bbox ?? null;
      metadata.geometry_type = facts.geometryTypes.length > 0 ? facts.geometryTypes.join(', ') : null;
      metadata.columns = facts.columns.map((column): ColumnSchema => ({
        name: column.name,
        type: column.name === facts.geometryColumn ? 'geometry' : logicalType(column.type),
        nullable: column.nullable,
        description: found.file.column_descriptions[column.name] ?? null,
      }));
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return { issues, warnings: [] };
}

async function readParquetFacts(connection: Awaited<ReturnType<DuckDBInstance['connect']>>, path: string): Promise<ParquetFacts> {
  const literal = `'${path.replaceAll("'", "''")}'`;
  const rows = Number((await connection.runAndReadAll(`SELECT sum(num_rows) AS n FROM parquet_file_metadata(${literal})`)).getRowObjects()[0]?.n ?? 0);
  const described = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${literal})`)).getRowObjects();
  const schema = (await connection.runAndReadAll(`SELECT name, repetition_type FROM parquet_schema(${literal})`)).getRowObjects();
  const optional = new Set(schema.filter((row) => row.repetition_type === 'OPTIONAL').map((row) => String(row.name)));
  const kv = (await connection.runAndReadAll(`SELECT decode(value) AS value FROM parquet_kv_metadata(${literal}) WHERE decode(key) = 'geo'`)).getRowObjects();
  const geo = kv[0] ? (JSON.parse(String(kv[0].value)) as { primary_column?: string; columns?: Record<string, { geometry_types?: string[]; bbox?: number[] }> }) : undefined;
  const primary = geo?.primary_column;
  const geometry = primary ? geo?.columns?.[primary] : undefined;
  return {
    rows,
    columns: described.map((row) => ({ name: String(row.column_name), type: String(row.column_type), nullable: optional.has(String(row.column_name)) })),
    geometryColumn: primary,
    geometryTypes: [...(geometry?.geometry_types ?? [])].sort(),
    bbox: geometry?.bbox?.length === 4 ? (geometry.bbox as [number, number, number, number]) : undefined,
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
