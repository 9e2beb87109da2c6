import type { DuckDBValue } from '@duckdb/node-api';
import proj4 from 'proj4';
import { isLonLat } from '../core/geo/crs.ts';
import { splitBox } from '../core/geo/lon-extent.ts';
import { quoteIdentifier } from '../core/sql.ts';
import { inferKind, type Cql2PropertyType } from '../core/cql2/check.ts';
import { ARITHMETIC_OPS, COMPARISON_OPS, SPATIAL_OPS, TEMPORAL_OPS } from '../core/cql2/read-json.ts';
import type { Cql2Expression, Cql2Geometry, Cql2Operation } from '../core/cql2/expression.ts';
import { TEMPORAL_RELATIONS, type SpanBound, type TimeComparison } from '../core/cql2/temporal.ts';
import type { SpatialLiteral, SpatialTest } from './cql2-spatial.ts';
import { toFileBox, type Envelope } from './result-shape.ts';

/** What a filter is compiled against: the file's columns as the filter names them, and how its geometry is stored. */
export interface Cql2SqlContext {
  properties: ReadonlyMap<string, Cql2PropertyType>;
  /** The file's geometry column, and whether it has a `bbox` covering, whose statistics let DuckDB skip row groups. */
  geometry: string | null;
  hasBbox: boolean;
  /** The CRS of the file's coordinates; filter geometries are in CRS84 and are transformed to it. */
  crs: string;
  /** The scalar function the spatial tests call (query/cql2-spatial.ts), and the literals it tests, filled here. */
  spatial: { name: string; literals: SpatialLiteral[] };
}

