/**
 * GeoJSON as newline-delimited features, for `geoshelf convert`: DuckDB's JSON reader parses a FeatureCollection as
 * one value, so the whole file would sit in memory at once; a file of one feature per line it reads a buffer at a
 * time, in parallel. `writeFeatureLines` turns a FeatureCollection, a GeoJSON Text Sequence (RFC 8142) or
 * newline-delimited GeoJSON into such a file, reading 1 MB at a time, so memory does not grow with the file.
 *
 * It is a byte scanner, not a JSON parser: it tracks depth, strings and escapes, and finds the root object's
 * "features" key wherever it sits among the other keys (a "features" key deeper down is not it). Each chunk of the
 * features array is then written as it is, after editing a few bytes in place: a comma (or RS) between features
 * becomes a line break, and a line break inside a feature, which JSON allows only outside strings, becomes a space.
 * DuckDB parses each line afterwards and says when one is not JSON. Measured on 1M points (155 MB, a loaded 2-core
 * machine): 1.4 to 3.4 s and 140 MB peak RSS for the whole process. stream-json 1.9 (parser, pick "features",
 * streamArray, JSON.stringify each) took 68 s and 350 MB: it builds every feature as objects only to write it back.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { ConvertError } from './convert-error.ts';

/** How the features sit in the input: in a FeatureCollection's "features" array, or one JSON text after another. */
export type FeatureLayout = 'collection' | 'sequence';

/** The input is read, and the lines written, this many bytes at a time. */
const CHUNK_BYTES = 1 << 20;

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
/** RFC 8142's record separator, before each text of a GeoJSON Text Sequence. */
const RECORD_SEPARATOR = 0x1e;
/** Longer root keys are not "features" (even escaped), so no more of them is kept. */
const MAX_KEY_BYTES = 64;

/** Where the scan stands, carried from one chunk of the input to the next. */
interface Scan {
  layout: FeatureLayout;
  /** Open objects and arrays around the current byte. */
  depth: number;
  inString: boolean;
  /** A backslash inside a string was the last byte read (the end of the previous chunk, say). */
  escaped: boolean;
  /**
   * For a collection: before the root object, among its keys, after `"features":`, inside the features array, past
   * it. A sequence is always `features`.
   */
  stage: 'start' | 'keys' | 'features-value' | 'features' | 'done';
  /** Among the root's keys: whether the next string is a key, the bytes of the key being read, the last key. */
  expectKey: boolean;
  key: number[] | null;
  lastKey: string;
  inFeature: boolean;
  /** The depth features sit at: inside the root object and its array (2), or at the top of a sequence (0). */
  featureDepth: number;
  /** Whether a comma (in a collection) or a line break or RS (in a sequence) came since the last feature ended, or none has. */
  separated: boolean;
  features: number;
  /** Where the current chunk starts in the input, where the current line started, and the longest line so far. */
  offset: number;
  lineStart: number;
  longestLine: number;
}

/** What `writeFeatureLines` wrote: how many features, and the longest line in bytes (the largest feature, about). */
export interface FeatureLines {
  features: number;
  longestLine: number;
}

/**
 * Writes the features of the GeoJSON file `input` to `target`, one JSON object a line, and says how many and how
 * long the longest line is (DuckDB's JSON reader must be told). `label` names the input in errors.
 * @throws ConvertError when it is not GeoJSON, has no "features" array, or holds something other than objects there.
 * @example await writeFeatureLines('parks.geojson', '/tmp/scratch/features.ndjson', 'collection', 'parks.geojson') // { features: 1204, longestLine: 80312 }
 */
export async function writeFeatureLines(input: string, target: string, layout: FeatureLayout, label: string): Promise<FeatureLines> {
  const scan: Scan = {
    layout, depth: 0, inString: false, escaped: false, stage: layout === 'collection' ? 'start' : 'features', expectKey: false, key: null,
    lastKey: '', inFeature: false, featureDepth: layout === 'collection' ? 2 : 0, separated: true, features: 0, offset: 0, lineStart: 0, longestLine: 0,
  };
  const output = await open(target, 'w');
  try {
    let first = true;
    for await (const chunk of createReadStream(input, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
      const start = first && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
      first = false;
      const lines = scanChunk(scan, chunk, start, label);
      if (lines.length > 0) await output.write(lines);
      if (scan.stage === 'done') break;
      scan.offset += chunk.length;
    }
    if (scan.stage !== 'done') endLine(scan, scan.offset);
    await output.write('\n');
  } finally {
    await output.close();
  }
  assertComplete(scan, label);
  return { features: scan.features, longestLine: scan.longestLine };
}

/**
 * The first line of a file `writeFeatureLines` wrote that is not JSON: its number (the feature's, from 1) and
 * JSON.parse's reason; null when every line parses. For an error message only: it reads the whole file again.
 */
export async function findMalformedLine(path: string): Promise<{ line: number; reason: string } | null> {
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    try {
      JSON.parse(text);
    } catch (error) {
      // JSON.parse's "(line 1 column 87)" would name a line of the scratch file.
      return { line, reason: (error as Error).message.replace(/ \(line \d+ column \d+\)$/, '') };
    }
  }
  return null;
}

