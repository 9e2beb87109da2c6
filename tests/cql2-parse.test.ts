import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Cql2Error, type Cql2Expression } from '../core/cql2/expression.ts';
import { MAX_CQL2_TEXT_BYTES, parseCql2Text } from '../core/cql2/parse-text.ts';
import { MAX_CQL2_DEPTH, MAX_CQL2_NODES, readCql2Json } from '../core/cql2/read-json.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures/cql2');
const EXAMPLES = join(FIXTURES, 'examples');
const TEXTS = readdirSync(join(EXAMPLES, 'text')).filter((name) => name.endsWith('.txt')).sort();
const JSONS = readdirSync(join(EXAMPLES, 'json')).filter((name) => name.endsWith('.json')).sort();

const readText = (name: string) => readFileSync(join(EXAMPLES, 'text', name), 'utf8');
const readJson = (name: string): unknown => JSON.parse(readFileSync(join(EXAMPLES, 'json', name), 'utf8'));

/** Each text example with the JSON example of its tree: its namesake, or for `exampleNN-alt01` that of `exampleNN`. */
const PAIRS = TEXTS.map((text) => [text, `${text.replace(/(-alt\d+)?\.txt$/, '')}.json`] as const);
const OWN_PAIRS = PAIRS.filter(([text, json]) => text.replace('.txt', '.json') === json);
const ALTERNATIVES = PAIRS.filter(([text, json]) => text.replace('.txt', '.json') !== json);

const ajv = new Ajv2020({ strict: true, validateFormats: false });
const validateCql2 = ajv.compile(JSON.parse(readFileSync(join(FIXTURES, 'cql2.json'), 'utf8')) as object);

/**
 * The standard's examples 54, 55 and 82 write TIMESTAMP('2012-08-10T05:30:00.000000Z') in the text and
 * "2012-08-10T05:30:00Z" in the JSON: the same instant, written two ways. The parser keeps the text as written, so
 * both sides drop a fraction of zeros before they are compared.
 */
function dropZeroFractions(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.0+Z$/, '$1Z');
  if (Array.isArray(value)) return value.map(dropZeroFractions);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, dropZeroFractions(member)]));
}

function catchCql2Error(run: () => unknown): Cql2Error {
  try {
    run();
  } catch (error) {
    if (error instanceof Cql2Error) return error;
    throw error;
  }
  throw new Error('expected a Cql2Error, but nothing was thrown');
}

/** Pieces of CQL2 text that edits splice into the examples, to make filters just off the grammar. */
const PIECES = ['(', ')', ',', ' AND ', ' OR ', ' NOT ', "'", '"', '-', '+', '^', '\\', ' IN ', ' IS ', ' NULL', 'POINT', ' Z ', '1', '.', 'e', ' x ', 'f(', 'CASEI(', 'BBOX(', 'INTERVAL(', "'..'", ' = ', '<>', ' LIKE ', ' BETWEEN ', "DATE('2020-01-01')", 'A_CONTAINS(', 'S_INTERSECTS(', 'T_AFTER(', ' div '];
/** A fixed seed keeps the run repeatable; FUZZ_SEED picks another. */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

function nest(depth: number, inner: Cql2Expression): Cql2Expression {
  let tree = inner;
  for (let level = 0; level < depth; level++) tree = { op: 'not', args: [tree] };
  return tree;
}

describe("the standard's examples", () => {
  it('are all here: 120 in the text encoding, 109 in the JSON encoding, each text with a JSON tree', () => {
    expect(TEXTS).toHaveLength(120);
    expect(JSONS).toHaveLength(109);
    expect(OWN_PAIRS).toHaveLength(109);
    expect(ALTERNATIVES).toHaveLength(11);
    PAIRS.forEach(([, json]) => expect(existsSync(join(EXAMPLES, 'json', json))).toBe(true));
  });

  it.each(OWN_PAIRS)('%s parses to the tree of %s', (text, json) => {
    expect(dropZeroFractions(parseCql2Text(readText(text)))).toEqual(dropZeroFractions(readJson(json)));
  });

  it.each(ALTERNATIVES)('%s, another way to write an example, parses to the tree of %s', (text, json) => {
    expect(parseCql2Text(readText(text))).toEqual(readJson(json));
  });

  it.each(TEXTS)('%s parses to a tree valid against cql2.json, which readCql2Json reads back', (text) => {
    const tree = parseCql2Text(readText(text));
    expect(validateCql2(tree), ajv.errorsText(validateCql2.errors)).toBe(true);
    const json = JSON.parse(JSON.stringify(tree)) as unknown;
    expect(readCql2Json(json)).toEqual(json);
  });

  it.each(JSONS)('%s passes readCql2Json unchanged and validates against cql2.json', (json) => {
    const value = readJson(json);
    const copy = structuredClone(value);
    expect(readCql2Json(value)).toBe(value);
    expect(value).toEqual(copy);
    expect(validateCql2(value), ajv.errorsText(validateCql2.errors)).toBe(true);
  });
});

