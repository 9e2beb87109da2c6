import { inferKind, type Cql2PropertyType } from './check.ts';
import type { Cql2Expression, Cql2Geometry, Cql2Operation } from './expression.ts';
import { ARITHMETIC_OPS, COMPARISON_OPS, TEMPORAL_OPS } from './read-json.ts';
import { TEMPORAL_RELATIONS } from './temporal.ts';

/** A value while a filter is evaluated: text, a number (an instant is its epoch milliseconds), a truth, or unknown. */
type Value = string | number | boolean | null;

/** What a compiled filter reads of a record: each property's value, and each spatial literal's relation to it. */
export interface Cql2Record<R> {
  properties: ReadonlyMap<string, Cql2PropertyType>;
  /** A property's value: text, a number, an instant in epoch milliseconds, a truth, or null. */
  read(name: string, record: R): string | number | boolean | null;
  /** Whether the record's geometry meets spatial literal `literal` (in the order `listSpatialLiterals` gives). */
  meets(literal: number, record: R): boolean;
}

/** The spatial literals of a filter, in the order a compiled filter asks `meets` about them. */
export function listSpatialLiterals(expression: Cql2Expression): (Cql2Geometry | { bbox: number[] })[] {
  const literals: (Cql2Geometry | { bbox: number[] })[] = [];
  const visit = (node: Cql2Expression): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (typeof node === 'object' && node !== null && 'op' in node) {
      if (node.op === 's_intersects' || node.op === 's_disjoint') {
        const literal = node.args.find((arg) => typeof arg === 'object' && arg !== null && !Array.isArray(arg) && ('bbox' in arg || 'type' in arg));
        if (literal) literals.push(literal as Cql2Geometry | { bbox: number[] });
      }
      node.args.forEach(visit);
    }
  };
  visit(expression);
  return literals;
}

/**
 * Compiles a checked filter (core/cql2/check.ts) to a test of records, for filters evaluated in memory rather than by
 * an engine (STAC item search). Comparisons with an unknown value are unknown, and only a filter that is true
 * selects, as in SQL. Spatial functions are S_INTERSECTS and S_DISJOINT, answered by `meets`.
 */
export function compileCql2Test<R>(expression: Cql2Expression, source: Cql2Record<R>): (record: R) => boolean {
  let literals = 0;
  const isInstant = (node: Cql2Expression) => inferKind(node, source.properties, '') === 'instant';
  const instantOf = (text: string) => Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);

  const compile = (node: Cql2Expression, asInstant = false): ((record: R) => Value) => {
    if (typeof node === 'string') {
      const value = asInstant ? instantOf(node) : node;
      return () => value;
    }
    if (typeof node === 'number' || typeof node === 'boolean') return () => node;
    if (Array.isArray(node)) throw new Error('a list stands only in IN');
    if ('property' in node) return (record) => source.read(node.property, record);
    if ('date' in node || 'timestamp' in node) {
      const value = instantOf('date' in node ? node.date : node.timestamp);
      return () => value;
    }
    if ('op' in node) return operation(node);
    throw new Error('an interval or a geometry stands only in a temporal or spatial function');
  };

  const operation = (node: Cql2Operation): ((record: R) => Value) => {
    const { op, args } = node;
    if (op === 'and' || op === 'or') {
      const parts = args.map((arg) => compile(arg));
      const decisive = op === 'or';
      return (record) => {
        let unknown = false;
        for (const part of parts) {
          const value = part(record);
          if (value === decisive) return decisive;
          if (value === null) unknown = true;
        }
        return unknown ? null : !decisive;
      };
    }
    if (op === 'not') {
      const inner = compile(args[0]!);
      return (record) => {
        const value = inner(record);
        return value === null ? null : !value;
      };
    }
    if (COMPARISON_OPS.has(op)) {
      const instant = isInstant(args[0]!) || isInstant(args[1]!);
      const [left, right] = [compile(args[0]!, instant), compile(args[1]!, instant)];
      return (record) => compare(op, left(record), right(record));
    }
    if (op === 'like') {
      const value = compile(args[0]!);
      const pattern = likePattern(args[1]!);
      return (record) => {
        const text = value(record);
        return text === null ? null : pattern.test(String(text));
      };
    }
    if (op === 'between') {
      const [value, low, high] = args.map((arg) => compile(arg));
      return (record) => {
        const [v, l, h] = [value!(record), low!(record), high!(record)];
        return v === null || l === null || h === null ? null : v >= l && v <= h;
      };
    }
    if (op === 'in') {
      const instant = isInstant(args[0]!);
      const value = compile(args[0]!, instant);
      const list = (args[1] as Cql2Expression[]).map((item) => compile(item, instant));
      return (record) => {
        const v = value(record);
        if (v === null) return null;
        return list.some((item) => item(record) === v);
      };
    }
    if (op === 'isNull') {
      const value = compile(args[0]!);
      return (record) => value(record) === null;
    }
    if (op === 'casei' || op === 'accenti') {
      const value = compile(args[0]!);
      const fold = op === 'casei' ? (text: string) => text.toLowerCase() : stripAccents;
      return (record) => {
        const text = value(record);
        return text === null ? null : fold(String(text));
      };
    }
    if (op === 's_intersects' || op === 's_disjoint') {
      const literal = literals++;
      return op === 's_intersects' ? (record) => source.meets(literal, record) : (record) => !source.meets(literal, record);
    }
    if (TEMPORAL_OPS.has(op)) {
      const [a, b] = [span(args[0]!), span(args[1]!)];
      return (record) => {
        const [x, y] = [a(record), b(record)];
        return x === null || y === null ? null : relateSpans(op, x, y);
      };
    }
    if (ARITHMETIC_OPS.has(op)) {
      const [left, right] = [compile(args[0]!), compile(args[1]!)];
      return (record) => {
        const [l, r] = [left(record), right(record)];
        return typeof l === 'number' && typeof r === 'number' ? arithmetic(op, l, r) : null;
      };
    }
    throw new Error(`${op} is not evaluated in memory`);
  };

  /** A time span: begin and end in epoch milliseconds, ±Infinity for an open end; null when unknown. */
  const span = (node: Cql2Expression): ((record: R) => [number, number] | null) => {
    if (typeof node === 'object' && node !== null && !Array.isArray(node) && 'interval' in node) {
      const ends = node.interval.map((end, index) => (end === '..' ? () => (index === 0 ? -Infinity : Infinity) : compile(end, true)));
      return (record) => {
        const [begin, end] = [ends[0]!(record), ends[1]!(record)];
        return typeof begin === 'number' && typeof end === 'number' ? [begin, end] : null;
      };
    }
    const instant = compile(node, true);
    return (record) => {
      const value = instant(record);
      return typeof value === 'number' ? [value, value] : null;
    };
  };

  const test = compile(expression);
  return (record) => test(record) === true;
}