/** The file ended: say so when it ended before its features did, or held none. */
function assertComplete(scan: Scan, label: string): void {
  if (scan.stage === 'start') throw new ConvertError(label, 'it is not GeoJSON: it does not start with a JSON object');
  if (scan.stage === 'keys') throw new ConvertError(label, 'it is not valid GeoJSON: it ends before its root object does');
  if (scan.layout === 'collection' && scan.stage !== 'done') throw new ConvertError(label, 'it is not valid GeoJSON: it ends before its "features" array does');
  if (scan.inFeature) throw new ConvertError(label, `it is not valid GeoJSON: it ends inside its text ${scan.features + 1}`);
  if (scan.features === 0) throw new ConvertError(label, 'it has no features');
}

/**
 * Scans one chunk of the input from `start`, advancing `scan`, and returns the part of it that belongs to the
 * features, edited in place into lines (it may end inside a feature that goes on in the next chunk).
 */
function scanChunk(scan: Scan, chunk: Buffer, start: number, label: string): Buffer {
  let linesStart = scan.stage === 'features' ? start : -1;
  if (scan.offset === 0) scan.lineStart = start;
  let index = start;
  while (index < chunk.length) {
    if (scan.inFeature) {
      const end = scanFeature(scan, chunk, index);
      if (end === -1) break;
      scan.inFeature = false;
      scan.separated = false;
      scan.features++;
      index = end + 1;
      continue;
    }
    const byte = chunk[index]!;
    if (scan.stage !== 'features') {
      if (scanRoot(scan, byte, label)) {
        linesStart = index + 1;
        scan.lineStart = scan.offset + linesStart;
      }
    } else if (byte === OPEN_BRACE) {
      if (!scan.separated) throw notSeparated(scan, label);
      scan.inFeature = true;
      scan.depth++;
    } else if (scan.layout === 'collection' ? byte === COMMA : byte === NEWLINE || byte === RECORD_SEPARATOR) {
      // One line break between two features and none elsewhere, so that feature n is line n.
      if (scan.separated) chunk[index] = SPACE;
      else {
        chunk[index] = NEWLINE;
        endLine(scan, scan.offset + index);
      }
      scan.separated = true;
    } else if (byte === NEWLINE || byte === RETURN || byte === SPACE || byte === TAB) {
      chunk[index] = SPACE;
    } else if (scan.layout === 'collection' && byte === CLOSE_BRACKET) {
      scan.stage = 'done';
      endLine(scan, scan.offset + index);
      return chunk.subarray(linesStart, index);
    } else if (scan.layout === 'collection') {
      throw notCollection(label, `its feature ${scan.features + 1} is not a JSON object`);
    } else {
      throw new ConvertError(label, `it is not a GeoJSON sequence: its text ${scan.features + 1} is not a JSON object`);
    }
    index++;
  }
  return linesStart === -1 ? chunk.subarray(0, 0) : chunk.subarray(linesStart);
}

/** A line ends at `end` (its line break, or the end of the features), counted from the start of the input. */
function endLine(scan: Scan, end: number): void {
  scan.longestLine = Math.max(scan.longestLine, end - scan.lineStart);
  scan.lineStart = end + 1;
}

/** What a byte inside a feature means to the scan: nothing, a bracket that opens or closes, a quote, a line break. */
const BYTE_KIND = new Uint8Array(256);
const [OPENS, CLOSES, STRING, BREAK] = [1, 2, 3, 4];
BYTE_KIND[OPEN_BRACE] = BYTE_KIND[OPEN_BRACKET] = OPENS;
BYTE_KIND[CLOSE_BRACE] = BYTE_KIND[CLOSE_BRACKET] = CLOSES;
BYTE_KIND[QUOTE] = STRING;
BYTE_KIND[NEWLINE] = BYTE_KIND[RETURN] = BREAK;

