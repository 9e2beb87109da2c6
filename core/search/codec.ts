/**
 * Compact text encodings of the search index. Numbers are written as base-32 digits in characters that JSON
 * never escapes: the last digit of a number comes from one half of the alphabet, the others from the other
 * half, so numbers follow each other with no separator. A number below 32 takes one character.
 */
const CONTINUED = '0123456789abcdefghijklmnopqrstuv';
const LAST = 'ABCDEFGHIJKLMNOPQRSTUVWXYZwxyz-_';

const CONTINUED_CODES = [...CONTINUED].map((character) => character.charCodeAt(0));
const LAST_CODES = [...LAST].map((character) => character.charCodeAt(0));

/** Value of each character code: 0–31 for a continued digit, 32–63 for a last digit, -1 otherwise. */
const DIGITS = new Int8Array(128).fill(-1);
for (let index = 0; index < 32; index++) {
  DIGITS[CONTINUED.charCodeAt(index)] = index;
  DIGITS[LAST.charCodeAt(index)] = 32 + index;
}

/**
 * Writes non-negative integers as one string.
 * @example encodeNumbers([0, 31, 32, 1000]) // 'A_1AvI'
 */
export function encodeNumbers(values: Iterable<number>): string {
  const codes: number[] = [];
  let text = '';
  for (const value of values) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`cannot encode ${value} in the search index`);
    if (value >= 32) {
      const start = codes.length;
      for (let rest = Math.floor(value / 32); rest > 0; rest = Math.floor(rest / 32)) codes.push(CONTINUED_CODES[rest % 32]!);
      reverse(codes, start);
    }
    codes.push(LAST_CODES[value % 32]!);
    // Strings are made from slices, as a call can take only so many arguments.
    if (codes.length >= 8192) text += String.fromCharCode(...codes.splice(0));
  }
  return text + String.fromCharCode(...codes);
}

function reverse(codes: number[], start: number): void {
  for (let low = start, high = codes.length - 1; low < high; low++, high--) [codes[low], codes[high]] = [codes[high]!, codes[low]!];
}

/** Reads the integers `encodeNumbers` wrote. */
export function decodeNumbers(text: string): number[] {
  const values: number[] = [];
  let value = 0;
  for (let index = 0; index < text.length; index++) {
    const digit = DIGITS[text.charCodeAt(index)] ?? -1;
    if (digit < 0) throw new SyntaxError(`the search index holds an unexpected character at ${index}`);
    if (digit < 32) {
      value = value * 32 + digit;
    } else {
      values.push(value * 32 + digit - 32);
      value = 0;
    }
  }
  return values;
}

/** A posting: a document and how much the term weighs in it (field weights times occurrences). */
export interface Posting {
  id: number;
  weight: number;
}

/**
 * A posting list, by increasing document id, as one string: each id as the gap from the previous one,
 * doubled, plus one when a weight other than 1 follows. Most postings of a common description word cost
 * one character.
 */
export function encodePostings(postings: readonly Posting[]): string {
  const values: number[] = [];
  let previous = 0;
  for (const { id, weight } of postings) {
    pushPosting(values, id - previous, weight);
    previous = id;
  }
  return encodeNumbers(values);
}

/** Appends one posting, `gap` after the previous id, to the numbers of an encoded posting list. */
export function pushPosting(values: number[], gap: number, weight: number): void {
  if (gap <= 0) throw new RangeError('postings must be sorted by increasing document id');
  if (weight === 1) values.push(gap * 2);
  else values.push(gap * 2 + 1, weight);
}

/** Reads a posting list into parallel arrays of document ids and weights. */
export function decodePostings(text: string): { ids: Uint32Array; weights: Uint16Array } {
  const values = decodeNumbers(text);
  const ids = new Uint32Array(values.length);
  const weights = new Uint16Array(values.length);
  let count = 0;
  let id = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index]!;
    id += value >>> 1;
    ids[count] = id;
    weights[count] = value & 1 ? values[++index]! : 1;
    count += 1;
  }
  return { ids: ids.subarray(0, count), weights: weights.subarray(0, count) };
}

/** Characters of the document lengths string, one per length class; `.` marks an id with no document. */
const LENGTH_CLASSES = `${CONTINUED}${LAST}`;
/** Ratio between two length classes: 63 classes reach about 11,000 weighted words, in steps of 16 %. */
const LENGTH_STEP = 1.16;
/** The character of an id that has no document. */
export const NO_DOCUMENT = '.';

/** The length class character of a document of `length` weighted words. */
export function encodeLength(length: number): string {
  return LENGTH_CLASSES[Math.min(63, Math.round(Math.log(length + 1) / Math.log(LENGTH_STEP)))]!;
}

/** The length a class character stands for; 0 for an id with no document. */
export function decodeLength(character: string): number {
  const index = LENGTH_CLASSES.indexOf(character);
  return index < 0 ? 0 : LENGTH_STEP ** index - 1;
}

/**
 * A short fingerprint of a text (32-bit FNV-1a in base 36): the version a chunk's URL carries, so that a
 * browser never pairs a fresh metadata file with a chunk it cached from an older build.
 */
export function hashText(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(36);
}
