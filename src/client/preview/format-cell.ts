import { DataType, type Field } from 'apache-arrow';
import { formatDecimal, truncateText } from './format-text.ts';

/** How one cell reads: its text, the full value when the text is cut, and a kind the stylesheet aligns by. */
export interface CellText {
  text: string;
  /** The whole value, when `text` is shortened. */
  title?: string;
  kind: 'number' | 'text' | 'null' | 'bbox' | 'geometry' | 'other';
}

/** Longest text shown in a cell before it is cut (the full value goes in the title). */
export const MAX_CELL_CHARS = 60;

const BBOX_FIELDS = ['xmin', 'ymin', 'xmax', 'ymax'];

/** The Arrow type of a column as its header shows it: short, with the full spelling in `title` when cut. */
export function describeColumnType(field: Field, isGeometry: boolean): { text: string; title?: string } {
  if (isGeometry) return { text: `${field.type} · WKB geometry` };
  const full = String(field.type);
  if (DataType.isDecimal(field.type)) return { text: `Decimal(${field.type.precision}, ${field.type.scale})` };
  if (DataType.isStruct(field.type)) return { text: `Struct<${field.type.children.map((child) => child.name).join(', ')}>`, title: full };
  return full.length > 32 ? { text: truncateText(full, 32), title: full } : { text: full };
}

/** Whether a column is a GeoParquet 1.1 bounding-box covering: a struct of xmin, ymin, xmax and ymax. */
export function isBBoxColumn(field: Field): boolean {
  return DataType.isStruct(field.type) && field.type.children.length === 4 && field.type.children.every((child) => BBOX_FIELDS.includes(child.name));
}

/** Formats one value of a column of `field`'s type for a table cell. */
export function formatCell(value: unknown, field: Field): CellText {
  if (value === null || value === undefined) return { text: 'null', kind: 'null' };
  const type = field.type;
  if (DataType.isDecimal(type)) return { text: formatDecimalValue(String(value), type.scale), kind: 'number' };
  if (DataType.isInt(type) || DataType.isFloat(type)) return { text: formatNumber(value), kind: 'number' };
  if (DataType.isBool(type)) return { text: String(value), kind: 'other' };
  if (DataType.isDate(type)) return { text: formatInstant(value).slice(0, 10), kind: 'other' };
  if (DataType.isTimestamp(type)) {
    // A timestamp with a time zone is an instant, shown in UTC; one without is a wall-clock time, shown as stored.
    const text = formatInstant(value).replace('T', ' ').replace(/(\.000)?Z$/, type.timezone ? 'Z' : '');
    return { text, kind: 'other' };
  }
  if (DataType.isBinary(type) || DataType.isLargeBinary(type) || DataType.isBinaryView(type) || DataType.isFixedSizeBinary(type)) {
    return { text: `${(value as Uint8Array).byteLength} bytes`, kind: 'other' };
  }
  if (isBBoxColumn(field)) return formatBBox(value as Record<string, unknown>);
  const text = typeof value === 'string' ? value : describeValue(value, 0);
  const kind = typeof value === 'string' ? 'text' : 'other';
  return text.length > MAX_CELL_CHARS ? { text: truncateText(text, MAX_CELL_CHARS), title: text.slice(0, 2000), kind } : { text, kind };
}

function formatNumber(value: unknown): string {
  if (typeof value !== 'number') return String(value);
  // Floats such as 0.1 + 0.2 print 17 digits; 12 significant ones are all a table needs.
  const text = String(value);
  return text.length > 14 && !Number.isInteger(value) ? String(Number(value.toPrecision(12))) : text;
}

// Arrow JS hands dates and timestamps over as milliseconds (a number or bigint) or as a Date, by version and unit.
function formatInstant(value: unknown): string {
  const date = value instanceof Date ? value : new Date(Number(value));
  return Number.isNaN(date.getTime()) ? String(value) : date.toISOString();
}

function formatBBox(row: Record<string, unknown>): CellText {
  const values = BBOX_FIELDS.map((name) => row[name]);
  if (values.some((value) => typeof value !== 'number')) return { text: describeValue(row, 0), kind: 'other' };
  const text = `[${(values as number[]).map((value) => formatDecimal(value, 3)).join(', ')}]`;
  return { text, title: `xmin ${values[0]}, ymin ${values[1]}, xmax ${values[2]}, ymax ${values[3]}`, kind: 'bbox' };
}

// Arrow JS hands a decimal over as its unscaled integer; the point goes `scale` digits from the right.
function formatDecimalValue(unscaled: string, scale: number): string {
  if (scale <= 0 || !/^-?\d+$/.test(unscaled)) return unscaled;
  const negative = unscaled.startsWith('-');
  const digits = (negative ? unscaled.slice(1) : unscaled).padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

// Lists, structs and maps, as a person would write them: [1, 2], {a: 1, b: x}. Deep or long values are cut
// by the caller; the depth guard only stops a pathological nesting from running away.
function describeValue(value: unknown, depth: number): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return depth === 0 ? value : JSON.stringify(value);
  if (typeof value !== 'object') return String(value);
  if (value instanceof Uint8Array) return `${value.byteLength} bytes`;
  if (depth > 4) return '…';
  const plain = (value as { toJSON?: () => unknown }).toJSON?.() ?? value;
  if (Array.isArray(plain)) return `[${plain.map((item) => describeValue(item, depth + 1)).join(', ')}]`;
  if (plain instanceof Map) return `{${[...plain].map(([key, item]) => `${describeValue(key, depth + 1)}: ${describeValue(item, depth + 1)}`).join(', ')}}`;
  return `{${Object.entries(plain as Record<string, unknown>).map(([key, item]) => `${key}: ${describeValue(item, depth + 1)}`).join(', ')}}`;
}
