import { readFileSync } from 'node:fs';
import type { DuckDBConnection, DuckDBType } from '@duckdb/node-api';
import proj4 from 'proj4';
import { encodeWkb } from '../core/geo/wkb.ts';
import { scanWkbColumn } from '../runtime/geometry-scan.ts';
import { DEFAULT_TILE_BUFFER, encodeTile, tileBounds, type TileFeature } from '../core/geo/mvt.ts';
import { logicalType, quoteIdentifier } from '../core/sql.ts';
import { queryFailure } from './errors.ts';
import type { BoundsValue, PageValue, QueryTask, TileValue } from './protocol.ts';
import { createValueConverter, type JsonValue } from './values.ts';


/** The user's SQL as a subquery: newlines keep a trailing `--` comment from swallowing the parenthesis. */
function subquery(sql: string): string {
  // A final `;` (perhaps followed by comments) ends the statement; inside parentheses it would break it.
  return `(\n${sql.replace(/;(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*$/, '')}\n) AS __geoshelf_result`;
}

/** Bytes this process has read through system calls so far (Linux); 0 where /proc is not there. */
function bytesReadSoFar(): number {
  try {
    return Number(/rchar:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

interface ResultShape {
  names: string[];
  types: string[];
  geometry: string | null;
  /** A GeoParquet covering column beside the geometry, usable to filter and frame without decoding. */
  hasBbox: boolean;
}

async function describeResult(connection: DuckDBConnection, sql: string, wanted: string | undefined): Promise<ResultShape> {
  const rows = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${subquery(sql)}`)).getRowObjects();
  return shapeOf(rows.map((row) => String(row.column_name)), rows.map((row) => String(row.column_type)), wanted);
}

/** Finds the geometry column of a result (the wanted one, or the first GEOMETRY) and whether a bbox covering sits beside it. */
function shapeOf(names: string[], types: string[], wanted: string | undefined): ResultShape {
  let geometry: string | null = null;
  if (wanted !== undefined) {
    const index = names.indexOf(wanted);
    if (index < 0) throw queryFailure('geometry_column_not_found', wanted);
    if (types[index] !== 'GEOMETRY' && types[index] !== 'BLOB') throw queryFailure('geometry_column_not_geometry', wanted, String(types[index]));
    geometry = wanted;
  } else {
    geometry = names.find((_, index) => types[index] === 'GEOMETRY') ?? null;
  }
  const bbox = names.indexOf('bbox');
  const hasBbox = geometry !== null && wanted === undefined && bbox >= 0 && /^STRUCT\("?xmin"? DOUBLE, "?ymin"? DOUBLE, "?xmax"? DOUBLE, "?ymax"? DOUBLE\)$/.test(types[bbox] ?? '');
  return { names, types, geometry, hasBbox };
}

function wkbExpression(shape: ResultShape): string {
  const column = quoteIdentifier(shape.geometry!);
  return shape.types[shape.names.indexOf(shape.geometry!)] === 'GEOMETRY' ? `st_asbinary(${column})` : column;
}

/**
 * One page of the result: rows `offset` to `offset + limit`, cut earlier when the JSON would pass the response
 * cap. One extra row is read to know whether more follow.
 */
export async function runPage(connection: DuckDBConnection, task: Extract<QueryTask, { kind: 'page' }>, isInterrupted: () => boolean): Promise<PageValue> {
  const before = bytesReadSoFar();
  const reader = await connection.streamAndReadUntil(`SELECT * FROM ${subquery(task.sql)} LIMIT ${task.limit + 1} OFFSET ${task.offset}`, task.limit + 1);
  if (isInterrupted()) throw queryFailure('query_timeout');
  const bytesRead = Math.max(0, bytesReadSoFar() - before);
  const types = reader.columnTypes();
  const names = reader.columnNames();
  const shape = shapeOf(names, types.map(String), task.geometryColumn);
  const raw = reader.getRows();
  const project = task.resultCrs ? proj4('EPSG:4326', task.resultCrs).forward : undefined;
  const converter = createValueConverter(project ? { project: (position) => project(position) as [number, number] } : {});
  const rows: Record<string, JsonValue>[] = [];
  let size = 2;
  let truncated = false;
  for (const values of raw.slice(0, task.limit)) {
    const row: Record<string, JsonValue> = {};
    names.forEach((name, index) => (row[name] = converter.convert(values[index] ?? null, name === shape.geometry)));
    const bytes = JSON.stringify(row).length + 1;
    if (size + bytes > task.settings.maxResponseBytes) {
      truncated = true;
      break;
    }
    size += bytes;
    rows.push(row);
  }
  const warnings = [...converter.warnings];
  if (truncated) warnings.push(`The page was cut at ${rows.length} rows to stay under ${task.settings.maxResponseBytes} bytes; ask for the next page at next_offset.`);
  return {
    columns: names.map((name, index) => ({ name, type: columnType(types[index]!, name === shape.geometry), nullable: true })),
    rows,
    hasMore: truncated || raw.length > task.limit,
    truncated,
    warnings,
    bytesRead,
    geometryColumn: shape.geometry,
  };
}

function columnType(type: DuckDBType, isGeometry: boolean): string {
  return isGeometry ? 'geometry' : logicalType(String(type));
}

/**
 * The WGS84 extent of the whole result: from the GeoParquet bbox covering when the result carries it (an
 * aggregate, no geometry decoded), otherwise by streaming every geometry and decoding its WKB.
 */
export async function runBounds(connection: DuckDBConnection, task: Extract<QueryTask, { kind: 'bounds' }>, isInterrupted: () => boolean): Promise<BoundsValue> {
  const shape = await describeResult(connection, task.sql, task.geometryColumn);
  if (!shape.geometry) throw queryFailure('no_geometry');
  let bounds: [number, number, number, number] | null;
  if (shape.hasBbox) {
    const row = (await connection.runAndReadAll(`SELECT min(bbox.xmin), min(bbox.ymin), max(bbox.xmax), max(bbox.ymax) FROM ${subquery(task.sql)}`)).getRows()[0] ?? [];
    bounds = row.every((value) => typeof value === 'number' && Number.isFinite(value)) ? (row as [number, number, number, number]) : null;
  } else {
    bounds = (await scanWkbColumn(connection, subquery(task.sql), wkbExpression(shape))).extent;
  }
  if (isInterrupted()) throw queryFailure('query_timeout');
  if (!bounds) throw queryFailure('empty_result');
  return { bounds };
}

/**
 * The vector tile z/x/y of the result: the rows whose geometry may meet the tile (by the bbox covering when
 * present, else by `st_intersects_extent`), at most the tile cap, encoded as MVT with their scalar columns.
 */
export async function runTile(connection: DuckDBConnection, task: Extract<QueryTask, { kind: 'tile' }>, isInterrupted: () => boolean): Promise<TileValue> {
  const shape = await describeResult(connection, task.sql, task.geometryColumn);
  if (!shape.geometry) throw queryFailure('no_geometry');
  const [west, tileSouth, east, tileNorth] = tileBounds(task.z, task.x, task.y, DEFAULT_TILE_BUFFER);
  // The encoder pins latitudes beyond Web Mercator's ±85.05° to the world's edge, so edge tiles must fetch them.
  const north = task.y === 0 ? 90 : tileNorth;
  const south = task.y === 2 ** task.z - 1 ? -90 : tileSouth;
  const envelope = encodeWkb({ type: 'Polygon', coordinates: [[[west, south], [east, south], [east, north], [west, north], [west, south]]] });
  const filter = shape.hasBbox
    ? `bbox.xmax >= ${west} AND bbox.xmin <= ${east} AND bbox.ymax >= ${south} AND bbox.ymin <= ${north}`
    : `st_intersects_extent(${shape.types[shape.names.indexOf(shape.geometry)] === 'GEOMETRY' ? quoteIdentifier(shape.geometry) : `st_geomfromwkb(${quoteIdentifier(shape.geometry)})`}, st_geomfromwkb(from_hex('${Buffer.from(envelope).toString('hex')}')))`;
  const properties = shape.names.filter((name, index) => name !== shape.geometry && /^(VARCHAR|BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DECIMAL.*|DATE|TIMESTAMP.*)$/.test(shape.types[index] ?? ''));
  const select = [`${wkbExpression(shape)} AS __wkb`, ...properties.map(quoteIdentifier)].join(', ');
  const reader = await connection.streamAndReadUntil(`SELECT ${select} FROM ${subquery(task.sql)} WHERE ${filter} LIMIT ${task.settings.tileMaxFeatures + 1}`, task.settings.tileMaxFeatures + 1);
  if (isInterrupted()) throw queryFailure('query_timeout');
  const converter = createValueConverter();
  const features: TileFeature[] = [];
  for (const values of reader.getRows().slice(0, task.settings.tileMaxFeatures)) {
    const wkb = values[0] as { bytes: Uint8Array } | null;
    if (!wkb) continue;
    const props: TileFeature['properties'] = {};
    properties.forEach((name, index) => {
      const value = converter.convert(values[index + 1] ?? null, false);
      props[name] = typeof value === 'object' ? null : value;
    });
    features.push({ wkb: wkb.bytes, properties: props });
  }
  const encoded = encodeTile(features, task.z, task.x, task.y, { layerName: 'result', maxFeatures: task.settings.tileMaxFeatures });
  return { bytes: encoded.bytes, features: encoded.features, truncated: encoded.truncated || reader.currentRowCount > task.settings.tileMaxFeatures };
}