describe('parseCql2Text', () => {
  it('reads keywords in any case', () => {
    const upper = parseCql2Text("name LIKE 'a%' AND pop BETWEEN 1 AND 2 OR NOT S_INTERSECTS(geom, POINT(1 2)) AND x IS NOT NULL AND T_FINISHEDBY(t, DATE('2020-01-01'))");
    const lower = parseCql2Text("name like 'a%' and pop between 1 and 2 or not s_intersects(geom, point(1 2)) and x is not null and t_finishedby(t, date('2020-01-01'))");
    const mixed = parseCql2Text("name Like 'a%' And pop Between 1 aNd 2 Or Not S_Intersects(geom, Point(1 2)) AND x Is Not Null AND T_FinishedBy(t, Date('2020-01-01'))");
    expect(lower).toEqual(upper);
    expect(mixed).toEqual(upper);
    expect(JSON.stringify(upper)).toContain('"op":"t_finishedBy"');
  });

  it('keeps property and function names as written', () => {
    expect(parseCql2Text('Name = 1')).toEqual({ op: '=', args: [{ property: 'Name' }, 1] });
    expect(parseCql2Text('name = 1')).toEqual({ op: '=', args: [{ property: 'name' }, 1] });
    expect(parseCql2Text('Buffer(g, 1) = TRUE')).toEqual({ op: '=', args: [{ op: 'Buffer', args: [{ property: 'g' }, 1] }, true] });
  });

  it.each([
    ['"name" = 1', 'name'],
    ['"my name" = 1', 'my name'],
    ['"AND" = 1', 'AND'],
    ['"date" = 1', 'date'],
    ['eo:cloud_cover = 1', 'eo:cloud_cover'],
    ['properties.height = 1', 'properties.height'],
    ['straße = 1', 'straße'],
    ['名前 = 1', '名前'],
  ])('reads %s as a comparison of the property %j', (text, property) => {
    expect(parseCql2Text(text)).toEqual({ op: '=', args: [{ property }, 1] });
  });

  it.each([
    ["x = 'it''s'", "it's"],
    ["x = 'it\\'s'", "it's"],
    ["x = 'a\\b'", 'a\\b'],
    ["x = ''", ''],
    ['x = -1.5e3', -1500],
    ['x = +2', 2],
    ['x = .5', 0.5],
    ['x = 1.', 1],
    ['x = 6.02E+23', 6.02e23],
    ['x = - 7', -7],
    ['x = true', true],
    ['x = FALSE', false],
  ])('reads the literal of %s', (text, value) => {
    expect(parseCql2Text(text)).toEqual({ op: '=', args: [{ property: 'x' }, value] });
  });

  it('binds AND before OR, and makes one operation of a chain', () => {
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => ({ op: '=', args: [{ property: name }, 1] }));
    expect(parseCql2Text('a = 1 OR b = 1 AND c = 1 OR d = 1')).toEqual({ op: 'or', args: [a, { op: 'and', args: [b, c] }, d] });
    expect(parseCql2Text('(a = 1 OR b = 1) AND c = 1 AND d = 1')).toEqual({ op: 'and', args: [{ op: 'or', args: [a, b] }, c, d] });
    expect(parseCql2Text('NOT a = 1 AND b = 1')).toEqual({ op: 'and', args: [{ op: 'not', args: [a] }, b] });
  });

  it('binds ^ before * / % DIV before + -, left to right, and writes -x as -1 * x', () => {
    expect(parseCql2Text('x = 1 + 2 * 3 ^ 2 - 4 % 3 div 2')).toEqual({
      op: '=',
      args: [{ property: 'x' }, { op: '-', args: [
        { op: '+', args: [1, { op: '*', args: [2, { op: '^', args: [3, 2] }] }] },
        { op: 'div', args: [{ op: '%', args: [4, 3] }, 2] },
      ] }],
    });
    expect(parseCql2Text('x = -y')).toEqual({ op: '=', args: [{ property: 'x' }, { op: '*', args: [-1, { property: 'y' }] }] });
    expect(parseCql2Text('x-1 > 0')).toEqual({ op: '>', args: [{ op: '-', args: [{ property: 'x' }, 1] }, 0] });
  });

  it('reads NOT LIKE, NOT BETWEEN, NOT IN and IS NOT NULL as NOT of the predicate', () => {
    const x = { property: 'x' };
    expect(parseCql2Text("x NOT LIKE CASEI('a%')")).toEqual({ op: 'not', args: [{ op: 'like', args: [x, { op: 'casei', args: ['a%'] }] }] });
    expect(parseCql2Text('x NOT BETWEEN 1 AND 2')).toEqual({ op: 'not', args: [{ op: 'between', args: [x, 1, 2] }] });
    expect(parseCql2Text("x NOT IN ('a')")).toEqual({ op: 'not', args: [{ op: 'in', args: [x, ['a']] }] });
    expect(parseCql2Text('x IS NOT NULL')).toEqual({ op: 'not', args: [{ op: 'isNull', args: [x] }] });
  });

  it('reads both forms of MULTIPOINT, Z coordinates, six-number BBOX and open intervals', () => {
    const points = { type: 'MultiPoint', coordinates: [[1, 2], [3, 4]] };
    expect(parseCql2Text('S_WITHIN(g, MULTIPOINT(1 2, 3 4))')).toEqual({ op: 's_within', args: [{ property: 'g' }, points] });
    expect(parseCql2Text('S_WITHIN(g, MULTIPOINT((1 2), (3 4)))')).toEqual({ op: 's_within', args: [{ property: 'g' }, points] });
    expect(parseCql2Text('S_EQUALS(g, POINT Z (1 2 3))')).toEqual({ op: 's_equals', args: [{ property: 'g' }, { type: 'Point', coordinates: [1, 2, 3] }] });
    expect(parseCql2Text('S_INTERSECTS(g, BBOX(-1, -2, 0, 3, 4, 100))')).toEqual({ op: 's_intersects', args: [{ property: 'g' }, { bbox: [-1, -2, 0, 3, 4, 100] }] });
    expect(parseCql2Text("T_INTERSECTS(t, INTERVAL('..', '2020-01-01T00:00:00Z'))")).toEqual({ op: 't_intersects', args: [{ property: 't' }, { interval: ['..', '2020-01-01T00:00:00Z'] }] });
  });

  it('reads arrays: one item as an operand of A_*, none, several, and nested', () => {
    expect(parseCql2Text("A_CONTAINS(tags, ('a'))")).toEqual({ op: 'a_contains', args: [{ property: 'tags' }, ['a']] });
    expect(parseCql2Text('A_EQUALS(tags, ())')).toEqual({ op: 'a_equals', args: [{ property: 'tags' }, []] });
    expect(parseCql2Text("A_OVERLAPS(tags, ((1, 2), 'b', POINT(1 2)))")).toEqual({ op: 'a_overlaps', args: [{ property: 'tags' }, [[1, 2], 'b', { type: 'Point', coordinates: [1, 2] }]] });
    expect(parseCql2Text('f((1, 2), (3))')).toEqual({ op: 'f', args: [[1, 2], 3] });
  });

  it.each([
    ['pop > 5 garbage', 8, 'expected AND, OR or the end of the filter after "5", found "garbage"'],
    ['a = 1; DROP TABLE x', 5, 'found ";"'],
    ['name = ', 7, 'expected a value after "=", found the end of the filter'],
    ['pop >> 5', 4, 'expected a comparison operator, LIKE, BETWEEN, IN or IS after "pop", found ">>"'],
    ['pop != 5', 4, 'found "!="'],
    ['pop', 3, 'expected a comparison operator, LIKE, BETWEEN, IN or IS after "pop", found the end of the filter'],
    ['', 0, 'expected a filter, found an empty text'],
    [' \n\t', 0, 'expected a filter, found an empty text'],
    ["name = 'Paris", 7, 'unterminated string'],
    ["name = 'Paris\\'", 7, 'unterminated string'],
    ['"name = 1', 0, 'unterminated name'],
    ['"" = 1', 0, 'expected a property name'],
    ['x = 12abc', 4, 'expected a number, found "12abc"'],
    ['x = 1.2.3', 4, 'expected a number, found "1.2.3"'],
    ['x = 1e', 4, 'expected a number, found "1e"'],
    ['x = 1e999', 4, 'a number that fits a double'],
    ['(a = 1', 6, 'the "(" at character 1 is open), found the end of the filter'],
    ['a = 1)', 5, 'found ")"'],
    ['((a = 1) OR (b = 2)', 19, 'the "(" at character 1 is open'],
    ['a = 1 AND AND b = 2', 10, 'expected a value after "AND", found "AND"'],
    ['a = 1 AND', 9, 'expected a value after "AND", found the end of the filter'],
    ['NOT NOT a = 1', 4, 'expected a value after "NOT", found "NOT"'],
    ['x NOT = 1', 6, 'expected LIKE, BETWEEN or IN after "NOT"'],
    ['x IS 5', 5, 'expected NULL or NOT NULL after "IS"'],
    ['x BETWEEN 1 OR 2', 12, 'expected AND after "1"'],
    ['x IN ()', 6, 'expected a value after "("'],
    ['x IN (1, a = 1)', 11, 'expected "," or ")" after "a"'],
    ['x LIKE y', 7, 'expected a pattern'],
    ['x LIKE CASEI(y)', 13, 'expected a pattern'],
    ['a = 2 ^ 3 ^ 4', 10, 'parentheses around one "^" of two'],
    ['(a = 1) + 2 > 3', 0, 'as operand 1 of "+", found "(a = 1)"'],
    ["x = - 'a'", 6, 'after "-", found "\'a\'"'],
    ['S_INTERSECTS(a, b) = TRUE', 0, 'as operand 1 of "=", found "S_INTERSECTS(a, b)"'],
    ['x = POINT(1 2)', 4, 'as operand 2 of "=", found "POINT(1 2)"'],
    ['(a = 1 AND x)', 11, 'as operand 2 of AND, found "x"'],
    ['NOT (x)', 7, 'expected a comparison operator, LIKE, BETWEEN, IN or IS after "(x)"'],
    ['NOT x', 5, 'expected a comparison operator, LIKE, BETWEEN, IN or IS after "x"'],
    ['f(1 2)', 4, 'expected a comparison operator, LIKE, BETWEEN, IN, IS, "," or ")" after "1", found "2"'],
    ['isNull(x)', 0, 'expected a function name, found the operator "isNull"'],
    ['S_INTERSECTS(geom)', 0, 'expected 2 operands of S_INTERSECTS, found 1'],
    ['S_INTERSECTS(geom, 5)', 19, 'expected a geometry, BBOX, property or function as operand 2 of S_INTERSECTS, found "5"'],
    ["T_AFTER(built, 'yesterday')", 15, 'expected a date, timestamp, interval, property or function as operand 2 of T_AFTER'],
    ["A_CONTAINS(tags, 'a')", 17, 'expected an array, property or function as operand 2 of A_CONTAINS'],
    ['S_INTERSECTS(geom, POLYGON((0 0, 1 1)))', 27, 'expected a polygon ring of at least 4 positions, found 2'],
    ['S_INTERSECTS(geom, POLYGON((0 0, 1 0, 1 1, 0 1)))', 27, 'expected a closed polygon ring'],
    ['S_INTERSECTS(geom, POINT(1))', 26, 'expected a second coordinate after "1", found ")"'],
    ['S_INTERSECTS(geom, POINT(1 2 3 4))', 31, 'a position has at most 3 coordinates'],
    ['S_INTERSECTS(geom, POINT(1 2, 3 4))', 28, 'expected ")"'],
    ['S_INTERSECTS(geom, POINT Z(1 2))', 30, 'expected a third coordinate (after Z)'],
    ['S_INTERSECTS(geom, LINESTRING(1 2))', 29, 'expected a line of at least 2 positions, found 1'],
    ['S_INTERSECTS(geom, POINT(1 2)', 29, '"," or ")" after "POINT(1 2)", found the end of the filter'],
    ['S_INTERSECTS(geom, x', 20, '"," or ")" after "x", found the end of the filter'],
    ['S_INTERSECTS(geom, BBOX(1, 2, 3))', 19, 'expected 4 or 6 numbers in BBOX, found 3'],
    ['S_INTERSECTS(geom, GEOMETRYCOLLECTION(GEOMETRYCOLLECTION(POINT(1 2))))', 38, 'expected POINT, LINESTRING, POLYGON'],
    ['S_EQUALS(g, GEOMETRYCOLLECTION(POINT(1 2)))', 30, 'expected a GEOMETRYCOLLECTION of at least 2 geometries, found 1'],
    ["T_AFTER(built, DATE('2021-02-30'))", 20, "expected a date in quotes, like '1969-07-20'"],
    ["T_AFTER(built, TIMESTAMP('2021-02-03T10:00:00+01:00'))", 25, 'expected a timestamp in quotes'],
    ["T_AFTER(built, INTERVAL('2021-01-01'))", 36, 'expected ","'],
    ["T_AFTER(built, INTERVAL('today', '..'))", 24, "expected a date, a timestamp, '..', a property or a function as an end of INTERVAL"],
  ])('refuses %j at character %i, saying …%s…', (text, position, fragment) => {
    const error = catchCql2Error(() => parseCql2Text(text));
    expect(error.message).toContain(fragment);
    expect(error.message).toContain(`at character ${position + 1}`);
    expect(error.position).toBe(position);
  });

  it('returns only trees valid against cql2.json, and otherwise a Cql2Error at a character of the text, for examples edited at random', () => {
    const edits = fc.array(fc.tuple(fc.nat(), fc.nat(6), fc.constantFrom(...PIECES)), { minLength: 1, maxLength: 4 });
    fc.assert(fc.property(fc.constantFrom(...TEXTS), edits, (name, changes) => {
      let text = readText(name);
      for (const [at, cut, piece] of changes) text = text.slice(0, at % (text.length + 1)) + piece + text.slice((at % (text.length + 1)) + cut);
      try {
        const tree = parseCql2Text(text);
        expect(validateCql2(tree), `${text}: ${ajv.errorsText(validateCql2.errors)}`).toBe(true);
      } catch (error) {
        if (!(error instanceof Cql2Error) || error.pointer !== undefined) throw error;
        expect(error.position).toBeGreaterThanOrEqual(0);
        expect(error.position).toBeLessThanOrEqual(text.length);
        expect(error.message).toContain(`at character ${error.position! + 1}`);
      }
    }), { numRuns: 3_000, seed: SEED });
  });

  it(`parses ${MAX_CQL2_DEPTH} parentheses inside one another, and refuses ${MAX_CQL2_DEPTH + 1}`, () => {
    const nested = (depth: number) => `${'('.repeat(depth)}a = 1${')'.repeat(depth)}`;
    expect(parseCql2Text(nested(MAX_CQL2_DEPTH))).toEqual({ op: '=', args: [{ property: 'a' }, 1] });
    const error = catchCql2Error(() => parseCql2Text(nested(MAX_CQL2_DEPTH + 1)));
    expect(error.position).toBe(MAX_CQL2_DEPTH);
    expect(error.message).toContain(`at most ${MAX_CQL2_DEPTH} parentheses inside one another, found more at character ${MAX_CQL2_DEPTH + 1}`);
  });

  it('refuses hostile nesting without overflowing the stack', () => {
    expect(catchCql2Error(() => parseCql2Text('NOT ('.repeat(12_000))).position).toBe(MAX_CQL2_DEPTH * 5 + 4);
    expect(catchCql2Error(() => parseCql2Text(`x = ${'f('.repeat(30_000)}`)).position).toBe(4 + MAX_CQL2_DEPTH * 2 + 1);
  });

  it('refuses a tree deeper than the JSON encoding allows, with its pointer', () => {
    const error = catchCql2Error(() => parseCql2Text(`${'f('.repeat(40)}x${')'.repeat(40)}`));
    expect(error.message).toContain(`more than ${MAX_CQL2_DEPTH} deep`);
    expect(error.pointer).toMatch(/^(\/args\/0)+$/);
  });

  it(`refuses a filter over ${MAX_CQL2_TEXT_BYTES} bytes, counted in UTF-8`, () => {
    const long = `${'a = 1 AND '.repeat(7_168)}a = 1`;
    expect(long.length).toBeGreaterThan(70 * 1024);
    const error = catchCql2Error(() => parseCql2Text(long));
    expect(error.position).toBe(MAX_CQL2_TEXT_BYTES);
    expect(error.message).toContain(`longer than ${MAX_CQL2_TEXT_BYTES} bytes`);
    const accents = `x = '${'é'.repeat(33_000)}'`;
    expect(accents.length).toBeLessThan(MAX_CQL2_TEXT_BYTES);
    expect(catchCql2Error(() => parseCql2Text(accents)).message).toContain('longer than');
  });

  it(`refuses a tree of more than ${MAX_CQL2_NODES} values`, () => {
    const error = catchCql2Error(() => parseCql2Text(`x IN (${new Array(MAX_CQL2_NODES).fill(1).join(',')})`));
    expect(error.message).toContain(`more than ${MAX_CQL2_NODES} values`);
    expect(error.pointer).toBe('/args/1');
  });
});