const SQL_OPS: Record<string, string> = { '=': '=', '<>': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=', '+': '+', '-': '-', '*': '*', '/': '/', '%': '%', div: '//' };
/** Each spatial function as the prepared test of its literal against the row, with the literal first or second. */
const SPATIAL_TESTS: Record<string, { first: SpatialTest; second: SpatialTest }> = {
  s_intersects: { first: 'intersects', second: 'intersects' }, s_disjoint: { first: 'disjoint', second: 'disjoint' },
  s_touches: { first: 'touches', second: 'touches' }, s_overlaps: { first: 'overlaps', second: 'overlaps' },
  s_crosses: { first: 'crosses', second: 'crosses' }, s_equals: { first: 'equals', second: 'equals' },
  // S_WITHIN(row, literal): the literal contains the row; S_WITHIN(literal, row): the literal is within it.
  s_within: { first: 'within', second: 'contains' }, s_contains: { first: 'contains', second: 'within' },
};
/**
 * A bound of a time span: what writes its TIMESTAMP expression (binding its literal, if any, when it is written:
 * DuckDB refuses a parameter the SQL does not use, and a relation may not read every bound), or an open end (`..`),
 * -1 before every time and 1 after. Open ends are compared here, not in SQL: DuckDB folds a date column's cast
 * against an infinite TIMESTAMP into a cast of the infinity to DATE, which fails ("Can't get TIME of infinite
 * TIMESTAMP").
 */
type Bound = (() => string) | -1 | 1;

/** A time span: its begin and end (the same for an instant). */
type Span = Record<SpanBound, Bound>;

/** A comparison of two bounds, as SQL: TRUE or FALSE when an open end decides it. */
function compareBounds(x: Bound, op: TimeComparison, y: Bound): string {
  if (typeof x === 'function' && typeof y === 'function') return `${x()} ${op} ${y()}`;
  // An open end against a time, or two open ends: order them as numbers, a time being 0.
  const [left, right] = [typeof x === 'function' ? 0 : x, typeof y === 'function' ? 0 : y];
  const holds = { '<': left < right, '<=': left <= right, '=': left === right && left !== 0, '>': left > right, '>=': left >= right }[op];
  return holds ? 'TRUE' : 'FALSE';
}

/** A temporal function of two spans as SQL. */
function relateSpans(op: string, a: Span, b: Span): string {
  const { all, negate } = TEMPORAL_RELATIONS[op]!;
  const conditions = all.map(([x, comparison, y]) => compareBounds(a[x], comparison, b[y])).join(' AND ');
  return negate ? `NOT (${conditions})` : conditions;
}

/**
 * Compiles a checked filter (core/cql2/check.ts) to a DuckDB condition. Every literal is bound as a parameter
 * (`$n`, its value pushed on `params`), never written into the SQL; property names are the file's own columns,
 * quoted. Spatial predicates on the geometry column are preceded by a test of the literal's envelope against the
 * `bbox` covering, which DuckDB checks against row-group statistics first.
 */
export function compileCql2(expression: Cql2Expression, context: Cql2SqlContext, params: DuckDBValue[]): string {
  const bind = (value: DuckDBValue) => {
    params.push(value);
    return `$${params.length}`;
  };
  const timestamp = (text: string) => `CAST(${bind(toUtcTimestamp(text))} AS TIMESTAMP)`;

  const compile = (node: Cql2Expression): string => {
    if (typeof node === 'boolean') return node ? 'TRUE' : 'FALSE';
    if (typeof node === 'string' || typeof node === 'number') return bind(node);
    if (Array.isArray(node)) throw new Error('a list stands only in IN');
    if ('property' in node) return property(node.property);
    if ('date' in node || 'timestamp' in node) return timestamp('date' in node ? node.date : node.timestamp);
    if ('bbox' in node || 'type' in node) throw new Error('a geometry literal stands only in a spatial function');
    if ('interval' in node) throw new Error('an interval stands only in a temporal function');
    return operation(node);
  };

  const property = (name: string) => {
    const type = context.properties.get(name);
    if (type === undefined) throw new Error(`unknown property ${name}`);
    if (type === 'geometry') return context.geometry === null ? 'NULL::GEOMETRY' : quoteIdentifier(context.geometry);
    return quoteIdentifier(name);
  };

  /** A geometry literal in the file's CRS, as GeoJSON; a box stops just short of the poles in another CRS. */
  const literalGeometry = (node: Cql2Geometry | { bbox: number[] }): object => {
    const geometry = 'bbox' in node ? bboxGeometry(node.bbox, isLonLat(context.crs) ? 90 : 89.9) : node;
    return isLonLat(context.crs) ? geometry : transformGeometry(geometry, context.crs);
  };

  /** An operand of a comparison: an instant compared with another instant or with text is compared as TIMESTAMP. */
  const scalar = (node: Cql2Expression, asInstant: boolean) => {
    if (!asInstant) return compile(node);
    if (typeof node === 'string') return timestamp(node);
    return 'property' in (node as object) ? `CAST(${compile(node)} AS TIMESTAMP)` : compile(node);
  };
  const isInstant = (node: Cql2Expression) => inferKind(node, context.properties, '') === 'instant';

  const span = (node: Cql2Expression): Span => {
    if (typeof node === 'object' && node !== null && !Array.isArray(node) && 'interval' in node) {
      const [begin, end] = node.interval.map((bound, index): Bound => {
        if (bound === '..') return index === 0 ? -1 : 1;
        return typeof bound === 'string' ? () => timestamp(bound) : () => `CAST(${compile(bound)} AS TIMESTAMP)`;
      }) as [Bound, Bound];
      return { begin, end };
    }
    const instant = () => scalar(node, true);
    return { begin: instant, end: instant };
  };

  const operation = (node: Cql2Operation): string => {
    const { op, args } = node;
    if (op === 'and' || op === 'or') return `(${args.map(compile).join(` ${op.toUpperCase()} `)})`;
    if (op === 'not') return `(NOT ${compile(args[0]!)})`;
    if (COMPARISON_OPS.has(op)) {
      const instant = isInstant(args[0]!) || isInstant(args[1]!);
      return `(${scalar(args[0]!, instant)} ${SQL_OPS[op]} ${scalar(args[1]!, instant)})`;
    }
    if (op === 'like') return `(${compile(args[0]!)} LIKE ${compile(args[1]!)} ESCAPE '\\')`;
    if (op === 'between') return `(${compile(args[0]!)} BETWEEN ${compile(args[1]!)} AND ${compile(args[2]!)})`;
    if (op === 'in') {
      const instant = isInstant(args[0]!);
      return `(${scalar(args[0]!, instant)} IN (${(args[1] as Cql2Expression[]).map((item) => scalar(item, instant)).join(', ')}))`;
    }
    if (op === 'isNull') return `(${compile(args[0]!)} IS NULL)`;
    if (op === 'casei') return `lower(${compile(args[0]!)})`;
    if (op === 'accenti') return `strip_accents(${compile(args[0]!)})`;
    if (SPATIAL_OPS.has(op)) return spatial(op, args[0]!, args[1]!);
    if (TEMPORAL_OPS.has(op)) return `(${relateSpans(op, span(args[0]!), span(args[1]!))})`;
    if (op === '^') return `power(${compile(args[0]!)}, ${compile(args[1]!)})`;
    if (ARITHMETIC_OPS.has(op)) return `(${compile(args[0]!)} ${SQL_OPS[op]} ${compile(args[1]!)})`;
    throw new Error(`unsupported operator ${op}`);
  };

  const spatial = (op: string, left: Cql2Expression, right: Cql2Expression): string => {
    const literalFirst = isGeometryLiteral(left);
    const literal = literalFirst ? left : right;
    if (!isGeometryLiteral(literal) || context.geometry === null) return 'NULL';
    context.spatial.literals.push({ geometry: literalGeometry(literal), test: SPATIAL_TESTS[op]![literalFirst ? 'first' : 'second'] });
    const test = `${context.spatial.name}(${bind(context.spatial.literals.length - 1)}, st_asbinary(${quoteIdentifier(context.geometry)}))`;
    // Every spatial relation but disjoint implies that the envelopes meet: a cheap test first, on statistics. The
    // CASE keeps GEOS to the rows that pass it: DuckDB may order an AND's terms as it likes (measured: a box across
    // the antimeridian took 414 ms with a plain AND, GEOS called on every row, against 10 ms for the boxes alone).
    if (op === 's_disjoint' || !context.hasBbox) return `(${test})`;
    const [west, south, east, north] = envelopeOf(literal);
    const boxes = splitBox(west, south, east, north).map((box) => toFileBox(box, context.crs).map((value) => bind(value)));
    const prune = boxes.map(([w, s, e, n]) => `(bbox.xmax >= ${w} AND bbox.xmin <= ${e} AND bbox.ymax >= ${s} AND bbox.ymin <= ${n})`).join(' OR ');
    return `((${prune}) AND CASE WHEN ${prune} THEN ${test} ELSE FALSE END)`;
  };

  return compile(expression);
}

function isGeometryLiteral(node: Cql2Expression): node is Cql2Geometry | { bbox: number[] } {
  return typeof node === 'object' && node !== null && !Array.isArray(node) && ('bbox' in node || 'type' in node);
}

/** A BBOX as GeoJSON, its latitudes within ±`pole`: a polygon, or two across the antimeridian (west > east). */
function bboxGeometry(bbox: number[], pole: number): Cql2Geometry {
  const [west, rawSouth, east, rawNorth] = bbox.length === 6 ? [bbox[0]!, bbox[1]!, bbox[3]!, bbox[4]!] : (bbox as [number, number, number, number]);
  const south = Math.max(rawSouth, -pole);
  const north = Math.min(rawNorth, pole);
  const ring = ([w, s, e, n]: number[]) => [[[w!, s!], [e!, s!], [e!, n!], [w!, n!], [w!, s!]]];
  const boxes = splitBox(west, south, east, north);
  return boxes.length === 1 ? { type: 'Polygon', coordinates: ring(boxes[0]!) } : { type: 'MultiPolygon', coordinates: boxes.map(ring) };
}

/** The CRS84 envelope of a geometry literal; a BBOX keeps its west > east across the antimeridian. */
function envelopeOf(node: Cql2Geometry | { bbox: number[] }): Envelope {
  if ('bbox' in node) {
    const box = node.bbox;
    return box.length === 6 ? [box[0]!, box[1]!, box[3]!, box[4]!] : [box[0]!, box[1]!, box[2]!, box[3]!];
  }
  const envelope: Envelope = [Infinity, Infinity, -Infinity, -Infinity];
  const visit = (value: unknown): void => {
    if (Array.isArray(value) && typeof value[0] === 'number') {
      envelope[0] = Math.min(envelope[0], value[0]);
      envelope[1] = Math.min(envelope[1], value[1] as number);
      envelope[2] = Math.max(envelope[2], value[0]);
      envelope[3] = Math.max(envelope[3], value[1] as number);
    } else if (Array.isArray(value)) value.forEach(visit);
  };
  if (node.type !== 'GeometryCollection') visit(node.coordinates);
  for (const member of node.type === 'GeometryCollection' ? node.geometries : []) {
    const [west, south, east, north] = envelopeOf(member);
    visit([[west, south], [east, north]]);
  }
  return envelope;
}

/** A CRS84 geometry with every position in another CRS. */
function transformGeometry(geometry: Cql2Geometry, crs: string): Cql2Geometry {
  const forward = proj4('EPSG:4326', crs).forward;
  const map = (value: unknown): unknown => (Array.isArray(value) && typeof value[0] === 'number' ? forward(value as [number, number]) : Array.isArray(value) ? value.map(map) : value);
  if (geometry.type === 'GeometryCollection') return { type: 'GeometryCollection', geometries: geometry.geometries.map((member) => transformGeometry(member, crs)) };
  return { ...geometry, coordinates: map(geometry.coordinates) } as Cql2Geometry;
}

/** A date or an RFC 3339 timestamp as the UTC TIMESTAMP text DuckDB casts (a file's zoneless times are UTC). */
function toUtcTimestamp(text: string): string {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T00:00:00Z`) : new Date(text);
  return date.toISOString().slice(0, 23).replace('T', ' ');
}
