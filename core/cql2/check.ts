import { Cql2Error, type Cql2Expression, type Cql2Operation } from './expression.ts';
import { ARITHMETIC_OPS, COMPARISON_OPS, SPATIAL_OPS, TEMPORAL_OPS } from './read-json.ts';

/** The type of a property a filter can name: a column of the file. */
export type Cql2PropertyType = 'integer' | 'number' | 'string' | 'boolean' | 'date' | 'timestamp' | 'geometry';

/** What a value of an expression is, for the checks: `instant` is a date or a timestamp. */
export type Cql2Kind = 'number' | 'string' | 'boolean' | 'instant' | 'interval' | 'geometry';


/** Most values an IN list may hold. */
const MAX_IN_LIST = 1_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** Whether text is a date (`YYYY-MM-DD`) or an RFC 3339 timestamp, as CQL2's DATE and TIMESTAMP take. */
export function isInstantText(text: string): boolean {
  return (DATE.test(text) || TIMESTAMP.test(text)) && !Number.isNaN(Date.parse(DATE.test(text) ? `${text}T00:00:00Z` : text));
}

/**
 * Checks a filter against the properties of a collection and what the engine computes: every property is one of
 * the collection's, every operator gets arguments of the kind it compares, and the whole is a condition. Throws a
 * `Cql2Error` naming the first problem and where it is (a JSON pointer).
 */
export function checkCql2(expression: Cql2Expression, properties: ReadonlyMap<string, Cql2PropertyType>): void {
  const kind = inferKind(expression, properties, '');
  if (kind !== 'boolean') throw new Cql2Error(`a filter must be a condition (a comparison, a predicate, AND/OR/NOT of them, or TRUE/FALSE), not a ${kind} value`, { pointer: '' });
}

/** The kind of an expression's value, checking its arguments on the way; `properties` gives each property's type. */
export function inferKind(node: Cql2Expression, properties: ReadonlyMap<string, Cql2PropertyType>, pointer: string): Cql2Kind {
  if (typeof node === 'string') return 'string';
  if (typeof node === 'number') return 'number';
  if (typeof node === 'boolean') return 'boolean';
  if (Array.isArray(node)) throw new Cql2Error('a list of values stands only as the second argument of IN', { pointer });
  if ('property' in node) {
    const type = properties.get(node.property);
    if (!type) throw new Cql2Error(`this collection has no property "${node.property.slice(0, 60)}"; its queryables are ${[...properties.keys()].join(', ') || 'none'}`, { pointer });
    return type === 'integer' ? 'number' : type === 'date' || type === 'timestamp' ? 'instant' : type;
  }
  if ('date' in node || 'timestamp' in node) {
    const text = 'date' in node ? node.date : node.timestamp;
    const valid = 'date' in node ? DATE.test(text) : TIMESTAMP.test(text);
    if (!valid || !isInstantText(text)) throw new Cql2Error(`"${text.slice(0, 40)}" is not a valid ${'date' in node ? 'date (YYYY-MM-DD)' : 'timestamp (RFC 3339, with Z or an offset)'}`, { pointer });
    return 'instant';
  }
  if ('interval' in node) {
    node.interval.forEach((end, index) => {
      if (typeof end === 'string') {
        if (end !== '..' && !isInstantText(end)) throw new Cql2Error(`an interval's end must be a date, a timestamp or "..", not "${end.slice(0, 40)}"`, { pointer: `${pointer}/interval/${index}` });
      } else if (inferKind(end, properties, `${pointer}/interval/${index}`) !== 'instant') {
        throw new Cql2Error('an interval\'s end must be a date or a timestamp', { pointer: `${pointer}/interval/${index}` });
      }
    });
    return 'interval';
  }
  if ('bbox' in node) {
    if ((node.bbox.length !== 4 && node.bbox.length !== 6) || !node.bbox.every(Number.isFinite)) throw new Cql2Error('BBOX takes four numbers (or six, with heights)', { pointer });
    return 'geometry';
  }
  if ('type' in node) return 'geometry';
  return inferOperation(node, properties, pointer);
}

