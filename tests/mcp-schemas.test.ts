import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { makeSchemaPortable } from '../core/api/mcp/portable-schema.ts';
import { listMcpTools } from '../core/api/mcp/tool-list.ts';

const ajv = new Ajv({ strict: false });
const SAMPLES = [null, true, false, 0, 1.5, -3, '', 'text', [], [1, 'a'], {}, { a: 1 }, { a: null }, { a: [{}] }];
const ANY = [{ type: 'null' }, { type: 'boolean' }, { type: 'number' }, { type: 'string' }, { type: 'array' }, { type: 'object' }];

const cases: { name: string; schema: Record<string, unknown>; portable: Record<string, unknown> }[] = [
  {
    name: 'a nullable string becomes anyOf of a string and null, its description kept',
    schema: { type: ['string', 'null'], description: 'A name.' },
    portable: { description: 'A name.', anyOf: [{ type: 'string' }, { type: 'null' }] },
  },
  {
    name: 'an empty schema becomes anyOf of the six JSON types',
    schema: { type: 'object', additionalProperties: {} },
    portable: { type: 'object', additionalProperties: { anyOf: ANY } },
  },
  {
    name: 'a schema of annotations only is typed the same way',
    schema: { type: 'array', items: { description: 'Anything.' } },
    portable: { type: 'array', items: { description: 'Anything.', anyOf: ANY } },
  },
  {
    name: 'type arrays under properties, definitions, anyOf and tuple items are all rewritten',
    schema: {
      type: 'object',
      properties: { a: { $ref: '#/definitions/A' }, b: { anyOf: [{ type: ['number', 'null'] }, { type: 'string', maxLength: 2 }] } },
      definitions: { A: { type: 'array', items: [{ type: ['integer', 'string'] }], additionalItems: false } },
    },
    portable: {
      type: 'object',
      properties: { a: { $ref: '#/definitions/A' }, b: { anyOf: [{ anyOf: [{ type: 'number' }, { type: 'null' }] }, { type: 'string', maxLength: 2 }] } },
      definitions: { A: { type: 'array', items: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }], additionalItems: false } },
    },
  },
  {
    name: 'a type array beside an anyOf keeps both conditions under allOf',
    schema: { type: ['string', 'number'], anyOf: [{ minimum: 2 }, { minLength: 1 }] },
    portable: { allOf: [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, { anyOf: [{ minimum: 2 }, { minLength: 1 }] }] },
  },
  {
    name: 'boolean schemas and the operand of not are left as they are',
    schema: { type: 'object', properties: { never: { not: {} } }, additionalProperties: false },
    portable: { type: 'object', properties: { never: { not: {} } }, additionalProperties: false },
  },
];

describe('portable tool schemas', () => {
  it.each(cases)('$name, and accepts exactly the values the original accepts', ({ schema, portable }) => {
    const original = structuredClone(schema);
    expect(makeSchemaPortable(schema)).toEqual(portable);
    expect(schema, 'the input is not changed').toEqual(original);
    const before = ajv.compile(schema);
    const after = ajv.compile(portable);
    for (const value of [...SAMPLES, ...SAMPLES.map((sample) => ({ a: sample, b: sample, never: sample })), SAMPLES]) {
      expect(after(value), JSON.stringify(value)).toBe(before(value));
    }
  });

  it('lists every tool once per process, frozen, with no type array and no schema that constrains nothing', () => {
    const tools = listMcpTools();
    expect(listMcpTools()).toBe(tools);
    expect(Object.isFrozen(tools[0]!.inputSchema)).toBe(true);
    const found: string[] = [];
    const maps = new Set(['properties', 'definitions', '$defs', 'patternProperties']);
    const visit = (node: unknown, path: string, key: string): void => {
      if (typeof node !== 'object' || node === null) return;
      if (Array.isArray((node as { type?: unknown }).type)) found.push(`${path}.type`);
      if (!Array.isArray(node) && Object.keys(node).length === 0 && key !== 'not' && !maps.has(key)) found.push(path);
      for (const [name, child] of Object.entries(node)) visit(child, `${path}.${name}`, maps.has(key) ? '' : name);
    };
    for (const tool of tools) visit({ inputSchema: tool.inputSchema, outputSchema: tool.outputSchema }, tool.name, '');
    expect(found).toEqual([]);
  });
});
