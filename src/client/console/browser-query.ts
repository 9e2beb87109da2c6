/**
 * One query in DuckDB-wasm: its result is kept as a temporary table, so pages are exact slices of it (insertion
 * order), the row count is known, and the map can read every geometry. GeoParquet geometries arrive as WKB
 * BLOBs (DuckDB-wasm has no spatial extension here) and are decoded with the project's WKB reader.
 */
import type { AsyncDuckDBConnection } from '@duckdb/duckdb-wasm';
import { decodeWkb, type Geometry } from '../../../core/geo/wkb.ts';
import type { ResultColumn, ResultPage } from './result-view.ts';
import type { ConsoleSource } from './source-catalog.ts';

const RESULT_TABLE = '__console_result';

/** A query that ran in the browser. */
export interface BrowserQuery {
  columns: ResultColumn[];
  totalRows: number;
  elapsedMs: number;
  /** The first column whose values are WKB geometries, if any. */
  geometryColumn: string | null;
  page(offset: number, pageSize: number): Promise<ResultPage>;
  /** Up to `max` rows' geometries with their scalar columns, for the map. */
  features(max: number): Promise<GeoJSON.FeatureCollection>;
}

/** A DuckDB error, cleaned for reading, with the offset in the person's SQL when DuckDB gave one. */
export class BrowserQueryError extends Error {
  readonly position: number | undefined;
  constructor(message: string, position: number | undefined) {
    super(message);
    this.name = 'BrowserQueryError';
    this.position = position;
  }
}

/** DuckDB types passed to JavaScript as they are; the rest are read as DuckDB's own text. */
const NATIVE_TYPES = /^(BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER|FLOAT|DOUBLE|VARCHAR|BLOB)$/;

/** Runs `sql` (one SELECT) into the result table and describes the result. */
export async function runBrowserQuery(connection: AsyncDuckDBConnection, sql: string, sources: readonly ConsoleSource[]): Promise<BrowserQuery> {
  const body = sql.replace(/[\s;]+$/, '');
  const started = performance.now();
  // "AS" ends line 1, so DuckDB's "LINE n" is line n - 1 of the person's SQL.
  await connection.query(`CREATE OR REPLACE TEMP TABLE ${RESULT_TABLE} AS\n${body}\n`).catch((error: unknown) => {
    throw toBrowserQueryError(error, body, sources.map((source) => source.alias));
  });
  const described = (await connection.query(`DESCRIBE ${RESULT_TABLE}`)).toArray().map((row) => row.toJSON() as { column_name: string; column_type: string });
  const totalRows = Number((await connection.query(`SELECT count(*) AS n FROM ${RESULT_TABLE}`)).getChildAt(0)?.get(0) ?? 0);
  const elapsedMs = performance.now() - started;
  const geometryColumn = await findGeometryColumn(connection, described, sources);
  const columns = described.map(({ column_name: name, column_type: type }) => ({ name, type: name === geometryColumn ? `${type} (WKB geometry)` : type }));
  const select = described.map(({ column_name: name, column_type: type }) =>
    NATIVE_TYPES.test(type) ? quoteIdentifier(name) : `CAST(${quoteIdentifier(name)} AS VARCHAR) AS ${quoteIdentifier(name)}`).join(', ') || '*';
  const readRows = async (suffix: string) => {
    const table = await connection.query(`SELECT ${select} FROM ${RESULT_TABLE} ${suffix}`);
    const vectors = described.map((_, index) => table.getChildAt(index));
    return Array.from({ length: table.numRows }, (_, row) => vectors.map((vector, index) => {
      const value: unknown = vector?.get(row) ?? null;
      return described[index]!.column_name === geometryColumn && value instanceof Uint8Array ? tryDecodeWkb(value) ?? value : value;
    }));
  };

  return {
    columns,
    totalRows,
    elapsedMs,
    geometryColumn,
    async page(offset, pageSize) {
      const pageStarted = performance.now();
      const rows = await readRows(`LIMIT ${pageSize} OFFSET ${offset}`);
      return {
        engine: 'browser',
        columns,
        rows,
        offset,
        pageSize,
        hasMore: offset + rows.length < totalRows,
        nextOffset: offset + rows.length,
        totalRows,
        elapsedMs: offset === 0 ? elapsedMs + performance.now() - pageStarted : performance.now() - pageStarted,
        responseTruncated: false,
        warnings: [],
      };
    },
    async features(max) {
      const geometryIndex = described.findIndex((column) => column.column_name === geometryColumn);
      const rows = geometryIndex < 0 ? [] : await readRows(`WHERE ${quoteIdentifier(geometryColumn!)} IS NOT NULL LIMIT ${max}`);
      const features: GeoJSON.Feature[] = [];
      for (const values of rows) {
        const geometry = values[geometryIndex];
        if (geometry instanceof Uint8Array || geometry === null || typeof geometry !== 'object') continue;
        const properties: Record<string, string | number | boolean> = {};
        values.forEach((value, index) => {
          if (index === geometryIndex) return;
          if (typeof value === 'bigint') properties[described[index]!.column_name] = Number(value);
          else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') properties[described[index]!.column_name] = value;
        });
        features.push({ type: 'Feature', geometry: geometry as GeoJSON.Geometry, properties });
      }
      return { type: 'FeatureCollection', features };
    },
  };
}