/**
 * Scans a feature's bytes from `start`, the hot loop: returns the index of its closing brace, or -1 when the
 * feature goes on in the next chunk. Line breaks, which outside strings are whitespace, become spaces in `chunk`.
 */
function scanFeature(scan: Scan, chunk: Buffer, start: number): number {
  let depth = scan.depth;
  let index = scan.inString ? skipString(scan, chunk, start) : start;
  while (index < chunk.length) {
    const kind = BYTE_KIND[chunk[index]!];
    if (kind === OPENS) {
      depth++;
    } else if (kind === CLOSES && --depth === scan.featureDepth) {
      scan.depth = depth;
      return index;
    } else if (kind === STRING) {
      scan.inString = true;
      index = skipString(scan, chunk, index + 1);
      continue;
    } else if (kind === BREAK) {
      chunk[index] = SPACE;
    }
    index++;
  }
  scan.depth = depth;
  return -1;
}

/** Skips the rest of a string from `start`: returns the index after its closing quote, or the chunk's length. */
function skipString(scan: Scan, chunk: Buffer, start: number): number {
  let index = start;
  if (scan.escaped) {
    scan.escaped = false;
    index++;
  }
  for (; index < chunk.length; index++) {
    const byte = chunk[index];
    if (byte === QUOTE) {
      scan.inString = false;
      return index + 1;
    }
    if (byte === BACKSLASH && ++index === chunk.length) scan.escaped = true;
  }
  return chunk.length;
}

/**
 * One byte of a FeatureCollection before its features array: finds the root's "features" key. Returns true at the
 * `[` that opens the array.
 */
function scanRoot(scan: Scan, byte: number, label: string): boolean {
  if (scan.inString) {
    if (scan.escaped) scan.escaped = false;
    else if (byte === BACKSLASH) scan.escaped = true;
    else if (byte === QUOTE) scan.inString = false;
    if (scan.key !== null) readKeyByte(scan, byte);
    return false;
  }
  if (byte === SPACE || byte === NEWLINE || byte === RETURN || byte === TAB) return false;
  if (scan.stage === 'start') {
    if (byte !== OPEN_BRACE) throw new ConvertError(label, 'it is not GeoJSON: it does not start with a JSON object');
    scan.stage = 'keys';
    scan.depth = 1;
    scan.expectKey = true;
  } else if (scan.stage === 'features-value') {
    if (byte !== OPEN_BRACKET) throw notCollection(label, 'its "features" is not an array of Feature objects');
    scan.stage = 'features';
    scan.depth = 2;
    return true;
  } else if (byte === QUOTE) {
    scan.inString = true;
    if (scan.depth === 1 && scan.expectKey) scan.key = [];
  } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
    scan.depth++;
  } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
    if (--scan.depth === 0) throw notCollection(label, 'no "features" array of Feature objects');
  } else if (scan.depth === 1 && byte === COLON) {
    scan.expectKey = false;
    if (scan.lastKey === 'features') scan.stage = 'features-value';
  } else if (scan.depth === 1 && byte === COMMA) {
    scan.expectKey = true;
  }
  return false;
}

/** A byte of a root key, which the string has just consumed: keeps it, and at the closing quote decodes the key. */
function readKeyByte(scan: Scan, byte: number): void {
  const key = scan.key!;
  if (scan.inString) {
    if (key.length <= MAX_KEY_BYTES) key.push(byte);
    return;
  }
  scan.key = null;
  scan.expectKey = false;
  try {
    scan.lastKey = key.length > MAX_KEY_BYTES ? '' : (JSON.parse(`"${Buffer.from(key).toString('utf8')}"`) as string);
  } catch {
    scan.lastKey = '';
  }
}

function notSeparated(scan: Scan, label: string): ConvertError {
  return scan.layout === 'collection'
    ? new ConvertError(label, `it is not valid GeoJSON: a comma is missing before its feature ${scan.features + 1}`)
    : new ConvertError(label, `it is not a GeoJSON sequence: its text ${scan.features + 1} does not start on a line of its own`);
}

function notCollection(label: string, why: string): ConvertError {
  return new ConvertError(label, `it is not a GeoJSON FeatureCollection (${why})`);
}
