import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { isLonLat, reprojectBounds, resolveCrs } from '../../core/geo/crs.ts';
import { logicalType, quoteLiteral } from '../../core/sql.ts';
import { RemoteReadError, type RemoteObject, type RemoteVersion } from '../../runtime/remote-object.ts';

/**
 * Bumped whenever a footer's reading gives something different for the same object; older cache entries are
 * dropped.
 */
export const FOOTER_FACTS_VERSION = 1;

/**
 * What the footer of a remote GeoParquet file says, read with two range requests and no scan of its rows: the
 * row count, each column's name and type, null counts, numeric ranges from the row-group statistics, and for the
 * geometry its declared types, CRS and extent from the bbox covering's statistics. Cached by the object's ETag,
 * size and last-modified.
 */
export interface FooterFacts extends FooterContent {
  /** The object read, for the size and for the query service to see that it changed. */
  version: RemoteVersion;
  /** Bytes the reading took: the tail and the footer. */
  bytesRead: number;
}

/** What the footer itself says. */
interface FooterContent {
  rows: number;
  columns: {
    name: string;
    duckdbType: string;
    type: string;
    /** Null when a row group has no null count in its statistics. */
    nulls: number | null;
    min: number | null;
    max: number | null;
  }[];
  geometry: {
    column: string;
    /** GeoParquet's `geometry_types`, which may be empty (any type). */
    types: string[];
    /** WGS84 extent from the covering's statistics; null without a covering, or with a CRS geoshelf cannot identify. */
    bounds: [number, number, number, number] | null;
    crs: string | null;
  } | null;
  warnings: string[];
}

/** Parquet's magic number, at the start and at the end of every file. */
const MAGIC = 'PAR1';
/** A footer larger than this is not read: no sane file has one, and a wrong length must not cost a huge read. */
const MAX_FOOTER_BYTES = 64 * 1024 * 1024;

interface GeoMetadata {
  primary_column?: string;
  columns?: Record<string, { crs?: unknown; geometry_types?: string[]; covering?: { bbox?: Record<'xmin' | 'ymin' | 'xmax' | 'ymax', string[]> } }>;
}

/**
 * Reads the last 8 bytes of a remote Parquet file (its footer's length and the magic number) with one range
 * request. Throws `RemoteReadError` for an object that is not Parquet, before anyone reads the rest of it.
 */
export async function readParquetTail(object: RemoteObject, version: RemoteVersion): Promise<{ tail: Buffer; footerLength: number }> {
  if (version.size < 12) throw new RemoteReadError(`${object.where} is not a Parquet file (${version.size} bytes)`);
  const tail = Buffer.from(await object.read(version.size - 8, 8));
  const footerLength = tail.readUInt32LE(0);
  if (tail.subarray(4).toString('latin1') !== MAGIC) throw new RemoteReadError(`${object.where} is not a Parquet file (no PAR1 at its end)`);
  if (footerLength + 12 > version.size || footerLength > MAX_FOOTER_BYTES) throw new RemoteReadError(`${object.where} is not a Parquet file (its footer length, ${footerLength} bytes, does not fit)`);
  return { tail, footerLength };
}

/**
 * Reads the footer of a remote GeoParquet file. DuckDB reads it from a scratch file that holds only the footer
 * between the two magic numbers: its metadata functions and DESCRIBE never touch the row data, so the types are
 * exactly those DuckDB gives the local file. `known` is the object's version when the caller has just asked for it.
 * Throws `RemoteReadError` for an object that cannot be read or is not Parquet.
 */
