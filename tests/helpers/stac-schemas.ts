import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { ROOT } from './catalog.ts';

/** The official schemas, beside the repository (see its README); tests that need them skip where it is absent. */
export const SPEC_DIR = join(ROOT, '..', 'shared', 'spec-schemas');
/** Whether the spec folder is there. */
export const HAS_SPEC = existsSync(join(SPEC_DIR, 'stac', 'v1.1.0')) && existsSync(join(SPEC_DIR, 'stac-api', 'v1.0.0'));

/** Where the core schema of each STAC document type lives, by `type`. */
export const STAC_CORE_SCHEMAS: Record<string, string> = {
  Catalog: 'https://schemas.stacspec.org/v1.1.0/catalog-spec/json-schema/catalog.json',
  Collection: 'https://schemas.stacspec.org/v1.1.0/collection-spec/json-schema/collection.json',
  Feature: 'https://schemas.stacspec.org/v1.1.0/item-spec/json-schema/item.json',
};

/**
 * The projection extension's schema refers to the PROJJSON schema for `proj:projjson`, which the spec folder does
 * not hold; geoshelf never writes `proj:projjson`, so a schema accepting any object stands in for it.
 */
const PROJJSON_ID = 'https://proj.org/schemas/v0.7/projjson.schema.json';

/**
 * The scientific extension (`sci:doi`, `sci:citation`), which the spec folder does not hold: its published v1.0.0
 * schema, copied under tests/fixtures at the path it is published at.
 */
export const SCIENTIFIC_SCHEMA = join(ROOT, 'tests', 'fixtures', 'stac-extensions', 'scientific', 'v1.0.0', 'schema.json');
/** The URL the scientific extension's schema is published at. */
export const SCIENTIFIC_ID = 'https://stac-extensions.github.io/scientific/v1.0.0/schema.json';

/** Where each folder of the spec copy is published, as stac-node-validator's `--schemaMap` pairs them. */
const SCHEMA_HOMES: [folder: string, url: string][] = [
  ['stac/v1.1.0', 'https://schemas.stacspec.org/v1.1.0/'],
  ['geojson', 'https://geojson.org/schema/'],
  ['stac-extensions', 'https://stac-extensions.github.io/'],
];

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

async function jsonFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((name) => name.endsWith('.json')).map((name) => join(dir, name));
}

/**
 * An ajv (draft-07, as STAC's schemas are) with every STAC core, GeoJSON and extension schema of the spec folder,
 * each registered at the URL it is published at: the copy's common.json says `$id` ".../commonjson" (an upstream
 * typo), and the other schemas refer to it as common.json, which is where a validator fetching by URL finds it.
 */
export async function createStacAjv(): Promise<Ajv> {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('iri', (value: string) => URL.canParse(value));
  ajv.addFormat('iri-reference', (value: string) => URL.canParse(value, 'https://example.org/'));
  for (const [folder, url] of SCHEMA_HOMES) {
    for (const path of await jsonFiles(join(SPEC_DIR, folder))) {
      ajv.addSchema({ ...JSON.parse(await readFile(path, 'utf8')), $id: `${url}${path.slice(join(SPEC_DIR, folder).length + 1)}` });
    }
  }
  ajv.addSchema({ $id: PROJJSON_ID, type: 'object' });
  ajv.addSchema(JSON.parse(await readFile(SCIENTIFIC_SCHEMA, 'utf8')));
  return ajv;
}

/**
 * Errors of a STAC document against its core schema and the schema of every extension it names (empty when
 * valid), as `schema: path message` lines.
 */
export function stacSchemaErrors(ajv: Ajv, document: { type: string; stac_extensions?: string[] }): string[] {
  const ids = [STAC_CORE_SCHEMAS[document.type]!, ...(document.stac_extensions ?? [])];
  return ids.flatMap((id) => {
    const validate = ajv.getSchema(id);
    if (!validate) return [`${id}: schema not found`];
    return validate(document) ? [] : (validate.errors ?? []).map((error) => `${id}: ${error.instancePath} ${error.message}`);
  });
}

