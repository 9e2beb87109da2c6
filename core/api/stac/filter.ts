import { checkCql2, type Cql2PropertyType } from '../../cql2/check.ts';
import { compileCql2Test, listSpatialLiterals } from '../../cql2/evaluate.ts';
import { Cql2Error, type Cql2Expression, type Cql2Geometry } from '../../cql2/expression.ts';
import { describeCql2Error, readCql2Filter } from '../../cql2/read-filter.ts';
import { SPATIAL_OPS } from '../../cql2/read-json.ts';
import { StacApiFailure } from './api-errors.ts';
import type { StacSearchRequest } from './params.ts';
import { createBoxTest, type StacSearchIndex } from './search.ts';

/**
 * The STAC API Filter extension: a CQL2 filter on what every Item of the search index holds, evaluated in memory
 * (core/cql2/evaluate.ts) in the same pass as the other filters. Footprints are boxes, so the spatial functions are
 * S_INTERSECTS and S_DISJOINT: a BBOX literal is tested box against box here, any other geometry by GEOS on the
 * thread that tests `intersects` (server/stac.ts), whose verdicts come back as `hits`.
 */

/** The queryables of Items, with their types: what `/stac/api/queryables` lists. */
export const STAC_QUERYABLES: ReadonlyMap<string, Cql2PropertyType> = new Map<string, Cql2PropertyType>([
  ['id', 'string'], ['collection', 'string'], ['datetime', 'timestamp'], ['title', 'string'], ['geometry', 'geometry'],
  ['description', 'string'], ['created', 'timestamp'], ['updated', 'timestamp'], ['version', 'string'], ['table:row_count', 'integer'], ['proj:code', 'string'],
]);

/** What each queryable is, for the queryables documents of Items and of Collections. */
const QUERYABLE_TITLES: Record<string, string> = {
  id: 'The id', collection: 'Collection id', datetime: 'Item datetime', title: 'The title (a file\'s name, a dataset\'s name)',
  description: 'The description (of a file, of a dataset)', license: 'The licence: an SPDX id, or other', geometry: 'The footprint (of an Item, or of any Item of a Collection)',
  created: 'When the version was first published', updated: 'When the version was last updated', version: 'The version of the file the Item describes',
  'table:row_count': 'Number of rows (features) of the data', 'proj:code': 'The data\'s coordinate reference system, as AUTHORITY:CODE',
};

/** A filter read from a search: its tree, and its spatial literals in the order the filter tests them. */
export interface StacFilter {
  expression: Cql2Expression;
  /** A BBOX is tested box against box here; GEOS must test any other geometry (`hits` below). */
  literals: (Cql2Geometry | { bbox: number[] })[];
}

/**
 * Reads the filter of a search against its queryables (the Items', or the Collections'), or undefined without one;
 * a 400 that says what and where when it is not valid.
 */
export function readStacFilter(request: Pick<StacSearchRequest, 'filter' | 'filter-lang'>, queryables: ReadonlyMap<string, Cql2PropertyType> = STAC_QUERYABLES): StacFilter | undefined {
  if (request.filter === undefined) return undefined;
  const lang = request['filter-lang'] ?? 'cql2-text';
  try {
    const expression = readCql2Filter(request.filter, lang);
    checkCql2(expression, queryables);
    refuseFootprintOps(expression);
    return { expression, literals: listSpatialLiterals(expression) };
  } catch (error) {
    if (!(error instanceof Cql2Error)) throw error;
    throw new StacApiFailure(400, `"filter" ${describeCql2Error(error, lang)}.`);
  }
}

/**
 * Whether each spatial literal of a filter meets the footprint of the entry at a position: a BBOX box against box,
 * another geometry by GEOS's verdicts for it (`hits`, per literal, undefined for a BBOX).
 */
