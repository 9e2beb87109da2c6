import fc from 'fast-check';

type Json = Record<string, any>;

/** Values known to exist in the catalog (slugs, ids, tokens, ETags), by parameter name. */
export type ValuePools = Map<string, string[]>;

/** `arbitrary`'s value with probability `chance`, else `nil` (fc.option counts the other way: 1/freq is nil). */
export function sometimes<T, N = undefined>(arbitrary: fc.Arbitrary<T>, chance: number, nil?: N): fc.Arbitrary<T | N> {
  const weight = Math.round(chance * 100);
  return fc.oneof({ weight: 100 - weight, arbitrary: fc.constant(nil as N) }, { weight, arbitrary });
}

/** Texts that have broken parsers before: traversal, bad encodings, prototype names, number edge cases, scripts. */
export const HOSTILE_TEXTS = [
  '', ' ', '..', '../', '../../../../etc/passwd', '..%2F..%2Fetc%2Fpasswd', '%2e%2e%2f', '%2F', '%00', '\0', '%', '%ZZ', '%C0%AE', '%E0%A4%A',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__',
  'null', 'undefined', 'NaN', 'Infinity', '-Infinity', '-1', '0', '-0', '1e309', '1e-400', '9007199254740993', '99999999999999999999',
  '0x10', '0b1', '1.5', '01', '+1', ' 1', '1 ', '1,2', 'true', 'TRUE', '[]', '{}', '[1,2]', '{"a":1}', '"', "'", '\\', '`',
  '<script>alert(1)</script>', "' OR '1'='1", '; DROP TABLE t; --', '${7*7}', '{{7*7}}', 'é', 'ｅ', 'İ', 'ß', '\u202e', '\u200b', '\ufeff',
  '💥', '\ud800', 'a\r\nb', '\t', '*', '?', '#', '&', '=', '+', ',', ',,,', 'a'.repeat(300), '9'.repeat(400),
] as const;

/** Any text a client could send: hostile constants, random graphemes and bytes, long runs (bounded), numbers. */
export function hostileText(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_TEXTS) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', '/', '%', '9', 'é', '..'), fc.integer({ min: 100, max: 1200 })).map(([unit, times]) => unit.repeat(times)) },
    { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.bigInt()).map(String) },
  );
}

const isoDate = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });

/** Edge cases of the OGC `bbox`: antimeridian, 6 numbers, wrong counts, out of range, NaN, spacing, signs. */
export const BBOX_TEXTS = fc.oneof(
  fc.constantFrom('-180,-90,180,90', '170,-10,-170,10', '0,0,0,0', '1,2,3', '1,2,3,4,5', '0,40,-100,20,60,100', 'NaN,0,1,1', '1e309,0,1,1',
    '-181,0,0,0', '0,91,1,92', '10,20,5,10', ' 1 , 2 , 3 , 4 ', '+1,-.5,1.,2e1', ',,,', '1;2;3;4', '0x1,0,1,1', '-0,-0,0,0', '180,90,-180,-90'),
  fc.array(fc.oneof(fc.double({ min: -200, max: 200, noNaN: true }), fc.integer({ min: -181, max: 181 })), { minLength: 3, maxLength: 7 }).map((numbers) => numbers.join(',')),
);

/** Edge cases of the OGC `datetime`: open ends, leap seconds, impossible dates, offsets past year 9999. */
export const DATETIME_TEXTS = fc.oneof(
  fc.constantFrom('2026-11-22', '2026-11-22T00:00:00Z', '../2026-01-01', '2026-01-01/..', '2026-01-01/', '/2026-01-01', '../..', '/', '..',
    '2026-02-31', '2026-02-29', '2024-02-29', '2100-02-29', '2026-11-22T24:00:00Z', '2016-12-31T23:59:60Z', '0000-01-01', '9999-12-31T23:59:59.999+00:00',
    '9999-12-31T23:59:59-01:00', '2026-13-01', '2026-01-01/2025-01-01', 'now', '2026-11-22t00:00:00z', '2026-11-22T00:00:00', '2026-11-22T00:00:00+25:00', '1/2/3'),
  fc.tuple(isoDate, isoDate).map(([a, b]) => `${a.toISOString()}/${b.toISOString()}`),
  isoDate.map((date) => date.toISOString().slice(0, 10)),
);