/**
 * The STAC API 1.0.0 OpenAPI fragments' response schemas as JSON Schema validators: the landing page (core),
 * conformance classes, the Collections list and a Collection's items (features), and the ItemCollection. The copy holds the fragments
 * but not `core/commons.yaml` they refer to, so its references are bound to what they name: `catalog`, `collection`
 * and `item` to the STAC 1.1 JSON Schemas, `link`/`links` to the STAC link shape (rel and href), and
 * `conformanceClasses` and `featureCollectionGeoJSON` to their definitions in STAC API 1.0.0's commons.yaml.
 */
export async function createStacApiValidators(ajv: Ajv): Promise<Record<'landingPage' | 'conformance' | 'collections' | 'itemCollection' | 'features', ValidateFunction>> {
  const api = join(SPEC_DIR, 'stac-api', 'v1.0.0');
  const fragments = {
    core: parseYaml(await readFile(join(api, 'core', 'openapi.yaml'), 'utf8')),
    features: parseYaml(await readFile(join(api, 'ogcapi-features', 'openapi-features.yaml'), 'utf8')),
    itemCollection: parseYaml(await readFile(join(api, 'fragments', 'itemcollection', 'openapi.yaml'), 'utf8')),
  };
  const link = { type: 'object', required: ['href', 'rel'], properties: { href: { type: 'string' }, rel: { type: 'string' }, type: { type: 'string' }, title: { type: 'string' } } };
  const commons: Record<string, object> = {
    catalog: { $ref: STAC_CORE_SCHEMAS.Catalog },
    collection: { $ref: STAC_CORE_SCHEMAS.Collection },
    item: { $ref: STAC_CORE_SCHEMAS.Feature },
    link,
    links: { type: 'array', items: link },
    conformanceClasses: { type: 'object', required: ['conformsTo'], properties: { conformsTo: { type: 'array', items: { type: 'string' } } } },
    featureCollectionGeoJSON: { type: 'object', required: ['type', 'features'], properties: { type: { type: 'string', enum: ['FeatureCollection'] }, features: { type: 'array' } } },
  };
  /** Rewrites `$ref`s: commons.yaml by name, a fragment's own components in place. */
  const resolve = (value: unknown, own: Record<string, unknown>): unknown => {
    if (Array.isArray(value)) return value.map((inner) => resolve(inner, own));
    if (value === null || typeof value !== 'object') return value;
    const ref = (value as { $ref?: string }).$ref;
    if (ref?.includes('commons.yaml#/components/schemas/')) return commons[ref.split('/').at(-1)!] ?? {};
    if (ref?.startsWith('#/components/schemas/')) return resolve(own[ref.split('/').at(-1)!], own);
    if (ref?.startsWith('../core/openapi.yaml#/components/schemas/')) return resolve(fragments.core.components.schemas[ref.split('/').at(-1)!], fragments.core.components.schemas);
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, resolve(inner, own)]));
  };
  const compile = (schema: unknown, own: Record<string, unknown>) => ajv.compile(resolve(schema, own) as object);
  const responses = fragments.features.components.responses;
  const schemaOf = (response: { content: Record<string, { schema: unknown }> }) => Object.values(response.content)[0]!.schema;
  return {
    landingPage: compile(fragments.core.components.schemas.landingPage, fragments.core.components.schemas),
    conformance: compile(schemaOf(responses.ConformanceDeclaration), fragments.features.components.schemas),
    collections: compile(schemaOf(responses.Collections), fragments.features.components.schemas),
    itemCollection: compile(fragments.itemCollection.components.schemas.itemCollection, fragments.itemCollection.components.schemas),
    features: compile(schemaOf(responses.Features), fragments.features.components.schemas),
  };
}