export function createLiteralTests(search: StacSearchIndex, filter: StacFilter, hits: (Uint8Array | undefined)[]): ((position: number) => boolean)[] {
  return filter.literals.map((literal, index) => {
    if ('bbox' in literal) return createBoxTest(search, literal.bbox);
    const verdicts = hits[index];
    if (!verdicts) throw new Error('a geometry literal needs the verdicts GEOS gave for it');
    return (position: number) => verdicts[position] === 1;
  });
}

/** A test of search positions for a filter, given GEOS's verdicts for each of its geometry literals. */
export function createStacFilterTest(search: StacSearchIndex, filter: StacFilter, hits: (Uint8Array | undefined)[]): (position: number) => boolean {
  const meets = createLiteralTests(search, filter, hits);
  const { entries, times, properties } = search;
  const numberAt = (column: Float64Array, position: number) => (Number.isNaN(column[position]!) ? null : column[position]!);
  return compileCql2Test<number>(filter.expression, {
    properties: STAC_QUERYABLES,
    read: (name, position) => {
      const entry = entries[position]!;
      switch (name) {
        case 'id': return entry.id;
        case 'collection': return entry.collectionId;
        case 'title': return entry.file.name;
        case 'description': return entry.file.description ?? null;
        case 'created': return numberAt(properties.created, position);
        case 'updated': return numberAt(properties.updated, position);
        case 'version': return properties.version[position]!;
        case 'table:row_count': return numberAt(properties.rowCount, position);
        case 'proj:code': return properties.crs[position]!;
        case 'datetime': return numberAt(times, position);
        // The checks let a geometry property only into spatial functions (read through `meets`) and IS NULL.
        case 'geometry': return entry.bbox ? 'footprint' : null;
        default: throw new Error(`no value for the queryable ${name}`);
      }
    },
    meets: (literal, position) => meets[literal]!(position),
  });
}

/** A queryables document (JSON Schema): of item search or a Collection's items, or of Collection search. */
export function renderStacQueryables(id: string, title: string, queryables: ReadonlyMap<string, Cql2PropertyType> = STAC_QUERYABLES): object {
  return propertiesSchema(id, title, queryables, true);
}

/**
 * A sortables document (STAC API Sort 1.1, after OGC API - Features Part 5): the fields `sortby` takes, named as
 * the queryables are, with their types. It lists every field that sorts and no other, so additionalProperties is false.
 */
export function renderStacSortables(id: string, title: string, fields: readonly string[], queryables: ReadonlyMap<string, Cql2PropertyType> = STAC_QUERYABLES): object {
  return propertiesSchema(id, title, new Map(fields.map((field) => [field, queryables.get(field)!])), false);
}

function propertiesSchema(id: string, title: string, types: ReadonlyMap<string, Cql2PropertyType>, additionalProperties: boolean): object {
  const properties: Record<string, object> = Object.create(null);
  for (const [name, type] of types) {
    properties[name] = type === 'geometry' ? { title: QUERYABLE_TITLES[name], $ref: 'https://geojson.org/schema/Geometry.json' }
      : type === 'timestamp' ? { title: QUERYABLE_TITLES[name], type: 'string', format: 'date-time' }
      : { title: QUERYABLE_TITLES[name], type };
  }
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: id, type: 'object', title, properties, additionalProperties };
}

/** Footprints are boxes: relations other than meeting or not would answer for the box, not the data. */
function refuseFootprintOps(node: Cql2Expression, pointer = ''): void {
  if (typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    node.forEach((item, index) => refuseFootprintOps(item, `${pointer}/${index}`));
    return;
  }
  if (!('op' in node)) return;
  if (SPATIAL_OPS.has(node.op) && node.op !== 's_intersects' && node.op !== 's_disjoint') {
    throw new Cql2Error(`${node.op.toUpperCase()} is not served: an Item's footprint is its bounding box, so the spatial functions are S_INTERSECTS and S_DISJOINT`, { pointer });
  }
  node.args.forEach((arg, index) => refuseFootprintOps(arg, `${pointer}/args/${index}`));
}