function inferOperation(node: Cql2Operation, properties: ReadonlyMap<string, Cql2PropertyType>, pointer: string): Cql2Kind {
  const { op, args } = node;
  const at = (index: number) => `${pointer}/args/${index}`;
  const kindOf = (index: number) => inferKind(args[index]!, properties, at(index));
  const arity = (count: number) => {
    if (args.length !== count) throw new Cql2Error(`${op} takes ${count} argument${count === 1 ? '' : 's'}, not ${args.length}`, { pointer });
  };
  const expect = (index: number, kinds: Cql2Kind[], what: string) => {
    const kind = kindOf(index);
    if (!kinds.includes(kind)) throw new Cql2Error(`${op} needs ${what} here, not a ${kind} value`, { pointer: at(index) });
    return kind;
  };
  if (op === 'and' || op === 'or') {
    if (args.length < 2) throw new Cql2Error(`${op} takes two or more conditions`, { pointer });
    args.forEach((_, index) => expect(index, ['boolean'], 'a condition'));
    return 'boolean';
  }
  if (op === 'not') {
    arity(1);
    expect(0, ['boolean'], 'a condition');
    return 'boolean';
  }
  if (COMPARISON_OPS.has(op)) {
    arity(2);
    const left = kindOf(0);
    const right = kindOf(1);
    if (!comparable(left, right, args[0]!, args[1]!)) throw new Cql2Error(`${op} cannot compare a ${left} value with a ${right} value`, { pointer });
    if (left === 'geometry' || left === 'interval' || (left === 'boolean' && op !== '=' && op !== '<>')) throw new Cql2Error(`${op} does not order ${left} values${left === 'geometry' ? '; use a spatial function such as S_EQUALS' : ''}`, { pointer });
    return 'boolean';
  }
  if (op === 'like') {
    arity(2);
    expect(0, ['string'], 'text');
    if (!isPattern(args[1]!)) throw new Cql2Error('LIKE takes a text pattern, optionally in CASEI or ACCENTI', { pointer: at(1) });
    return 'boolean';
  }
  if (op === 'between') {
    arity(3);
    [0, 1, 2].forEach((index) => expect(index, ['number'], 'a number'));
    return 'boolean';
  }
  if (op === 'in') {
    arity(2);
    const kind = kindOf(0);
    const list = args[1];
    if (!Array.isArray(list) || list.length === 0) throw new Cql2Error('IN takes a list of one or more values', { pointer: at(1) });
    if (list.length > MAX_IN_LIST) throw new Cql2Error(`IN takes at most ${MAX_IN_LIST} values, not ${list.length}`, { pointer: at(1) });
    list.forEach((item, index) => {
      const itemKind = inferKind(item, properties, `${at(1)}/${index}`);
      if (!comparable(kind, itemKind, args[0]!, item)) throw new Cql2Error(`IN cannot compare a ${kind} value with a ${itemKind} value`, { pointer: `${at(1)}/${index}` });
    });
    return 'boolean';
  }
  if (op === 'isNull') {
    arity(1);
    kindOf(0);
    return 'boolean';
  }
  if (op === 'casei' || op === 'accenti') {
    arity(1);
    expect(0, ['string'], 'text');
    return 'string';
  }
  if (SPATIAL_OPS.has(op)) {
    arity(2);
    expect(0, ['geometry'], 'a geometry');
    expect(1, ['geometry'], 'a geometry');
    // The engine tests each row's geometry against a literal prepared once: one side is each.
    if (isGeometryProperty(args[0]!) === isGeometryProperty(args[1]!)) throw new Cql2Error(`${op.toUpperCase()} compares the collection's geometry with a geometry literal (WKT or BBOX), one on each side`, { pointer });
    return 'boolean';
  }
  if (TEMPORAL_OPS.has(op)) {
    arity(2);
    expect(0, ['instant', 'interval'], 'a date, a timestamp or an interval');
    expect(1, ['instant', 'interval'], 'a date, a timestamp or an interval');
    return 'boolean';
  }
  if (ARITHMETIC_OPS.has(op)) {
    arity(2);
    expect(0, ['number'], 'a number');
    expect(1, ['number'], 'a number');
    return 'number';
  }
  if (/^a_/i.test(op)) throw new Cql2Error(`${op.toUpperCase()}: array functions are not supported, as no queryable holds an array`, { pointer });
  throw new Cql2Error(`unknown function "${op.slice(0, 40)}"; the functions are CASEI and ACCENTI`, { pointer });
}

/**
 * Whether two kinds compare: the same kind, or an instant with text that spells one (GDAL sends a date column's
 * bound as `'2020-01-01T00:00:00Z'`, a quoted string).
 */
function comparable(left: Cql2Kind, right: Cql2Kind, leftNode: Cql2Expression, rightNode: Cql2Expression): boolean {
  if (left === right) return true;
  if (left === 'instant' && right === 'string') return typeof rightNode === 'string' && isInstantText(rightNode);
  if (left === 'string' && right === 'instant') return typeof leftNode === 'string' && isInstantText(leftNode);
  return false;
}

function isGeometryProperty(node: Cql2Expression): boolean {
  return typeof node === 'object' && node !== null && !Array.isArray(node) && 'property' in node;
}

function isPattern(node: Cql2Expression): boolean {
  if (typeof node === 'string') return true;
  return typeof node === 'object' && node !== null && !Array.isArray(node) && 'op' in node && (node.op === 'casei' || node.op === 'accenti') && node.args.length === 1 && isPattern(node.args[0]!);
}
