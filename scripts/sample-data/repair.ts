/**
 * The geometry pass every polygon and line table goes through before it is
 * written: cut at the antimeridian (d3-geo), rings closed and freed of
 * repeated points, collapsed rings and polygons dropped, then GEOS validity,
 * with GEOS MakeValid for what is still invalid, except rows kept invalid on
 * purpose as visible upstream examples. Each step is summed up in the
 * table's notes, which go into the data README.
 */
import type { Geometry, Position } from '../../core/geo/wkb.ts';
import { crossesAntimeridian, splitLineAtAntimeridian, splitPolygonAtAntimeridian } from './antimeridian.ts';
import { findInvalidityReason, makeValidPolygonal } from './geos.ts';
import { cleanLine, cleanPolygon, cleanPolygonal, createCleanCounts } from './rings.ts';
import type { CleanCounts } from './rings.ts';
import { createTable } from './table.ts';
import type { FeatureRow, FeatureTable } from './table.ts';

/** How rows are named in the notes, and which stay invalid on purpose. */
export type RepairOptions = {
  /** A short name for a row: a country name, "part 12", a FIPS code and name. */
  label: (row: FeatureRow) => string;
  /** Labels of rows kept exactly as upstream as examples of invalid geometry; the build fails if one turns out valid. */
  keepInvalid?: readonly string[];
};

type RepairLog = {
  split: string[];
  repeated: string[];
  closed: string[];
  droppedRings: number;
  droppedPolygons: number;
  collapsed: string[];
  makeValidSlivers: number;
  reversed: string[];
  droppedRows: string[];
  repaired: Map<string, string[]>;
  kept: string[];
};

function repairPolygons(polygons: Position[][][], wasMulti: boolean, counts: CleanCounts): { geometry: Geometry | null; split: boolean } {
  const split = polygons.some((rings) => rings.some(crossesAntimeridian));
  const clean = polygons
    .flatMap((rings) => splitPolygonAtAntimeridian(rings))
    .map((rings) => cleanPolygon(rings, counts))
    .filter((rings) => rings !== null);
  if (clean.length === 0) return { geometry: null, split };
  const geometry: Geometry =
    clean.length === 1 && !wasMulti ? { type: 'Polygon', coordinates: clean[0] ?? [] } : { type: 'MultiPolygon', coordinates: clean };
  return { geometry, split };
}

function repairLines(lines: Position[][], wasMulti: boolean, counts: CleanCounts): { geometry: Geometry | null; split: boolean } {
  const split = lines.some(crossesAntimeridian);
  const clean = lines
    .flatMap((line) => splitLineAtAntimeridian(line))
    .map((line) => cleanLine(line, counts))
    .filter((line) => line !== null);
  if (clean.length === 0) return { geometry: null, split };
  const geometry: Geometry =
    clean.length === 1 && !wasMulti ? { type: 'LineString', coordinates: clean[0] ?? [] } : { type: 'MultiLineString', coordinates: clean };
  return { geometry, split };
}

function cutAndClean(geometry: Geometry, counts: CleanCounts): { geometry: Geometry | null; split: boolean } {
  switch (geometry.type) {
    case 'Polygon':
      return repairPolygons([geometry.coordinates], false, counts);
    case 'MultiPolygon':
      return repairPolygons(geometry.coordinates, true, counts);
    case 'LineString':
      return repairLines([geometry.coordinates], false, counts);
    case 'MultiLineString':
      return repairLines(geometry.coordinates, true, counts);
    default:
      throw new Error(`repairTable takes polygons and lines, not ${geometry.type}`);
  }
}