/** GeoJSON geometries, valid and not: tiny, degenerate, open rings, out of range, wrong types, deep nesting. */
export const GEOMETRIES = fc.oneof(
  fc.constantFrom(
    { type: 'Point', coordinates: [0, 0] }, { type: 'Point', coordinates: [181, 0] }, { type: 'Point', coordinates: [] },
    { type: 'Polygon', coordinates: [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]] },
    { type: 'Polygon', coordinates: [[[0, 0], [10, 10], [10, 0], [0, 10], [0, 0]]] },
    { type: 'Polygon', coordinates: [[[0, 0], [1, 1]]] }, { type: 'LineString', coordinates: [[170, 0], [-170, 0]] },
    { type: 'GeometryCollection', geometries: [] }, { type: 'Feature', geometry: null }, { type: 'Circle', coordinates: [0, 0] },
    { type: 'MultiPolygon', coordinates: [] }, { type: 'Point', coordinates: [0, 0], crs: 'EPSG:3857' },
  ),
  fc.array(fc.tuple(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -90, max: 90, noNaN: true })), { minLength: 3, maxLength: 40 })
    .map((ring) => ({ type: 'Polygon', coordinates: [[...ring, ring[0]]] })),
);

/**
 * Values of parameters and body fields whose meaning a name gives away across surfaces (`bbox`, `datetime`,
 * `intersects`, …), as text for a query string. Generic text covers every other name.
 */
export const DOMAIN_TEXTS: Record<string, fc.Arbitrary<string>> = {
  bbox: BBOX_TEXTS,
  datetime: DATETIME_TEXTS,
  intersects: GEOMETRIES.map((geometry) => JSON.stringify(geometry)),
  sortby: fc.array(fc.tuple(fc.constantFrom('', '+', '-', ' '), fc.constantFrom('id', 'collection', 'datetime', 'title', 'properties.datetime', 'properties.title', 'geometry', '__proto__')), { maxLength: 4 })
    .map((keys) => keys.map(([sign, field]) => sign + field).join(',')),
  result_crs: fc.constantFrom('EPSG:4326', 'EPSG:3857', 'EPSG:32633', 'epsg:3857', 'EPSG:0', 'EPSG:99999', 'OGC:CRS84', '+proj=longlat', 'EPSG:4326 '),
  tag_filters: fc.array(fc.tuple(fc.constantFrom('categories', 'inventory', 'region', '__proto__', ''), fc.constantFrom('boundaries', 'populated-places', 'GeoNames', '', ':', '*')), { maxLength: 4 })
    .map((pairs) => pairs.map(([key, value]) => `${key}:${value}`).join(',')),
};

/** The same domains as JSON values, for bodies (STAC search, MCP arguments). */
export const DOMAIN_JSON: Record<string, fc.Arbitrary<unknown>> = {
  bbox: fc.oneof(BBOX_TEXTS.map((text) => text.split(',').map(Number)), fc.array(fc.double(), { maxLength: 7 })),
  datetime: DATETIME_TEXTS,
  intersects: GEOMETRIES,
};

/** Tokens as clients mangle them: flipped characters, cut short, padded, another query's, or made up. */
export function mutatedToken(tokens: readonly string[]): fc.Arbitrary<string> {
  if (tokens.length === 0) return hostileText();
  const token = fc.constantFrom(...tokens);
  const base64url = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  return fc.oneof(
    { weight: 3, arbitrary: token },
    { weight: 3, arbitrary: fc.tuple(token, fc.nat(), fc.constantFrom(...base64url)).map(([text, at, character]) => `${text.slice(0, at % text.length)}${character}${text.slice((at % text.length) + 1)}`) },
    { weight: 2, arbitrary: fc.tuple(token, fc.nat()).map(([text, at]) => text.slice(0, at % text.length)) },
    { weight: 1, arbitrary: token.map((text) => text.split('.').reverse().join('.')) },
    { weight: 1, arbitrary: fc.tuple(token, hostileText()).map(([text, tail]) => text + tail) },
    { weight: 1, arbitrary: fc.array(fc.string({ unit: fc.constantFrom(...base64url), maxLength: 60 }), { minLength: 5, maxLength: 5 }).map((parts) => parts.join('.')) },
    { weight: 1, arbitrary: hostileText() },
  );
}