export async function inspectRemoteGeoParquet(instance: DuckDBInstance, object: RemoteObject, scratchDir: string, known?: RemoteVersion): Promise<FooterFacts> {
  const version = known ?? (await object.head());
  const { tail, footerLength } = await readParquetTail(object, version);
  const footer = await object.read(version.size - 8 - footerLength, footerLength);
  await mkdir(scratchDir, { recursive: true });
  const folder = await mkdtemp(join(scratchDir, 'footer-'));
  const stub = join(folder, 'footer.parquet');
  try {
    await writeFile(stub, Buffer.concat([Buffer.from(MAGIC, 'latin1'), footer, tail]));
    return { ...(await readFooter(instance, stub)), version, bytesRead: object.bytesRead() };
  } catch (error) {
    if (error instanceof RemoteReadError) throw error;
    throw new RemoteReadError(`${object.where} is not a readable Parquet file: ${(error as Error).message.split('\n')[0]}`);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

async function readFooter(instance: DuckDBInstance, stub: string): Promise<FooterContent> {
  const connection = await instance.connect();
  try {
    const file = quoteLiteral(stub);
    // As the local inspector reads it: geometry columns keep their WKB type, so both give the same columns.
    await connection.run('SET GLOBAL enable_geoparquet_conversion = false');
    const rows = Number((await connection.runAndReadAll(`SELECT sum(num_rows) AS n FROM parquet_file_metadata(${file})`)).getRowObjects()[0]?.n ?? 0);
    const described = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${file})`)).getRowObjects()
      .map((row) => ({ name: String(row.column_name), duckdbType: String(row.column_type) }));
    // One row per column chunk: a top-level column's chunks have its name as their whole path.
    const chunks = (await connection.runAndReadAll(
      `SELECT path_in_schema AS path, stats_null_count AS nulls, stats_min_value AS min, stats_max_value AS max FROM parquet_metadata(${file})`,
    )).getRowObjects().map((row) => ({ path: String(row.path), nulls: row.nulls === null ? null : Number(row.nulls), min: row.min === null ? null : String(row.min), max: row.max === null ? null : String(row.max) }));
    const kv = (await connection.runAndReadAll(`SELECT decode(value) AS value FROM parquet_kv_metadata(${file}) WHERE decode(key) = 'geo'`)).getRowObjects();
    const geo = kv[0] ? (JSON.parse(String(kv[0].value)) as GeoMetadata) : undefined;
    const primary = geo?.primary_column && described.some((column) => column.name === geo.primary_column) ? geo.primary_column : undefined;
    const warnings: string[] = [];
    const columns = described.map((column) => {
      const own = chunks.filter((chunk) => chunk.path === column.name);
      const type = column.name === primary ? 'geometry' : logicalType(column.duckdbType);
      const numeric = type === 'integer' || type === 'float';
      return {
        ...column,
        type,
        nulls: own.length > 0 && own.every((chunk) => chunk.nulls !== null) ? own.reduce((sum, chunk) => sum + chunk.nulls!, 0) : null,
        min: numeric ? extreme(own.map((chunk) => chunk.min), Math.min) : null,
        max: numeric ? extreme(own.map((chunk) => chunk.max), Math.max) : null,
      };
    });
    if (!primary) {
      warnings.push('the file has no GeoParquet metadata naming a geometry column');
      return { rows, columns, geometry: null, warnings };
    }
    const declared = geo?.columns?.[primary];
    const crs = declared && 'crs' in declared ? (declared.crs === null ? null : (resolveCrs(declared.crs) ?? null)) : 'OGC:CRS84';
    const covering = declared?.covering?.bbox;
    let bounds: [number, number, number, number] | null = null;
    if (!covering) {
      warnings.push('no bbox covering in the GeoParquet metadata, so its bounds need a scan of the rows (not done for a remote file)');
    } else {
      const statistic = (field: 'xmin' | 'ymin' | 'xmax' | 'ymax', pick: 'min' | 'max') => extreme(chunks.filter((chunk) => chunk.path === covering[field]?.join(', ')).map((chunk) => chunk[pick]), pick === 'min' ? Math.min : Math.max);
      const box = [statistic('xmin', 'min'), statistic('ymin', 'min'), statistic('xmax', 'max'), statistic('ymax', 'max')];
      if (box.every((value) => value !== null)) bounds = box as [number, number, number, number];
      else warnings.push('the bbox covering has no statistics in some row group, so its bounds need a scan of the rows (not done for a remote file)');
    }
    if (bounds && crs === null) {
      warnings.push('the CRS is not one geoshelf can identify, so bounds are not given');
      bounds = null;
    } else if (bounds && crs && !isLonLat(crs)) {
      bounds = reprojectBounds(bounds, crs);
    }
    return { rows, columns, geometry: { column: primary, types: [...(declared?.geometry_types ?? [])].sort(), bounds, crs }, warnings };
  } finally {
    connection.closeSync();
  }
}

/** The least or greatest of statistics given as text; null when any row group lacks one (its values are unknown). */
function extreme(values: (string | null)[], pick: (...numbers: number[]) => number): number | null {
  if (values.length === 0 || values.some((value) => value === null)) return null;
  const numbers = values.map(Number);
  return numbers.every(Number.isFinite) ? pick(...numbers) : null;
}
