import {
  DuckDBArrayType, DuckDBDecimalType, DuckDBListType, DuckDBStructType, DuckDBTypeId, type DuckDBType, type DuckDBValue,
} from '@duckdb/node-api';
import {
  Binary, Bool, DateDay, Decimal, Field, Float32, Float64, Int16, Int32, Int64, Int8, List, makeData, Null, Struct,
  TimeMicrosecond, TimeNanosecond, Timestamp, TimeUnit, Uint16, Uint32, Uint64, Uint8, Utf8, type Data, type DataType,
} from 'apache-arrow';

/**
 * DuckDB values into Arrow columns, typed as DuckDB typed them: integers and floats of the same width, DECIMAL as
 * Decimal128 (exact), VARCHAR as Utf8, BLOB as Binary, dates, times and timestamps in DuckDB's own unit (a
 * TIMESTAMPTZ is UTC), LIST and ARRAY as List, STRUCT as Struct. What Arrow has no type for (MAP, UNION,
 * HUGEINT, UUID, INTERVAL, TIME WITH TIME ZONE, BIT, ENUM, …) becomes text, which the caller says in a warning.
 * Columns are built straight from the values into Arrow buffers: apache-arrow's builders take timestamps in
 * milliseconds and would lose DuckDB's microseconds.
 */

/** One column being filled. */
export interface ArrowColumn {
  type: DataType;
  /** Appends a value (null for a missing one) and returns about how many bytes it adds to an IPC body. */
  push: (value: DuckDBValue) => number;
  /** The values pushed since the last take, as Arrow data; the column then starts empty again. */
  take: () => Data;
}

/** How a column of a type Arrow cannot hold is written, for the warning that names it. */
export interface ColumnOptions {
  /** Turns a value Arrow has no type for into text (MAP, UNION and other values). */
  toText: (value: DuckDBValue) => string;
  /** Told the DuckDB type of every column written as text. */
  onText: (type: DuckDBType) => void;
}

const encoder = new TextEncoder();
const asNumber = (value: DuckDBValue) => value as number;
const asBigInt = (value: DuckDBValue) => value as bigint;

/** The Arrow column for a DuckDB type. */
export function createColumn(type: DuckDBType, options: ColumnOptions): ArrowColumn {
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN: return boolColumn();
    case DuckDBTypeId.TINYINT: return fixedColumn(new Int8(), Int8Array, 1, asNumber);
    case DuckDBTypeId.SMALLINT: return fixedColumn(new Int16(), Int16Array, 2, asNumber);
    case DuckDBTypeId.INTEGER: return fixedColumn(new Int32(), Int32Array, 4, asNumber);
    case DuckDBTypeId.BIGINT: return fixedColumn(new Int64(), BigInt64Array, 8, asBigInt);
    case DuckDBTypeId.UTINYINT: return fixedColumn(new Uint8(), Uint8Array, 1, asNumber);
    case DuckDBTypeId.USMALLINT: return fixedColumn(new Uint16(), Uint16Array, 2, asNumber);
    case DuckDBTypeId.UINTEGER: return fixedColumn(new Uint32(), Uint32Array, 4, asNumber);
    case DuckDBTypeId.UBIGINT: return fixedColumn(new Uint64(), BigUint64Array, 8, asBigInt);
    case DuckDBTypeId.FLOAT: return fixedColumn(new Float32(), Float32Array, 4, asNumber);
    case DuckDBTypeId.DOUBLE: return fixedColumn(new Float64(), Float64Array, 8, asNumber);
    case DuckDBTypeId.DATE: return fixedColumn(new DateDay(), Int32Array, 4, (value) => (value as { days: number }).days);
    case DuckDBTypeId.TIME: return fixedColumn(new TimeMicrosecond(), BigInt64Array, 8, (value) => (value as { micros: bigint }).micros);
    case DuckDBTypeId.TIME_NS: return fixedColumn(new TimeNanosecond(), BigInt64Array, 8, (value) => (value as { nanos: bigint }).nanos);
    case DuckDBTypeId.TIMESTAMP: return fixedColumn(new Timestamp(TimeUnit.MICROSECOND), BigInt64Array, 8, (value) => (value as { micros: bigint }).micros);
    case DuckDBTypeId.TIMESTAMP_TZ: return fixedColumn(new Timestamp(TimeUnit.MICROSECOND, 'UTC'), BigInt64Array, 8, (value) => (value as { micros: bigint }).micros);
    case DuckDBTypeId.TIMESTAMP_S: return fixedColumn(new Timestamp(TimeUnit.SECOND), BigInt64Array, 8, (value) => (value as { seconds: bigint }).seconds);
    case DuckDBTypeId.TIMESTAMP_MS: return fixedColumn(new Timestamp(TimeUnit.MILLISECOND), BigInt64Array, 8, (value) => (value as { millis: bigint }).millis);
    case DuckDBTypeId.TIMESTAMP_NS: return fixedColumn(new Timestamp(TimeUnit.NANOSECOND), BigInt64Array, 8, (value) => (value as { nanos: bigint }).nanos);
    case DuckDBTypeId.DECIMAL: return decimalColumn(type as DuckDBDecimalType);
    case DuckDBTypeId.VARCHAR: return bytesColumn(new Utf8(), (value) => encoder.encode(value as string));
    case DuckDBTypeId.BLOB:
    case DuckDBTypeId.GEOMETRY: return bytesColumn(new Binary(), (value) => (value as { bytes: Uint8Array }).bytes);
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY: return listColumn(createColumn((type as DuckDBListType | DuckDBArrayType).valueType, options));
    case DuckDBTypeId.STRUCT: return structColumn(type as DuckDBStructType, options);
    case DuckDBTypeId.SQLNULL: return nullColumn();
    default:
      options.onText(type);
      return bytesColumn(new Utf8(), (value) => encoder.encode(options.toText(value)));
  }
}

