import { Cql2Error, type Cql2Expression, type Cql2IntervalEnd, type Cql2Operation } from './expression.ts';

/**
 * Deepest nesting of arrays and objects a CQL2 filter may have, counted as JSON counts it (`{"op":"=","args":[…]}`
 * is two levels). The tree of a text filter is held to it too, so that either encoding gives the same answer.
 */
export const MAX_CQL2_DEPTH = 64;

/** Most JSON values (objects, arrays, strings, numbers, booleans) a CQL2 filter may hold, in either encoding. */
export const MAX_CQL2_NODES = 10_000;

/** What a value of a CQL2 tree is, syntactically: what the operators' rules ask of their operands. */
export type Cql2Category =
  | 'boolean' | 'number' | 'string' | 'array' | 'property' | 'function' | 'predicate' | 'arithmetic' | 'character'
  | 'instant' | 'interval' | 'geometry' | 'bbox';

/** What an operand of a standard operator may be, in words for messages and as a test. */
export interface Cql2OperandRule {
  /** E.g. "a geometry, BBOX, property or function". */
  expected: string;
  accepts(node: Cql2Expression): boolean;
  /** The rule of each item, when the operand is a list (the values of IN). */
  items?: Cql2OperandRule;
}

/** How many operands a standard operator takes, and what each may be (the last rule serves the rest). */
export interface Cql2OperatorRule {
  min: number;
  max: number;
  operands: Cql2OperandRule[];
}

/** The operators of a comparison, as the JSON encoding spells them. */
export const COMPARISON_OPS: ReadonlySet<string> = new Set(['=', '<>', '<', '>', '<=', '>=']);
const PREDICATE_OPS = ['and', 'or', 'not', ...COMPARISON_OPS, 'like', 'between', 'in', 'isNull'];
/** The spatial functions of CQL2 (all of "spatial-functions"). */
export const SPATIAL_OPS: ReadonlySet<string> = new Set(['s_intersects', 's_equals', 's_disjoint', 's_touches', 's_within', 's_overlaps', 's_crosses', 's_contains']);
/** The temporal functions of CQL2 (all of "temporal-functions"), spelt as cql2.json spells them: five are camel case. */
export const TEMPORAL_OPS: ReadonlySet<string> = new Set(['t_after', 't_before', 't_contains', 't_disjoint', 't_during', 't_equals', 't_finishedBy', 't_finishes', 't_intersects', 't_meets', 't_metBy', 't_overlappedBy', 't_overlaps', 't_startedBy', 't_starts']);
const ARRAY_OPS = ['a_equals', 'a_contains', 'a_containedBy', 'a_overlaps'];
/** Arithmetic operators ("arithmetic"). */
export const ARITHMETIC_OPS: ReadonlySet<string> = new Set(['+', '-', '*', '/', '%', 'div', '^']);

const CATEGORY_OF_OP = new Map<string, Cql2Category>([
  ...[...PREDICATE_OPS, ...SPATIAL_OPS, ...TEMPORAL_OPS, ...ARRAY_OPS].map((op) => [op, 'predicate'] as const),
  ...[...ARITHMETIC_OPS].map((op) => [op, 'arithmetic'] as const),
  ['casei', 'character'],
  ['accenti', 'character'],
]);

/** The category of a value that has passed the structural check (or was built by the text parser). */
export function categorizeCql2(node: Cql2Expression): Cql2Category {
  if (typeof node === 'boolean') return 'boolean';
  if (typeof node === 'number') return 'number';
  if (typeof node === 'string') return 'string';
  if (Array.isArray(node)) return 'array';
  if ('op' in node) return CATEGORY_OF_OP.get(node.op) ?? 'function';
  if ('property' in node) return 'property';
  if ('date' in node || 'timestamp' in node) return 'instant';
  if ('interval' in node) return 'interval';
  return 'type' in node ? 'geometry' : 'bbox';
}

function ruleOf(expected: string, categories: Cql2Category[]): Cql2OperandRule {
  const allowed = new Set(categories);
  return { expected, accepts: (node) => allowed.has(categorizeCql2(node)) };
}

