/**
 * JSON Schemas that every MCP client can read. zod 4 writes `anyOf` of bare types as a `type` array
 * (`["string", "null"]`) and `z.unknown()` as `{}`; both are legal JSON Schema, but the MCP Inspector's strict mode
 * warns about them (rules `type-union` and `untyped-schema` of its core/json/schemaLint.ts), because clients that map
 * tool schemas onto a single-`type` dialect (the OpenAPI subset of Gemini function declarations) reject the tool or
 * drop the constraint. {@link makeSchemaPortable} rewrites both into equivalent schemas: the same values pass.
 */

type Json = Record<string, unknown>;

/** Keywords whose value is one subschema. */
const SUBSCHEMA_KEYWORDS = [
  'items', 'additionalItems', 'contains', 'not', 'propertyNames', 'if', 'then', 'else',
  'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'contentSchema',
];
/** Keywords whose value is an array of subschemas (`items` too, in draft 7's tuple form). */
const SUBSCHEMA_ARRAY_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
/** Keywords whose value maps names to subschemas. */
const SUBSCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions'];
/** Keywords that say something about a value but never refuse one: a schema of only these accepts anything. */
const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);
/** Every JSON value is one of these: `anyOf` of them is the typed spelling of "any value". */
const JSON_TYPES = ['null', 'boolean', 'number', 'string', 'array', 'object'];

/**
 * A copy of a JSON Schema with every `type` array written as `anyOf` of single types, and every schema that
 * constrains nothing (`{}`, or annotations only) written as `anyOf` of the six JSON types. Both rewrites accept
 * exactly the values the original accepts. Boolean schemas and the operand of `not` are left as they are.
 * @example makeSchemaPortable({ type: ['string', 'null'], description: 'A name' }) // { description: 'A name', anyOf: [{ type: 'string' }, { type: 'null' }] }
 */
export function makeSchemaPortable<T>(schema: T): T {
  return rewrite(schema, undefined) as T;
}

function rewrite(node: unknown, keyword: string | undefined): unknown {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) out[key] = rewriteChildren(key, value);
  if (Array.isArray(out.type)) splitTypeArray(out);
  if (keyword !== 'not' && Object.keys(out).every((key) => ANNOTATIONS.has(key))) out.anyOf = JSON_TYPES.map((type) => ({ type }));
  return out;
}

function rewriteChildren(key: string, value: unknown): unknown {
  if (SUBSCHEMA_ARRAY_KEYWORDS.includes(key) && Array.isArray(value)) return value.map((child) => rewrite(child, key));
  if (SUBSCHEMA_KEYWORDS.includes(key)) return rewrite(value, key);
  if (SUBSCHEMA_MAP_KEYWORDS.includes(key) && typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value as Json).map(([name, child]) => [name, rewrite(child, key)]));
  }
  return value;
}

/** `type: [a, b]` becomes `anyOf: [{type: a}, {type: b}]`; beside an `anyOf` already there, both go under `allOf`. */
function splitTypeArray(node: Json): void {
  const branches = (node.type as unknown[]).map((type) => ({ type }));
  delete node.type;
  if (node.anyOf === undefined) {
    node.anyOf = branches;
    return;
  }
  node.allOf = [...((node.allOf as unknown[] | undefined) ?? []), { anyOf: branches }, { anyOf: node.anyOf }];
  delete node.anyOf;
}