/**
 * A column of WKB: `toWkb` gives the bytes of a value (reprojected, or null when they cannot be), as
 * GeoArrow's `geoarrow.wkb` stores them.
 */
export function createWkbColumn(toWkb: (value: DuckDBValue) => Uint8Array | null): ArrowColumn {
  return bytesColumn(new Binary(), toWkb);
}

/** Validity bits, packed least significant bit first as Arrow wants them, and how many are null. */
function packValidity(valid: boolean[]): { nullBitmap: Uint8Array; nullCount: number } {
  const nullBitmap = new Uint8Array(Math.ceil(valid.length / 8));
  let nullCount = 0;
  valid.forEach((isValid, index) => {
    if (isValid) nullBitmap[index >> 3]! |= 1 << (index & 7);
    else nullCount++;
  });
  return { nullBitmap, nullCount };
}

type FixedArray = Int8ArrayConstructor | Int16ArrayConstructor | Int32ArrayConstructor | BigInt64ArrayConstructor | Uint8ArrayConstructor
  | Uint16ArrayConstructor | Uint32ArrayConstructor | BigUint64ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor;

function fixedColumn(type: DataType, Values: FixedArray, width: number, read: (value: DuckDBValue) => number | bigint): ArrowColumn {
  let values: (number | bigint)[] = [];
  let valid: boolean[] = [];
  const zero = Values === BigInt64Array || Values === BigUint64Array ? 0n : 0;
  return {
    type,
    push(value) {
      const isValid = value !== null && value !== undefined;
      valid.push(isValid);
      values.push(isValid ? read(value) : zero);
      return width;
    },
    take() {
      const data = makeData({ type, length: values.length, ...packValidity(valid), data: (Values.from as (items: unknown[]) => ArrayLike<number>)(values) } as never);
      values = [];
      valid = [];
      return data as Data;
    },
  };
}

function boolColumn(): ArrowColumn {
  let valid: boolean[] = [];
  let values: boolean[] = [];
  const type = new Bool();
  return {
    type,
    push(value) {
      valid.push(value !== null && value !== undefined);
      values.push(value === true);
      return 1;
    },
    take() {
      const data = makeData({ type, length: values.length, ...packValidity(valid), data: packValidity(values).nullBitmap });
      values = [];
      valid = [];
      return data;
    },
  };
}