/** What AND, OR and NOT combine, and what a whole filter is: something true or false. */
export const BOOLEAN_OPERAND = ruleOf('a predicate, TRUE, FALSE or a function', ['predicate', 'boolean', 'function']);
/** What a comparison compares, and what IN lists. */
export const SCALAR_OPERAND = ruleOf('a string, number, boolean, date, timestamp, arithmetic, property or function', ['string', 'character', 'number', 'arithmetic', 'boolean', 'instant', 'property', 'function']);
/** What arithmetic and BETWEEN take. */
export const NUMERIC_OPERAND = ruleOf('a number, arithmetic, property or function', ['number', 'arithmetic', 'property', 'function']);
const CHARACTER = ruleOf('a string, CASEI, ACCENTI, property or function', ['string', 'character', 'property', 'function']);
const PATTERN: Cql2OperandRule = { expected: 'a pattern (a string, or CASEI or ACCENTI of a pattern)', accepts: isPattern };
const LIST: Cql2OperandRule = { ...ruleOf('a list of values', ['array']), items: SCALAR_OPERAND };
const NOT_ARRAY = ruleOf('a value other than an array', ['boolean', 'number', 'string', 'property', 'function', 'predicate', 'arithmetic', 'character', 'instant', 'interval', 'geometry', 'bbox']);
const SPATIAL = ruleOf('a geometry, BBOX, property or function', ['geometry', 'bbox', 'property', 'function']);
const TEMPORAL = ruleOf('a date, timestamp, interval, property or function', ['instant', 'interval', 'property', 'function']);
const ARRAY = ruleOf('an array, property or function', ['array', 'property', 'function']);

const fixed = (...operands: Cql2OperandRule[]): Cql2OperatorRule => ({ min: operands.length, max: operands.length, operands });

/** The standard's operators by their JSON name, with what they take (the rules of cql2.json). */
export const CQL2_OPERATORS: ReadonlyMap<string, Cql2OperatorRule> = new Map([
  ['and', { min: 2, max: Infinity, operands: [BOOLEAN_OPERAND] }],
  ['or', { min: 2, max: Infinity, operands: [BOOLEAN_OPERAND] }],
  ['not', fixed(BOOLEAN_OPERAND)],
  ...['=', '<>', '<', '>', '<=', '>='].map((op) => [op, fixed(SCALAR_OPERAND, SCALAR_OPERAND)] as const),
  ['like', fixed(CHARACTER, PATTERN)],
  ['between', fixed(NUMERIC_OPERAND, NUMERIC_OPERAND, NUMERIC_OPERAND)],
  ['in', fixed(SCALAR_OPERAND, LIST)],
  ['isNull', fixed(NOT_ARRAY)],
  ['casei', fixed(CHARACTER)],
  ['accenti', fixed(CHARACTER)],
  ...[...SPATIAL_OPS].map((op) => [op, fixed(SPATIAL, SPATIAL)] as const),
  ...[...TEMPORAL_OPS].map((op) => [op, fixed(TEMPORAL, TEMPORAL)] as const),
  ...ARRAY_OPS.map((op) => [op, fixed(ARRAY, ARRAY)] as const),
  ...[...ARITHMETIC_OPS].map((op) => [op, fixed(NUMERIC_OPERAND, NUMERIC_OPERAND)] as const),
]);

const OPERATOR_BY_LOWER_CASE = new Map([...CQL2_OPERATORS.keys()].map((op) => [op.toLowerCase(), op]));

/** The standard operator a name spells in any case (`T_FINISHEDBY` → `t_finishedBy`), or undefined for a function. */
export function findCql2Operator(name: string): string | undefined {
  return OPERATOR_BY_LOWER_CASE.get(name.toLowerCase());
}

/** The rule of operand `index` of an operator. */
export function findOperandRule(rule: Cql2OperatorRule, index: number): Cql2OperandRule {
  return rule.operands[Math.min(index, rule.operands.length - 1)] ?? BOOLEAN_OPERAND;
}

function isPattern(node: Cql2Expression): boolean {
  let inner = node;
  while (typeof inner === 'object' && !Array.isArray(inner) && 'op' in inner && (inner.op === 'casei' || inner.op === 'accenti') && inner.args.length === 1) inner = inner.args[0] ?? '';
  return typeof inner === 'string';
}