describe('readCql2Json', () => {
  it.each([
    [{ op: 5, args: [] }, '/op', 'expected an operator or function name, found 5'],
    [{ foo: 1 }, '', 'found an object with members "foo"'],
    [{ op: 'and', args: 'x' }, '/args', 'expected an array of the operands of "and"'],
    [{ op: 'and', args: [true] }, '/args', 'expected at least 2 operands of "and", found 1'],
    [{ op: 'not', args: [true, false] }, '/args', 'expected 1 operand of "not", found 2'],
    [null, '', 'expected a CQL2 value, found null'],
    [{ property: 'name' }, '', 'expected a filter that is a predicate, TRUE, FALSE or a function, found a property'],
    [{ op: 'AND', args: [true, true] }, '/op', 'expected "and"'],
    [{ op: 't_finishedby', args: [{ property: 't' }, { date: '2020-01-01' }] }, '/op', 'expected "t_finishedBy"'],
    [{ op: '=', args: [{ property: 'a' }, 1], where: 'x' }, '/where', 'expected only "op" and "args" in this object, found "where"'],
    [JSON.parse('{"op":"=","args":[1,1],"__proto__":{}}') as unknown, '/__proto__', 'found "__proto__"'],
    [{ op: '=', args: [{ property: '' }, 1] }, '/args/0/property', 'expected a property name'],
    [{ op: '=', args: [{ property: 'a' }, [1]] }, '/args/1', 'as operand 2 of "=", found an array'],
    [{ op: 'in', args: [{ property: 'a' }, [1, { op: 'and', args: [true, false] }]] }, '/args/1/1', 'in the list of "in", found "and"'],
    [{ op: 'like', args: [{ property: 'a' }, { op: 'casei', args: [{ property: 'b' }] }] }, '/args/1', 'expected a pattern'],
    [{ op: 's_intersects', args: [{ property: 'g' }, 5] }, '/args/1', 'expected a geometry, BBOX, property or function as operand 2 of "s_intersects", found 5'],
    [{ op: 's_intersects', args: [{ property: 'g' }, { type: 'Point', coordinates: [1] }] }, '/args/1/coordinates', 'expected a position of 2 or 3 numbers'],
    [{ op: 's_intersects', args: [{ property: 'g' }, { type: 'Point', coordinates: [1, 2], bbox: [1, 2, 1, 2] }] }, '/args/1/bbox', 'found "bbox"'],
    [{ op: 's_intersects', args: [{ property: 'g' }, { type: 'Polygon', coordinates: [[[0, 0], [1, 1]]] }] }, '/args/1/coordinates/0', 'expected a polygon ring of at least 4 positions'],
    [{ op: 's_intersects', args: [{ property: 'g' }, { type: 'Circle', coordinates: [0, 0] }] }, '/args/1/type', 'expected a GeoJSON geometry type'],
    [{ op: 's_intersects', args: [{ property: 'g' }, { bbox: [1, 2, 3] }] }, '/args/1/bbox', 'expected 4 or 6 numbers'],
    [{ op: 's_equals', args: [{ property: 'g' }, { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }] }] }, '/args/1/geometries', 'expected an array of at least 2 geometries'],
    [{ op: 't_after', args: [{ property: 't' }, { date: '2020-13-01' }] }, '/args/1/date', 'expected a date "YYYY-MM-DD"'],
    [{ op: 't_after', args: [{ property: 't' }, { interval: ['2020-01-01', 'soon'] }] }, '/args/1/interval/1', "expected a date, a timestamp, '..', a property or a function"],
  ])('refuses %j at the pointer %j, saying …%s…', (value, pointer, fragment) => {
    const error = catchCql2Error(() => readCql2Json(value));
    expect(error.pointer).toBe(pointer);
    expect(error.message).toContain(fragment);
  });

  it('accepts only values valid against cql2.json, and otherwise names a pointer, for examples with a part replaced at random', () => {
    const word = fc.constantFrom('and', 'not', '=', 'like', 'in', 'isNull', 'casei', 's_intersects', 't_after', 'a_contains', '+', 'f', '..', '2020-01-01', 'Point', 'GeometryCollection');
    const member = fc.constantFrom('op', 'args', 'property', 'date', 'interval', 'bbox', 'type', 'coordinates', 'geometries');
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, word, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(member, tie('value'), { maxKeys: 3 })),
    }));
    fc.assert(fc.property(fc.constantFrom(...JSONS), fc.nat(), value, (name, at, replacement) => {
      const tree = readJson(name) as { args: unknown[] };
      const target = tree.args[at % tree.args.length];
      const parent = typeof target === 'object' && target !== null && 'args' in target && Array.isArray(target.args) && target.args.length > 0 ? target.args : tree.args;
      parent[at % parent.length] = replacement;
      try {
        readCql2Json(tree);
        expect(validateCql2(tree), `${JSON.stringify(tree)}: ${ajv.errorsText(validateCql2.errors)}`).toBe(true);
      } catch (error) {
        if (!(error instanceof Cql2Error) || error.pointer === undefined) throw error;
      }
    }), { numRuns: 3_000, seed: SEED });
  });

  it(`reads ${MAX_CQL2_DEPTH} levels of nesting, and refuses more, with the pointer of the first too deep`, () => {
    expect(readCql2Json(nest(MAX_CQL2_DEPTH / 2, true))).toEqual(nest(MAX_CQL2_DEPTH / 2, true));
    const error = catchCql2Error(() => readCql2Json(nest(MAX_CQL2_DEPTH / 2 + 1, true)));
    expect(error.message).toContain(`more than ${MAX_CQL2_DEPTH} deep`);
    expect(error.pointer).toBe('/args/0'.repeat(MAX_CQL2_DEPTH / 2));
  });

  it(`refuses more than ${MAX_CQL2_NODES} values, before looking at a million`, () => {
    const list = { op: 'in', args: [{ property: 'a' }, new Array(MAX_CQL2_NODES).fill(1)] };
    expect(catchCql2Error(() => readCql2Json(list)).pointer).toBe('/args/1');
    const wide = { op: 'and', args: new Array(1_000_000).fill(true) };
    const error = catchCql2Error(() => readCql2Json(wide));
    expect(error.pointer).toBe('/args');
    expect(error.message).toContain(`more than ${MAX_CQL2_NODES} values`);
  });

  it('refuses a string nested a thousand arrays deep, as JSON.parse gives it, without recursion', () => {
    const deep = JSON.parse(`${'['.repeat(1_000)}"x"${']'.repeat(1_000)}`) as unknown;
    expect(catchCql2Error(() => readCql2Json({ op: 'f', args: [deep] })).pointer).toBe(`/args/0${'/0'.repeat(MAX_CQL2_DEPTH - 2)}`);
  });
});

describe('ILIKE, which CQL2 does not have', () => {
  it('is refused in cql2-text, and read as LIKE of both sides in CASEI where the drafts\' cql-text is read', () => {
    expect(() => parseCql2Text("name ILIKE 'tok%'")).toThrow(/found "ILIKE"/);
    expect(parseCql2Text("name ILIKE 'tok%'", { ilike: true })).toEqual({ op: 'like', args: [{ op: 'casei', args: [{ property: 'name' }] }, { op: 'casei', args: ['tok%'] }] });
    expect(parseCql2Text("name NOT ILIKE 'tok%'", { ilike: true })).toEqual({ op: 'not', args: [{ op: 'like', args: [{ op: 'casei', args: [{ property: 'name' }] }, { op: 'casei', args: ['tok%'] }] }] });
  });
});
