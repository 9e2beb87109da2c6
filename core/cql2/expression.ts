/**
 * A CQL2 expression (OGC 21-065r2) in its JSON encoding, which is also the tree both encodings parse to: the text
 * encoding is parsed into the same objects the JSON encoding is made of, so one checker and one compiler serve both.
 *
 * @example
 * // name = 'Paris' AND S_INTERSECTS(geometry, BBOX(2, 48, 3, 49))
 * { op: 'and', args: [
 *   { op: '=', args: [{ property: 'name' }, 'Paris'] },
 *   { op: 's_intersects', args: [{ property: 'geometry' }, { bbox: [2, 48, 3, 49] }] },
 * ] }
 */
export type Cql2Expression =
  | string
  | number
  | boolean
  | Cql2Property
  | Cql2Date
  | Cql2Timestamp
  | Cql2Interval
  | Cql2Bbox
  | Cql2Geometry
  | Cql2Operation
  | Cql2Expression[];

/** A property (a column): `{ "property": "name" }`. */
export interface Cql2Property {
  property: string;
}

/** `DATE('1969-07-20')`: `{ "date": "1969-07-20" }`. */
export interface Cql2Date {
  date: string;
}

/** `TIMESTAMP('1969-07-20T20:17:40Z')`: `{ "timestamp": "1969-07-20T20:17:40Z" }`. */
export interface Cql2Timestamp {
  timestamp: string;
}

/** `INTERVAL('1969-07-16', '..')`: each end a date, a timestamp, `..` (open), or a property or function. */
export interface Cql2Interval {
  interval: [Cql2IntervalEnd, Cql2IntervalEnd];
}

/** An end of an interval. */
export type Cql2IntervalEnd = string | Cql2Property | Cql2Operation;

/** `BBOX(west, south, east, north)` (or six numbers with heights): `{ "bbox": [...] }`. */
export interface Cql2Bbox {
  bbox: number[];
}

/** A position: longitude, latitude and an optional height. */
export type Cql2Position = number[];

/** A geometry literal, as GeoJSON (WKT in the text encoding). */
export type Cql2Geometry =
  | { type: 'Point'; coordinates: Cql2Position }
  | { type: 'MultiPoint'; coordinates: Cql2Position[] }
  | { type: 'LineString'; coordinates: Cql2Position[] }
  | { type: 'MultiLineString'; coordinates: Cql2Position[][] }
  | { type: 'Polygon'; coordinates: Cql2Position[][] }
  | { type: 'MultiPolygon'; coordinates: Cql2Position[][][] }
  | { type: 'GeometryCollection'; geometries: Cql2Geometry[] };

/**
 * An operator or function applied to its arguments. `op` spells the standard's operators as its JSON encoding does
 * (`and`, `or`, `not`, `=`, `<>`, `<`, `<=`, `>`, `>=`, `like`, `between`, `in`, `isNull`, `casei`, `accenti`,
 * `s_intersects`…, `t_after`…, `t_finishedBy`, `t_metBy`, `t_overlappedBy`, `t_startedBy`, `a_equals`…,
 * `a_containedBy`, `+`, `-`, `*`, `/`, `%`, `div`, `^`), and a function by its own name otherwise.
 */
export interface Cql2Operation {
  op: string;
  args: Cql2Expression[];
}

/** Why a filter was refused: a message, and where (a character offset of the text, or a JSON pointer). */
export class Cql2Error extends Error {
  /** 0-based character offset in the text encoding, when the error is there. */
  readonly position: number | undefined;
  /** JSON pointer into the JSON encoding (`/args/1/args/0`), when the error is there. */
  readonly pointer: string | undefined;

  constructor(message: string, where: { position?: number; pointer?: string } = {}) {
    super(message);
    this.name = 'Cql2Error';
    this.position = where.position;
    this.pointer = where.pointer;
  }
}