/** Whether a value may end an interval: a date, a timestamp, `..`, a property or a function. */
export function isIntervalEnd(node: Cql2Expression): node is Cql2IntervalEnd {
  if (typeof node === 'string') return node === '..' || isCql2Date(node) || isCql2Timestamp(node);
  const category = categorizeCql2(node);
  return category === 'property' || category === 'function';
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?Z$/;

/** Whether text is a date of DATE(…): `YYYY-MM-DD`, a day of the calendar. */
export function isCql2Date(text: string): boolean {
  const match = DATE.exec(text);
  return match !== null && isCalendarDay(Number(match[1]), Number(match[2]), Number(match[3]));
}

/** Whether text is a timestamp of TIMESTAMP(…): `YYYY-MM-DDThh:mm:ss[.fff]Z`, in UTC as the BNF's utcTime. */
export function isCql2Timestamp(text: string): boolean {
  const match = TIMESTAMP.exec(text);
  return match !== null && isCalendarDay(Number(match[1]), Number(match[2]), Number(match[3]))
    && Number(match[4]) < 24 && Number(match[5]) < 60 && Number(match[6]) <= 60;
}

function isCalendarDay(year: number, month: number, day: number): boolean {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return days !== undefined && day >= 1 && day <= days;
}

/**
 * Refuses a value that nests deeper than MAX_CQL2_DEPTH or holds more than MAX_CQL2_NODES values. It walks with a
 * stack of its own, not by recursion, and stops at the first value past a limit, so a hostile filter costs little.
 */
export function checkCql2Size(value: unknown): void {
  const stack = [{ value, pointer: '', depth: 0 }];
  let nodes = 1;
  const count = (pointer: string, added: number) => {
    nodes += added;
    if (nodes > MAX_CQL2_NODES) throw new Cql2Error(`the filter holds more than ${MAX_CQL2_NODES} values (objects, arrays, strings, numbers and booleans); at most ${MAX_CQL2_NODES} are allowed`, { pointer });
  };
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const { value: node, pointer, depth } = entry;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= MAX_CQL2_DEPTH) throw new Cql2Error(`the filter nests arrays and objects more than ${MAX_CQL2_DEPTH} deep; at most ${MAX_CQL2_DEPTH} levels are allowed`, { pointer });
    if (Array.isArray(node)) {
      count(pointer, node.length);
      for (let index = node.length - 1; index >= 0; index--) stack.push({ value: node[index], pointer: `${pointer}/${index}`, depth: depth + 1 });
      continue;
    }
    for (const key in node) {
      if (!Object.hasOwn(node, key)) continue;
      count(pointer, 1);
      stack.push({ value: (node as Record<string, unknown>)[key], pointer: `${pointer}/${escapePointer(key)}`, depth: depth + 1 });
    }
  }
}

/**
 * Checks a parsed JSON value (a `filter` parameter or a POST body) as a filter in the CQL2 JSON encoding and returns
 * it typed, unchanged: the size limits first, then each node's shape, each standard operator's operands, and that the
 * whole is true or false.
 * @example readCql2Json(JSON.parse('{"op":"=","args":[{"property":"name"},"Paris"]}'))
 * @throws Cql2Error with the JSON pointer of the first problem
 */
export function readCql2Json(value: unknown): Cql2Expression {
  checkCql2Size(value);
  const tree = readNode(value, '');
  if (!BOOLEAN_OPERAND.accepts(tree)) throw new Cql2Error(`expected a filter that is ${BOOLEAN_OPERAND.expected}, found ${describeNode(tree)}`, { pointer: '' });
  return tree;
}