/** "Self-intersection[33.96 9.46]" → "Self-intersection"; an invalidity on ±180° in a row just cut is the cut's. */
function classifyReason(reason: string, split: boolean): string {
  const x = Number(/\[(\S+) /.exec(reason)?.[1]);
  if (split && Math.abs(x) === 180) return 'slivers along ±180° left by the antimeridian cut';
  return reason.replace(/\[.*$/, '').trim();
}

function keepRow(row: FeatureRow, label: string, log: RepairLog): FeatureRow {
  if (cutAndClean(row.geometry, createCleanCounts()).split) throw new Error(`${label} crosses the antimeridian and cannot be kept as is`);
  const reason = findInvalidityReason(row.geometry);
  if (reason === null) throw new Error(`${label} is kept as an invalid example but GEOS finds it valid`);
  log.kept.push(`${label} (${reason.replace('[', ' at [')})`);
  return row;
}

function repairRow(row: FeatureRow, label: string, log: RepairLog): FeatureRow | null {
  const counts = createCleanCounts();
  const { geometry, split } = cutAndClean(row.geometry, counts);
  if (split) log.split.push(label);
  if (counts.repeated > 0) log.repeated.push(label);
  if (counts.closed > 0) log.closed.push(label);
  log.droppedRings += counts.droppedRings;
  log.droppedPolygons += counts.droppedPolygons;
  if (counts.droppedPolygons > 0) log.collapsed.push(label);
  if (counts.reversed > 0) log.reversed.push(label);
  if (geometry === null) return void log.droppedRows.push(label), null;
  const reason = findInvalidityReason(geometry);
  if (reason === null) return { values: row.values, geometry };
  if (geometry.type === 'LineString' || geometry.type === 'MultiLineString') throw new Error(`${label}: invalid line (${reason})`);
  const made = makeValidPolygonal(geometry);
  const slivers = createCleanCounts();
  const valid = made === null ? null : cleanPolygonal(made, slivers);
  log.makeValidSlivers += slivers.droppedRings;
  if (valid === null) return void log.droppedRows.push(label), null;
  const after = findInvalidityReason(valid);
  if (after !== null) throw new Error(`${label} is still invalid after GEOS MakeValid: ${after}`);
  const kind = classifyReason(reason, split);
  log.repaired.set(kind, [...(log.repaired.get(kind) ?? []), label]);
  return { values: row.values, geometry: valid };
}

function listLabels(labels: string[]): string {
  return `${labels.length} (${labels.join(', ')})`;
}

function formatNotes(log: RepairLog): string[] {
  const notes: string[] = [];
  if (log.split.length > 0) notes.push(`cut at the antimeridian with d3-geo (RFC 7946 §3.1.9): ${listLabels(log.split)}`);
  if (log.closed.length > 0) notes.push(`closed rings left open upstream: ${listLabels(log.closed)}`);
  if (log.repeated.length > 0) {
    const rows = log.repeated.length <= 5 ? listLabels(log.repeated) : `${log.repeated.length} rows`;
    notes.push(`repeated consecutive points removed: ${rows}`);
  }
  if (log.droppedRings > 0) notes.push(`dropped ${log.droppedRings} ring(s) left with fewer than 4 points or no area`);
  if (log.droppedPolygons > 0) notes.push(`dropped ${log.droppedPolygons} polygon(s) whose exterior ring collapsed, in ${listLabels(log.collapsed)}`);
  if (log.reversed.length > 0) notes.push(`rings turned to d3's winding (exterior clockwise, holes counter-clockwise): ${listLabels(log.reversed)}`);
  if (log.droppedRows.length > 0) notes.push(`dropped rows with no geometry left: ${listLabels(log.droppedRows)}`);
  for (const [kind, labels] of log.repaired) notes.push(`GEOS MakeValid (structure method) repaired ${kind}: ${listLabels(labels)}`);
  if (log.makeValidSlivers > 0) notes.push(`dropped ${log.makeValidSlivers} sliver ring(s) with no area that MakeValid left`);
  if (log.kept.length > 0) notes.push(`kept invalid as upstream examples: ${log.kept.join('; ')}`);
  notes.push(log.kept.length > 0 ? 'every other row valid by GEOS 3.13' : 'every row valid by GEOS 3.13');
  return notes;
}

/** Names a row by one of its columns, e.g. `labelByColumn(table, 'part', 'part ')` → "part 12". */
export function labelByColumn(table: FeatureTable, column: string, prefix = ''): (row: FeatureRow) => string {
  const index = table.columns.findIndex((spec) => spec.name === column);
  if (index < 0) throw new Error(`no column ${column}`);
  return (row) => `${prefix}${row.values[index]}`;
}

/** The table with every row through the geometry pass, rows that collapse dropped, and notes on what changed. */
export function repairTable(table: FeatureTable, options: RepairOptions): FeatureTable {
  const keep = new Set(options.keepInvalid ?? []);
  const log: RepairLog = {
    split: [],
    repeated: [],
    closed: [],
    droppedRings: 0,
    droppedPolygons: 0,
    collapsed: [],
    makeValidSlivers: 0,
    reversed: [],
    droppedRows: [],
    repaired: new Map(),
    kept: [],
  };
  const rows = table.rows.flatMap((row) => {
    const label = options.label(row);
    return (keep.delete(label) ? keepRow(row, label, log) : repairRow(row, label, log)) ?? [];
  });
  if (keep.size > 0) throw new Error(`kept invalid examples not found: ${[...keep].join(', ')}`);
  return createTable(table.columns, rows, [...table.notes, ...formatNotes(log)]);
}
