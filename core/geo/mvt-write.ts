/**
 * Protobuf writing of one MVT 2.1 layer with `pbf`: features as they come, then the layer's keys and
 * values tables, deduplicated. Field numbers are those of the spec's `vector_tile.proto`.
 */
import type { PbfWriter } from 'pbf';
import { createNumberIndex, findOrAddNumber } from './mvt-number-index.ts';
import type { NumberIndex } from './mvt-number-index.ts';

/** MVT geometry types. */
export const GEOMETRY_POINT = 1;
export const GEOMETRY_LINESTRING = 2;
export const GEOMETRY_POLYGON = 3;

/** A property value as the encoder accepts it; anything else (null included) leaves the key out. */
export type TileValue = string | number | boolean | null;

/** The keys and values tables of one layer, filled while its features are written. */
export interface LayerTables {
  keys: Map<string, number>;
  /** Value kinds by index: the `Value` field number (1 string, 3 double, 4 int, 5 uint, 6 sint, 7 bool). */
  kinds: number[];
  values: (string | number | boolean)[];
  strings: Map<string, number>;
  numbers: NumberIndex;
  booleans: [number, number];
}

/** Scratch arrays reused for every feature, so writing a point allocates nothing. */
export type LayerScratch = { tables: LayerTables; tags: number[]; commands: number[]; type: number };

// Integers beyond these are still exact doubles; zigzag arithmetic in pbf loses them past 2^52.
const MAX_UINT = 2 ** 63;
const MIN_SINT = -(2 ** 52);
const MIN_INT = -(2 ** 63);

/** Empty tables plus scratch space for one layer. */
export function createLayerScratch(): LayerScratch {
  const tables: LayerTables = { keys: new Map(), kinds: [], values: [], strings: new Map(), numbers: createNumberIndex(), booleans: [-1, -1] };
  return { tables, tags: [], commands: [], type: 0 };
}

/** Writes `version`, `name` and `extent` of the layer being written. */
export function writeLayerHeader(pbf: PbfWriter, name: string, extent: number): void {
  pbf.writeVarintField(15, 2);
  pbf.writeStringField(1, name);
  pbf.writeVarintField(5, extent);
}

/** Writes one feature: its tags from `properties` and its geometry from the `commands` already in scratch. */
export function writeFeature(pbf: PbfWriter, scratch: LayerScratch, type: number, properties: Record<string, TileValue>): void {
  scratch.tags.length = 0;
  for (const key in properties) {
    if (!Object.hasOwn(properties, key)) continue;
    const value = indexOfValue(scratch.tables, properties[key]);
    if (value < 0) continue;
    let keyIndex = scratch.tables.keys.get(key);
    if (keyIndex === undefined) {
      keyIndex = scratch.tables.keys.size;
      scratch.tables.keys.set(key, keyIndex);
    }
    scratch.tags.push(keyIndex, value);
  }
  pbf.writeTag(2, 2);
  scratch.type = type;
  pbf.writeRawMessage(writeFeatureBody, scratch);
}

function writeFeatureBody(scratch: LayerScratch, pbf: PbfWriter): void {
  pbf.writePackedVarint(2, scratch.tags);
  pbf.writeVarintField(3, scratch.type);
  pbf.writePackedVarint(4, scratch.commands);
}

/** Writes the layer's keys and values tables; call once after the last feature. */
export function writeLayerTables(pbf: PbfWriter, tables: LayerTables): void {
  for (const key of tables.keys.keys()) pbf.writeStringField(3, key);
  const entry: ValueEntry = { kind: 0, value: 0 };
  for (let i = 0; i < tables.values.length; i++) {
    entry.kind = tables.kinds[i] as number;
    entry.value = tables.values[i] as string | number | boolean;
    pbf.writeTag(4, 2);
    pbf.writeRawMessage(writeValue, entry);
  }
}

type ValueEntry = { kind: number; value: string | number | boolean };

function writeValue(entry: ValueEntry, pbf: PbfWriter): void {
  const { kind, value } = entry;
  if (kind === 1) pbf.writeStringField(1, value as string);
  else if (kind === 3) pbf.writeDoubleField(3, value as number);
  else if (kind === 6) pbf.writeSVarintField(6, value as number);
  else if (kind === 7) pbf.writeBooleanField(7, value as boolean);
  else pbf.writeVarintField(kind, value as number);
}

/** The index of `value` in the values table, added when new; -1 for null and non-finite numbers. */
function indexOfValue(tables: LayerTables, value: unknown): number {
  if (typeof value === 'string') {
    let found = tables.strings.get(value);
    if (found === undefined) {
      found = addValue(tables, value, 1);
      tables.strings.set(value, found);
    }
    return found;
  }
  if (typeof value === 'boolean') {
    const slot = value ? 1 : 0;
    if (tables.booleans[slot] < 0) tables.booleans[slot] = addValue(tables, value, 7);
    return tables.booleans[slot];
  }
  // DuckDB hands BIGINT columns over as bigint; exact while within the safe range, rounded beyond.
  const number = typeof value === 'bigint' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) return -1;
  const found = findOrAddNumber(tables.numbers, number, tables.values.length);
  return found >= 0 ? found : addValue(tables, number, kindOfNumber(number));
}

function kindOfNumber(value: number): number {
  if (!Number.isInteger(value)) return 3;
  if (value >= 0) return value < MAX_UINT ? 5 : 3;
  if (value >= MIN_SINT) return 6;
  return value >= MIN_INT ? 4 : 3;
}

function addValue(tables: LayerTables, value: string | number | boolean, kind: number): number {
  tables.kinds.push(kind);
  tables.values.push(value);
  return tables.values.length - 1;
}