function readNode(value: unknown, pointer: string): Cql2Expression {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (Array.isArray(value)) {
    value.forEach((item, index) => readNode(item, `${pointer}/${index}`));
    return value as Cql2Expression[];
  }
  if (typeof value !== 'object' || value === null) throw refuse(pointer, 'a CQL2 value', typeof value === 'number' || value === null ? String(value) : typeof value);
  const object = value as Record<string, unknown>;
  if (Object.hasOwn(object, 'op')) return readOperation(object, pointer);
  if (Object.hasOwn(object, 'property')) return readMember(object, pointer, 'property', (name) => typeof name === 'string' && name !== '', 'a property name');
  if (Object.hasOwn(object, 'date')) return readMember(object, pointer, 'date', (text) => typeof text === 'string' && isCql2Date(text), 'a date "YYYY-MM-DD"');
  if (Object.hasOwn(object, 'timestamp')) return readMember(object, pointer, 'timestamp', (text) => typeof text === 'string' && isCql2Timestamp(text), 'a timestamp "YYYY-MM-DDThh:mm:ssZ"');
  if (Object.hasOwn(object, 'interval')) return readMember(object, pointer, 'interval', (ends) => isIntervalArray(ends, `${pointer}/interval`), 'two ends');
  // A GeoJSON geometry may carry a bbox member too: its type tells it from a BBOX literal.
  if (Object.hasOwn(object, 'type')) return readGeometry(object, pointer, true);
  if (Object.hasOwn(object, 'bbox')) return readMember(object, pointer, 'bbox', isBboxArray, '4 or 6 numbers');
  throw refuse(pointer, 'an operation {"op", "args"}, {"property"}, {"date"}, {"timestamp"}, {"interval"}, {"bbox"} or a GeoJSON geometry', `an object with ${describeKeys(object)}`);
}

function readOperation(object: Record<string, unknown>, pointer: string): Cql2Operation {
  checkKeys(object, pointer, ['op', 'args']);
  const { op, args } = object;
  if (typeof op !== 'string' || op === '') throw refuse(`${pointer}/op`, 'an operator or function name', excerptJson(op));
  if (!Array.isArray(args)) throw refuse(`${pointer}/args`, `an array of the operands of "${op}"`, excerptJson(args));
  const nodes: Cql2Expression[] = args.map((arg, index) => readNode(arg, `${pointer}/args/${index}`));
  const rule = CQL2_OPERATORS.get(op);
  const standard = findCql2Operator(op);
  if (!rule && standard) throw refuse(`${pointer}/op`, `"${standard}" (CQL2 operators are spelled as the standard spells them)`, `"${op}"`);
  const operation = object as unknown as Cql2Operation;
  if (!rule) return operation;
  if (nodes.length < rule.min || nodes.length > rule.max) {
    const count = rule.min === rule.max ? `${rule.min}` : `at least ${rule.min}`;
    throw refuse(`${pointer}/args`, `${count} operand${rule.min === 1 ? '' : 's'} of "${op}"`, `${nodes.length}`);
  }
  nodes.forEach((node, index) => {
    const operand = findOperandRule(rule, index);
    const at = `${pointer}/args/${index}`;
    if (!operand.accepts(node)) throw refuse(at, `${operand.expected} as operand ${index + 1} of "${op}"`, describeNode(node));
    const items = operand.items;
    if (items && Array.isArray(node)) node.forEach((item, position) => {
      if (!items.accepts(item)) throw refuse(`${at}/${position}`, `${items.expected} in the list of "${op}"`, describeNode(item));
    });
  });
  return operation;
}

function readMember(object: Record<string, unknown>, pointer: string, key: string, test: (value: unknown) => boolean, expected: string): Cql2Expression {
  checkKeys(object, pointer, [key]);
  const member = object[key];
  if (!test(member)) throw refuse(`${pointer}/${key}`, expected, excerptJson(member));
  return object as unknown as Cql2Expression;
}

function isIntervalArray(ends: unknown, pointer: string): boolean {
  if (!Array.isArray(ends) || ends.length !== 2) return false;
  ends.forEach((end, index) => {
    const at = `${pointer}/${index}`;
    if (!isIntervalEnd(readNode(end, at))) throw refuse(at, "a date, a timestamp, '..', a property or a function as an end of the interval", describeNode(end as Cql2Expression));
  });
  return true;
}

function isBboxArray(bbox: unknown): boolean {
  return Array.isArray(bbox) && (bbox.length === 4 || bbox.length === 6) && bbox.every((value) => typeof value === 'number' && Number.isFinite(value));
}

/** How deep each type's coordinates nest: 0 for a position, 1 for a list of positions, and so on. */
const COORDINATE_DEPTH = new Map([['Point', 0], ['MultiPoint', 1], ['LineString', 1], ['MultiLineString', 2], ['Polygon', 2], ['MultiPolygon', 3]]);

