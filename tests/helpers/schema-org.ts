import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ROOT } from './catalog.ts';

/** schema.org release 30.0, shipped for offline tests (tests/fixtures/schema-org/README.md). */
const FIXTURES = join(ROOT, 'tests', 'fixtures', 'schema-org');

function readGzippedJson(name: string): unknown {
  return JSON.parse(gunzipSync(readFileSync(join(FIXTURES, name))).toString('utf8'));
}

/** The JSON-LD context schema.org serves at https://schema.org/, for a JSON-LD processor's document loader. */
export const SCHEMA_ORG_CONTEXT = readGzippedJson('schemaorgcontext.jsonld.gz') as Record<string, unknown>;

type Ref = { '@id': string } | { '@id': string }[] | undefined;
interface VocabularyEntry {
  '@id': string;
  '@type': string | string[];
  'rdfs:subClassOf'?: Ref;
  'schema:domainIncludes'?: Ref;
  'schema:rangeIncludes'?: Ref;
}

const names = (ref: Ref) => (ref === undefined ? [] : Array.isArray(ref) ? ref : [ref]).map((entry) => entry['@id'].replace(/^schema:/, ''));

/** schema.org's types, each with itself and every type it descends from, and its properties with the types they apply to and take. */
export interface SchemaOrgVocabulary {
  lineage: Map<string, Set<string>>;
  properties: Map<string, { domains: string[]; ranges: string[] }>;
}

/** Reads the shipped vocabulary. */
export function readSchemaOrgVocabulary(): SchemaOrgVocabulary {
  const graph = (readGzippedJson('schemaorg-current-https.jsonld.gz') as { '@graph': VocabularyEntry[] })['@graph'];
  const types = new Map<string, string[]>();
  const properties = new Map<string, { domains: string[]; ranges: string[] }>();
  for (const entry of graph) {
    if (!entry['@id'].startsWith('schema:')) continue;
    const kinds = [entry['@type']].flat();
    const name = entry['@id'].slice('schema:'.length);
    if (kinds.includes('rdfs:Class')) types.set(name, names(entry['rdfs:subClassOf']));
    if (kinds.includes('rdf:Property')) properties.set(name, { domains: names(entry['schema:domainIncludes']), ranges: names(entry['schema:rangeIncludes']) });
  }
  const lineage = new Map<string, Set<string>>();
  for (const type of types.keys()) {
    const found = new Set<string>();
    const queue = [type];
    while (queue.length > 0) {
      const next = queue.pop()!;
      if (found.has(next)) continue;
      found.add(next);
      queue.push(...(types.get(next) ?? []));
    }
    lineage.set(type, found);
  }
  return { lineage, properties };
}

const LITERAL_TYPES = ['Text', 'Number', 'Date', 'DateTime', 'Time'];

/**
 * What a compact schema.org JSON-LD node says that the vocabulary does not allow, as `path: problem` lines: a type
 * schema.org does not have, a property it does not have or that does not apply to the node's type (or a parent
 * type), and a value whose type the property does not take. A plain string or number needs a data type in the
 * property's range (Text and URL take strings), a boolean needs Boolean.
 */
export function findVocabularyProblems(node: unknown, vocabulary: SchemaOrgVocabulary, path = '$'): string[] {
  if (Array.isArray(node)) return node.flatMap((item, position) => findVocabularyProblems(item, vocabulary, `${path}[${position}]`));
  if (typeof node !== 'object' || node === null) return [];
  const { properties } = vocabulary;
  const ancestors = (type: string) => vocabulary.lineage.get(type) ?? new Set<string>();
  const record = node as Record<string, unknown>;
  const nodeTypes = [record['@type']].flat().filter((type): type is string => typeof type === 'string');
  const problems: string[] = [];
  for (const type of nodeTypes) if (!vocabulary.lineage.has(type)) problems.push(`${path}: schema.org has no type ${type}`);
  const lineage = new Set(nodeTypes.flatMap((type) => [...ancestors(type)]));
  for (const [key, value] of Object.entries(record)) {
    if (key.startsWith('@')) continue;
    const property = properties.get(key);
    if (!property) {
      problems.push(`${path}.${key}: schema.org has no property ${key}`);
      continue;
    }
    if (lineage.size > 0 && !property.domains.some((domain) => lineage.has(domain))) problems.push(`${path}.${key}: does not apply to ${nodeTypes.join(', ')}`);
    const ranges = new Set(property.ranges);
    const rangeLineage = new Set(property.ranges.flatMap((range) => [...ancestors(range)]));
    for (const item of [value].flat()) {
      if (typeof item === 'object' && item !== null) {
        const itemTypes = [(item as Record<string, unknown>)['@type']].flat().filter((type): type is string => typeof type === 'string');
        if (!itemTypes.some((type) => [...ancestors(type)].some((ancestor) => ranges.has(ancestor)))) problems.push(`${path}.${key}: takes ${property.ranges.join(' or ')}, not ${itemTypes.join(', ') || 'an untyped node'}`);
      } else if (typeof item === 'boolean' ? !ranges.has('Boolean') : !LITERAL_TYPES.some((type) => rangeLineage.has(type))) {
        problems.push(`${path}.${key}: takes ${property.ranges.join(' or ')}, not the literal ${JSON.stringify(item)}`);
      }
    }
    problems.push(...findVocabularyProblems(value, vocabulary, `${path}.${key}`));
  }
  return problems;
}