/** A text for a parameter: a value of the catalog when one is known for its name, a domain value, or hostile text. */
export function parameterText(name: string, pools: ValuePools, schemaValues: readonly string[] = []): fc.Arbitrary<string> {
  const known = [...(pools.get(name) ?? []), ...schemaValues];
  const choices: { weight: number; arbitrary: fc.Arbitrary<string> }[] = [{ weight: 2, arbitrary: hostileText() }];
  if (known.length > 0) choices.push({ weight: 5, arbitrary: fc.constantFrom(...known) });
  if (Object.hasOwn(DOMAIN_TEXTS, name)) choices.push({ weight: 4, arbitrary: DOMAIN_TEXTS[name]! });
  return fc.oneof(...choices);
}

/**
 * Values of a JSON Schema (as `z.toJSONSchema` writes it: `$ref`/`$defs`, `anyOf`/`oneOf`, `prefixItems`, enums),
 * mostly valid, and at every node sometimes something else: a wrong type, a hostile text, a missing required
 * field or an extra one (prototype names included). Strings named like a pool or domain take its values.
 */
export function jsonSchemaValue(schema: Json, pools: ValuePools, root: Json = schema, name = '', depth = 0): fc.Arbitrary<unknown> {
  const valid = validValue(schema, pools, root, name, depth);
  const wrong = fc.oneof(hostileText(), fc.constantFrom(null, true, -1, 0, 1.5, 2 ** 53, -(2 ** 63), [], {}, Number.NaN));
  return fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: wrong });
}

function validValue(schema: Json, pools: ValuePools, root: Json, name: string, depth: number): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') return validValue(resolveRef(root, schema.$ref), pools, root, name, depth);
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants)) return fc.oneof(...variants.map((variant: Json) => validValue(variant, pools, root, name, depth)));
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (Object.hasOwn(DOMAIN_JSON, name)) return DOMAIN_JSON[name]!;
  const type = [schema.type].flat()[0];
  const pool = pools.get(name) ?? [];
  switch (type) {
    case 'integer': {
      const numbers = pool.map(Number).filter(Number.isInteger);
      const range = fc.integer({ min: Math.max(schema.minimum ?? -1e6, -1e9), max: Math.min(schema.maximum ?? 1e6, 1e9) });
      return numbers.length > 0 ? fc.oneof(fc.constantFrom(...numbers), range) : range;
    }
    case 'number': return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    case 'string': return pool.length > 0 ? fc.oneof(fc.constantFrom(...pool), hostileText()) : hostileText();
    case 'array': return arrayValue(schema, pools, root, name, depth);
    case 'object': return objectValue(schema, pools, root, depth);
    default: return depth > 3 ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
  }
}

function arrayValue(schema: Json, pools: ValuePools, root: Json, name: string, depth: number): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.prefixItems)) return fc.tuple(...schema.prefixItems.map((item: Json) => jsonSchemaValue(item, pools, root, name, depth + 1)));
  const items = schema.items && typeof schema.items === 'object' ? schema.items : {};
  const maxLength = Math.min(schema.maxItems ?? 4, depth > 2 ? 2 : 4);
  return fc.array(jsonSchemaValue(items, pools, root, name, depth + 1), { minLength: Math.min(schema.minItems ?? 0, maxLength), maxLength });
}

function objectValue(schema: Json, pools: ValuePools, root: Json, depth: number): fc.Arbitrary<unknown> {
  const properties = Object.entries((schema.properties ?? {}) as Json);
  const required = new Set<string>(schema.required ?? []);
  const fields = Object.fromEntries(properties.map(([key, property]) => [key, sometimes(jsonSchemaValue(property, pools, root, key, depth + 1), required.has(key) ? 0.95 : 0.5)]));
  const extra = sometimes(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'toString', 'extra', ''), fc.jsonValue({ maxDepth: 1 })), 0.125);
  return fc.tuple(fc.record(fields), extra).map(([value, added]) => {
    const object: Record<string, unknown> = Object.create(null);
    for (const [key, inner] of Object.entries(value)) if (inner !== undefined) object[key] = inner;
    if (added) Object.defineProperty(object, added[0], { value: added[1], enumerable: true, writable: true, configurable: true });
    return object;
  });
}

function resolveRef(root: Json, ref: string): Json {
  return ref.replace(/^#\//, '').split('/').reduce((node: Json, key) => node[key.replaceAll('~1', '/').replaceAll('~0', '~')], root);
}