function readGeometry(object: Record<string, unknown>, pointer: string, inCollection: boolean): Cql2Expression {
  const { type } = object;
  if (type === 'GeometryCollection' && inCollection) {
    checkKeys(object, pointer, ['type', 'geometries']);
    const { geometries } = object;
    // cql2.json asks for two geometries at least (the BNF of the text, one).
    if (!Array.isArray(geometries) || geometries.length < 2) throw refuse(`${pointer}/geometries`, 'an array of at least 2 geometries', excerptJson(geometries));
    geometries.forEach((geometry, index) => {
      const at = `${pointer}/geometries/${index}`;
      if (typeof geometry !== 'object' || geometry === null || Array.isArray(geometry)) throw refuse(at, 'a geometry', excerptJson(geometry));
      readGeometry(geometry as Record<string, unknown>, at, false);
    });
    return object as unknown as Cql2Expression;
  }
  const depth = typeof type === 'string' ? COORDINATE_DEPTH.get(type) : undefined;
  if (depth === undefined) throw refuse(`${pointer}/type`, `a GeoJSON geometry type${inCollection ? '' : ' other than GeometryCollection'}`, excerptJson(type));
  checkKeys(object, pointer, ['type', 'coordinates']);
  checkCoordinates(object.coordinates, `${pointer}/coordinates`, depth, type === 'LineString' || type === 'MultiLineString' ? 1 : type === 'Polygon' || type === 'MultiPolygon' ? 2 : -1);
  return object as unknown as Cql2Expression;
}

/**
 * Checks coordinates nested `depth` deep down to positions of 2 or 3 numbers, none empty. The list at `lineDepth`
 * is a line (at least 2 positions) and the lists below it polygon rings (at least 4, closed).
 */
function checkCoordinates(value: unknown, pointer: string, depth: number, lineDepth: number): void {
  if (depth === 0) {
    if (!Array.isArray(value) || value.length < 2 || value.length > 3 || !value.every((number) => typeof number === 'number' && Number.isFinite(number))) {
      throw refuse(pointer, 'a position of 2 or 3 numbers', excerptJson(value));
    }
    return;
  }
  if (!Array.isArray(value) || value.length === 0) throw refuse(pointer, 'a non-empty array of coordinates', excerptJson(value));
  value.forEach((item, index) => checkCoordinates(item, `${pointer}/${index}`, depth - 1, lineDepth));
  const ring = depth === 1 && lineDepth === 2;
  if (depth === 1 && lineDepth === 1 && value.length < 2) throw refuse(pointer, 'a line of at least 2 positions', `${value.length}`);
  if (ring && value.length < 4) throw refuse(pointer, 'a polygon ring of at least 4 positions', `${value.length}`);
  if (ring && JSON.stringify(value[0]) !== JSON.stringify(value.at(-1))) throw refuse(pointer, 'a closed polygon ring (its last position its first)', 'an open one');
}

function checkKeys(object: Record<string, unknown>, pointer: string, allowed: string[]): void {
  for (const key in object) {
    if (Object.hasOwn(object, key) && !allowed.includes(key)) throw refuse(`${pointer}/${escapePointer(key)}`, `only ${allowed.map((name) => `"${name}"`).join(' and ')} in this object`, `"${key.slice(0, 40)}"`);
  }
}

/** The error at a node; its message leaves the pointer to the caller, who says where in its own words. */
function refuse(pointer: string, expected: string, found: string): Cql2Error {
  return new Cql2Error(`expected ${expected}, found ${found}`, { pointer });
}

function describeNode(node: Cql2Expression): string {
  const category = categorizeCql2(node);
  if (typeof node !== 'object') return excerptJson(node);
  if (!Array.isArray(node) && 'op' in node) return `${category === 'function' ? 'the function' : ''} "${node.op}"`.trim();
  return category === 'array' || category === 'interval' ? `an ${category}` : `a ${category}`;
}

function describeKeys(object: Record<string, unknown>): string {
  const keys = Object.keys(object).slice(0, 4).map((key) => `"${key.slice(0, 20)}"`);
  return keys.length === 0 ? 'no members' : `members ${keys.join(', ')}`;
}

/** A JSON value as a message quotes it: its first 40 characters, or "nothing" for a missing member. */
function excerptJson(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value).slice(0, 40);
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