/** A BLOB column whose first value decodes as WKB; the sources' geometry columns are tried first. */
async function findGeometryColumn(connection: AsyncDuckDBConnection, described: { column_name: string; column_type: string }[], sources: readonly ConsoleSource[]): Promise<string | null> {
  const hinted = new Set(sources.map((source) => source.version.geometry_column?.toLowerCase()));
  const blobs = described.filter((column) => column.column_type === 'BLOB').map((column) => column.column_name);
  blobs.sort((a, b) => Number(hinted.has(b.toLowerCase())) - Number(hinted.has(a.toLowerCase())));
  for (const name of blobs) {
    const sample = await connection.query(`SELECT ${quoteIdentifier(name)} FROM ${RESULT_TABLE} WHERE ${quoteIdentifier(name)} IS NOT NULL LIMIT 1`);
    const value: unknown = sample.getChildAt(0)?.get(0);
    if (value instanceof Uint8Array && tryDecodeWkb(value)) return name;
  }
  return null;
}

/** A double-quoted SQL identifier. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function tryDecodeWkb(bytes: Uint8Array): Geometry | null {
  try {
    return decodeWkb(bytes);
  } catch {
    return null;
  }
}

/**
 * Cleans a DuckDB error: drops its "LINE n:" excerpt (which quotes the wrapped SQL) after reading the caret's
 * offset in the person's SQL from it, drops suggestions of tables that are not sources, and replaces advice to
 * install an extension, which cannot work here.
 */
function toBrowserQueryError(error: unknown, sql: string, aliases: readonly string[]): BrowserQueryError {
  const text = error instanceof Error ? error.message : String(error);
  const [head = text] = text.split(/\n\s*\nLINE \d+:/);
  let message = head.replace(/\n\s*\nPlease try installing[\s\S]*$/, '').trim();
  // DuckDB suggests its own catalog tables (pg_enum…); keep a suggestion only when it names a source.
  message = message.replace(/\s*Did you mean "([^"]+)"\?/, (suggestion, name: string) =>
    aliases.some((alias) => alias.toLowerCase() === name.toLowerCase()) ? suggestion : '');
  if (/exists in the \w+ extension/.test(message)) message += ' Extensions cannot be loaded in this browser; run this query on the query service instead.';
  return new BrowserQueryError(message, readCaretOffset(text, sql));
}

function readCaretOffset(text: string, sql: string): number | undefined {
  const lines = text.split('\n');
  const at = lines.findIndex((line) => /^LINE \d+: /.test(line));
  if (at < 0 || lines[at + 1] === undefined) return undefined;
  const [, number, excerpt] = /^LINE (\d+): (.*)$/.exec(lines[at]!)!;
  const caret = lines[at + 1]!.indexOf('^') - `LINE ${number}: `.length;
  const sqlLines = sql.split('\n');
  const lineIndex = Number(number) - 2;
  const line = sqlLines[lineIndex];
  if (line === undefined || caret < 0) return undefined;
  const dotted = excerpt!.startsWith('...');
  const window = excerpt!.replace(/^\.\.\./, '').replace(/\.\.\.$/, '');
  const start = dotted ? Math.max(0, line.indexOf(window)) : 0;
  const column = start + caret - (dotted ? 3 : 0);
  return sqlLines.slice(0, lineIndex).reduce((sum, previous) => sum + previous.length + 1, 0) + Math.max(0, column);
}
