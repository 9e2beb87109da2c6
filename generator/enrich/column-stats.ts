import { hash } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { logicalType, quoteIdentifier } from '../../core/sql.ts';

/** Up to this many rows, `num_unique_values` is exact (a GROUP BY per column); above it, a HyperLogLog estimate. */
export const EXACT_DISTINCT_MAX_ROWS = 5_000_000;

/** Text columns with at most this many distinct values list them all as `possible_values`. */
export const POSSIBLE_VALUES_MAX = 20;

/** How many example values a column gets. */
export const EXAMPLE_COUNT = 5;

/** What the data says about one column. */
export interface ColumnFacts {
  name: string;
  /** The DuckDB type, e.g. BIGINT, VARCHAR, STRUCT(…). */
  duckdbType: string;
  /** The contract's type name: integer, float, string, geometry, or a further documented one. */
  type: string;
  nulls: number;
  distinct: number | null;
  distinctExact: boolean;
  examples: string[] | null;
  min: number | null;
  max: number | null;
  length: number | null;
  possible: string[] | null;
  /** First and last value of a date or timestamp column, as RFC 3339 instants in UTC; null for other columns. */
  earliest: string | null;
  latest: string | null;
}

const STATS_TYPES = new Set(['integer', 'float', 'string', 'boolean', 'date', 'timestamp', 'time']);

/**
 * Computes column statistics over `relation` (a view or table) in one aggregate pass plus one GROUP BY per
 * column: null counts, distinct counts, the most frequent values, numeric ranges and text lengths. Geometry,
 * binary and nested columns get their null count only; with `geometryNullsElsewhere`, the geometry column is
 * not read at all and its null count is left to the caller (a geometry scan counts them, and reading the
 * largest column once more only to count its nulls would cost a file of polygons nearly a whole read).
 *
 * Examples are the most frequent non-null values, ties broken by value order, so they are the same on
 * every run; for a column whose values are all distinct that is its smallest values.
 */
export async function computeColumnStats(connection: DuckDBConnection, relation: string, columns: { name: string; duckdbType: string }[], rows: number, geometryColumn: string | null, options: { geometryNullsElsewhere?: boolean } = {}): Promise<ColumnFacts[]> {
  const facts: ColumnFacts[] = columns.map((column) => ({
    name: column.name,
    duckdbType: column.duckdbType,
    type: column.name === geometryColumn ? 'geometry' : logicalType(column.duckdbType),
    nulls: 0,
    distinct: null,
    distinctExact: true,
    examples: null,
    min: null,
    max: null,
    length: null,
    possible: null,
    earliest: null,
    latest: null,
  }));
  if (facts.length === 0) return facts;
  const aggregates = facts.flatMap((fact, index) => {
    if (options.geometryNullsElsewhere && fact.name === geometryColumn) return [];
    const column = quoteIdentifier(fact.name);
    const parts = [`count(${column}) AS n${index}`];
    if (fact.type === 'integer' || fact.type === 'float') parts.push(`min(${column})::DOUBLE AS min${index}`, `max(${column})::DOUBLE AS max${index}`);
    if (fact.type === 'string') parts.push(`max(length(${column})) AS len${index}`);
    if (fact.type === 'date' || fact.type === 'timestamp') parts.push(`epoch_ms(min(${column})::TIMESTAMP) AS first${index}`, `epoch_ms(max(${column})::TIMESTAMP) AS last${index}`);
    if (rows > EXACT_DISTINCT_MAX_ROWS && STATS_TYPES.has(fact.type)) parts.push(`approx_count_distinct(${column}) AS hll${index}`);
    return parts;
  });
  // Nothing to aggregate when the geometry, left to the caller, is the only column.
  const summary = aggregates.length === 0 ? {} : (await connection.runAndReadAll(`SELECT ${aggregates.join(', ')} FROM ${relation}`)).getRowObjects()[0] ?? {};
  for (const [index, fact] of facts.entries()) {
    if (summary[`n${index}`] !== undefined) fact.nulls = rows - Number(summary[`n${index}`]);
    if (summary[`min${index}`] !== undefined && summary[`min${index}`] !== null) fact.min = Number(summary[`min${index}`]);
    if (summary[`max${index}`] !== undefined && summary[`max${index}`] !== null) fact.max = Number(summary[`max${index}`]);
    if (summary[`len${index}`] !== undefined && summary[`len${index}`] !== null) fact.length = Number(summary[`len${index}`]);
    if (summary[`first${index}`] !== undefined && summary[`first${index}`] !== null) fact.earliest = toInstant(Number(summary[`first${index}`]));
    if (summary[`last${index}`] !== undefined && summary[`last${index}`] !== null) fact.latest = toInstant(Number(summary[`last${index}`]));
    if (!STATS_TYPES.has(fact.type)) continue;
    const estimate = summary[`hll${index}`];
    await readFrequentValues(connection, relation, fact, estimate === undefined ? undefined : Number(estimate));
  }
  return facts;
}

async function readFrequentValues(connection: DuckDBConnection, relation: string, fact: ColumnFacts, estimate: number | undefined): Promise<void> {
  const column = quoteIdentifier(fact.name);
  const limit = Math.max(EXAMPLE_COUNT, POSSIBLE_VALUES_MAX + 1);
  if (estimate !== undefined && estimate > 10_000) {
    // A large file with many distinct values: an estimate, and the smallest values as examples (a cheap top-N).
    fact.distinct = estimate;
    fact.distinctExact = false;
    const smallest = await connection.runAndReadAll(
      `SELECT v::VARCHAR FROM (SELECT DISTINCT value AS v FROM (SELECT ${column} AS value FROM ${relation} WHERE ${column} IS NOT NULL ORDER BY value LIMIT 1000)) ORDER BY v LIMIT ${EXAMPLE_COUNT}`,
    );
    fact.examples = smallest.getRows().map((row) => String(row[0]));
    return;
  }
  const grouped = await connection.runAndReadAll(
    `SELECT count(*) OVER () AS groups, v::VARCHAR AS text FROM (SELECT ${column} AS v, count(*) AS c FROM ${relation} WHERE ${column} IS NOT NULL GROUP BY v) ORDER BY c DESC, v LIMIT ${limit}`,
  );
  const rows = grouped.getRows();
  fact.distinct = rows.length === 0 ? 0 : Number(rows[0]![0]);
  fact.examples = rows.slice(0, EXAMPLE_COUNT).map((row) => String(row[1]));
  if (fact.type === 'string' && fact.distinct <= POSSIBLE_VALUES_MAX) fact.possible = rows.map((row) => String(row[1])).sort();
}

/** Epoch milliseconds as an RFC 3339 instant in UTC, without a fraction when it is zero. */
function toInstant(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** A stable hash of a file's column names and types, in order. */
export function hashColumns(columns: { name: string; type: string }[]): string {
  return hash('sha256', JSON.stringify(columns.map((column) => [column.name, column.type])), 'hex');
}