/** DECIMAL as Decimal128: its unscaled integer as four little-endian 32-bit words, two's complement. */
function decimalColumn(decimal: DuckDBDecimalType): ArrowColumn {
  const type = new Decimal(decimal.scale, decimal.width, 128);
  let values: bigint[] = [];
  let valid: boolean[] = [];
  return {
    type,
    push(value) {
      const isValid = value !== null && value !== undefined;
      valid.push(isValid);
      values.push(isValid ? (value as { value: bigint }).value : 0n);
      return 16;
    },
    take() {
      const words = new Uint32Array(values.length * 4);
      const view = new BigUint64Array(words.buffer);
      values.forEach((unscaled, index) => {
        const bits = BigInt.asUintN(128, unscaled);
        view[index * 2] = bits & 0xffffffffffffffffn;
        view[index * 2 + 1] = bits >> 64n;
      });
      const data = makeData({ type, length: values.length, ...packValidity(valid), data: words });
      values = [];
      valid = [];
      return data;
    },
  };
}

/** Utf8 or Binary: each value's bytes one after the other, with 32-bit offsets. */
function bytesColumn(type: Utf8 | Binary, read: (value: DuckDBValue) => Uint8Array | null): ArrowColumn {
  let pieces: (Uint8Array | null)[] = [];
  return {
    type,
    push(value) {
      const bytes = value === null || value === undefined ? null : read(value);
      pieces.push(bytes);
      return (bytes?.byteLength ?? 0) + 4;
    },
    take() {
      const valueOffsets = new Int32Array(pieces.length + 1);
      let total = 0;
      pieces.forEach((bytes, index) => (valueOffsets[index + 1] = total += bytes?.byteLength ?? 0));
      const bytes = new Uint8Array(total);
      pieces.forEach((piece, index) => piece && bytes.set(piece, valueOffsets[index]!));
      const data = makeData({ type, length: pieces.length, ...packValidity(pieces.map((piece) => piece !== null)), valueOffsets, data: bytes } as never);
      pieces = [];
      return data as Data;
    },
  };
}

function listColumn(child: ArrowColumn): ArrowColumn {
  const type = new List(new Field('item', child.type, true));
  let offsets: number[] = [0];
  let valid: boolean[] = [];
  return {
    type,
    push(value) {
      const items = value === null || value === undefined ? [] : (value as { items: readonly DuckDBValue[] }).items;
      valid.push(value !== null && value !== undefined);
      offsets.push(offsets.at(-1)! + items.length);
      return items.reduce<number>((bytes, item) => bytes + child.push(item), 4);
    },
    take() {
      const data = makeData({ type, length: valid.length, ...packValidity(valid), valueOffsets: Int32Array.from(offsets), child: child.take() });
      offsets = [0];
      valid = [];
      return data;
    },
  };
}

function structColumn(struct: DuckDBStructType, options: ColumnOptions): ArrowColumn {
  const children = struct.entryTypes.map((entryType) => createColumn(entryType, options));
  const type = new Struct(struct.entryNames.map((name, index) => new Field(name, children[index]!.type, true)));
  let valid: boolean[] = [];
  return {
    type,
    push(value) {
      const entries = value === null || value === undefined ? undefined : (value as { entries: Readonly<Record<string, DuckDBValue>> }).entries;
      valid.push(entries !== undefined);
      return children.reduce((bytes, child, index) => {
        const name = struct.entryNames[index]!;
        return bytes + child.push(entries && Object.hasOwn(entries, name) ? entries[name]! : null);
      }, 0);
    },
    take() {
      const data = makeData({ type, length: valid.length, ...packValidity(valid), children: children.map((child) => child.take()) });
      valid = [];
      return data;
    },
  };
}

/** A column of SQL NULL (`SELECT NULL AS x`): Arrow's Null type, which holds no buffer. */
function nullColumn(): ArrowColumn {
  let length = 0;
  const type = new Null();
  return {
    type,
    push() {
      length++;
      return 0;
    },
    take() {
      const data = makeData({ type, length });
      length = 0;
      return data;
    },
  };
}