/** A temporal function of two spans [begin, end] (±Infinity for an open end). */
function relateSpans(op: string, a: [number, number], b: [number, number]): boolean {
  const { all, negate } = TEMPORAL_RELATIONS[op]!;
  const holds = all.every(([x, comparison, y]) => compare(comparison, a[x === 'begin' ? 0 : 1], b[y === 'begin' ? 0 : 1]) === true);
  return negate ? !holds : holds;
}

function compare(op: string, left: Value, right: Value): Value {
  if (left === null || right === null) return null;
  switch (op) {
    case '=': return left === right;
    case '<>': return left !== right;
    case '<': return left < right;
    case '<=': return left <= right;
    case '>': return left > right;
    default: return left >= right;
  }
}

function arithmetic(op: string, left: number, right: number): number | null {
  switch (op) {
    case '+': return left + right;
    case '-': return left - right;
    case '*': return left * right;
    case '/': return right === 0 ? null : left / right;
    case '%': return right === 0 ? null : left % right;
    case 'div': return right === 0 ? null : Math.trunc(left / right);
    default: return left ** right;
  }
}

/** A LIKE pattern as a regular expression: `%` any text, `_` one character, `\` escaping the next; CASEI/ACCENTI fold it. */
function likePattern(node: Cql2Expression): RegExp {
  let folds: string[] = [];
  let pattern = node;
  while (typeof pattern === 'object' && pattern !== null && !Array.isArray(pattern) && 'op' in pattern) {
    folds = [...folds, pattern.op];
    pattern = pattern.args[0]!;
  }
  let text = String(pattern);
  if (folds.includes('accenti')) text = stripAccents(text);
  if (folds.includes('casei')) text = text.toLowerCase();
  let source = '';
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    if (char === '\\' && at + 1 < text.length) source += escapeRegExp(text[++at]!);
    else source += char === '%' ? '.*' : char === '_' ? '.' : escapeRegExp(char);
  }
  return new RegExp(`^${source}$`, 'su');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Text without its combining marks (é → e), as ACCENTI compares. */
function stripAccents(text: string): string {
  return text.normalize('NFD').replace(/\p{Mn}/gu, '');
}
