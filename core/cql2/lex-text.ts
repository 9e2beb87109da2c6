import { Cql2Error, type Cql2Geometry, type Cql2Position } from './expression.ts';
import { MAX_CQL2_DEPTH } from './read-json.ts';

/**
 * A token of the CQL2 text encoding. `word` is an identifier or a keyword (the parser tells them apart), `quoted` a
 * `"double quoted"` property name, `symbol` punctuation or an operator; an unknown character is a one-character
 * symbol too, so that the parser can say what it expected in its place.
 */
export type Token =
  | { kind: 'number'; value: number; text: string; start: number; end: number }
  | { kind: 'word' | 'quoted' | 'string' | 'symbol' | 'end'; value: string; text: string; start: number; end: number };

/** A reader of the tokens of one filter, lexed as the parser asks for them, with the parenthesis depth it is at. */
export interface TokenCursor {
  readonly text: string;
  /** Tokens lexed but not taken yet (the parser looks at most three ahead). */
  ahead: Token[];
  /** Where the next token not yet lexed starts looking. */
  offset: number;
  /** The last token taken, for "after …" in messages. */
  previous: Token | undefined;
  /** Parentheses open around the token being read. */
  depth: number;
  /** Whether `a ILIKE p` is read, as LIKE of both sides in CASEI (the drafts' `cql-text`, which GDAL 3.6 sends). */
  ilike: boolean;
}

const QUOTE = 0x27;
const DOUBLE_QUOTE = 0x22;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
/** Characters that run together into one comparison operator, so that `>>` or `!=` is one bad token, not two. */
const OPERATOR_RUN = '<>=!';
/** Longest excerpt of the filter a message quotes. */
const EXCERPT = 40;

/** The WKT keywords of geometries, with their GeoJSON type. */
export const GEOMETRY_TYPES = new Map<string, Cql2Geometry['type']>([
  ['POINT', 'Point'], ['LINESTRING', 'LineString'], ['POLYGON', 'Polygon'], ['MULTIPOINT', 'MultiPoint'],
  ['MULTILINESTRING', 'MultiLineString'], ['MULTIPOLYGON', 'MultiPolygon'], ['GEOMETRYCOLLECTION', 'GeometryCollection'],
]);


/** Starts reading the tokens of `text`. */
export function createTokenCursor(text: string, options: { ilike?: boolean } = {}): TokenCursor {
  return { text, ahead: [], offset: 0, previous: undefined, depth: 0, ilike: options.ilike ?? false };
}

/** The token `offset` places ahead of the cursor, lexing up to it; past the end, the end token. */
export function peekToken(cursor: TokenCursor, offset = 0): Token {
  while (cursor.ahead.length <= offset) {
    const last = cursor.ahead.at(-1);
    if (last?.kind === 'end') return last;
    cursor.ahead.push(readToken(cursor.text, last ? last.end : cursor.offset));
  }
  return cursor.ahead[offset] ?? readToken(cursor.text, cursor.text.length);
}

/** Takes the next token (the end token stays). */
export function takeToken(cursor: TokenCursor): Token {
  const token = peekToken(cursor);
  if (token.kind !== 'end') {
    cursor.ahead.shift();
    cursor.offset = token.end;
  }
  cursor.previous = token;
  return token;
}

/** Whether a token is the keyword `word` (given in upper case), in any case. */
export function isWord(token: Token, word: string): boolean {
  return token.kind === 'word' && token.text.length === word.length && token.text.toUpperCase() === word;
}

/** Whether a token is the punctuation or operator `symbol`. */
export function isSymbol(token: Token, symbol: string): boolean {
  return token.kind === 'symbol' && token.text === symbol;
}

/**
 * Throws the parser's error at the next token: what was expected, after what (the last token taken, unless
 * `after` names something longer), and what was found where.
 * @example failAt(cursor, 'a value') // expected a value after "=", found the end of the filter at character 8
 */
export function failAt(cursor: TokenCursor, expected: string, after?: string): never {
  const found = peekToken(cursor);
  const previous = after ?? (cursor.previous ? describeToken(cursor.previous) : undefined);
  throw new Cql2Error(`expected ${expected}${previous ? ` after ${previous}` : ''}, found ${describeToken(found)} at character ${found.start + 1}`, { position: found.start });
}

/** A token as a message names it: quoted as written, or "the end of the filter". */
function describeToken(token: Token): string {
  return token.kind === 'end' ? 'the end of the filter' : quoteExcerpt(token.text);
}

/** An excerpt of the filter for a message, in double quotes, its white space collapsed and cut to 40 characters. */
export function quoteExcerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return `"${flat.length > EXCERPT ? `${flat.slice(0, EXCERPT - 1)}…` : flat}"`;
}

/**
 * Reads a WKT geometry (POINT, LINESTRING, POLYGON, their MULTI forms, or a GEOMETRYCOLLECTION of them; `Z`
 * optional) as GeoJSON. WKT is made of numbers, commas and parentheses alone, so it is read here, with the tokens.
 */
export function readGeometry(cursor: TokenCursor): Cql2Geometry {
  const name = takeToken(cursor);
  const type = GEOMETRY_TYPES.get(name.text.toUpperCase()) ?? 'Point';
  const z = isWord(peekToken(cursor), 'Z');
  if (z) takeToken(cursor);
  const position = () => readPosition(cursor, z);
  const point = () => readList(cursor, position, { most: 1 })[0] ?? [];
  const line = () => checkCount(cursor, () => readList(cursor, position), 2, 'a line');
  const ring = () => checkRing(cursor, () => readList(cursor, position));
  const polygon = () => readList(cursor, ring);
  let geometry: Cql2Geometry;
  if (type === 'Point') geometry = { type, coordinates: point() };
  else if (type === 'LineString') geometry = { type, coordinates: line() };
  else if (type === 'Polygon') geometry = { type, coordinates: polygon() };
  // MULTIPOINT takes its points bare, (1 2, 3 4), or each in parentheses, ((1 2), (3 4)), as WKT writers differ.
  else if (type === 'MultiPoint') geometry = { type, coordinates: readList(cursor, () => (isSymbol(peekToken(cursor), '(') ? point() : position())) };
  else if (type === 'MultiLineString') geometry = { type, coordinates: readList(cursor, line) };
  else if (type === 'MultiPolygon') geometry = { type, coordinates: readList(cursor, polygon) };
  else geometry = { type, geometries: checkCount(cursor, () => readList(cursor, () => readMember(cursor)), 2, 'a GEOMETRYCOLLECTION', 'geometries') };
  return geometry;
}

/** A geometry of a GEOMETRYCOLLECTION: any but another collection, as the BNF has it. */
function readMember(cursor: TokenCursor): Cql2Geometry {
  const token = peekToken(cursor);
  const upper = token.kind === 'word' ? token.text.toUpperCase() : '';
  if (!GEOMETRY_TYPES.has(upper) || upper === 'GEOMETRYCOLLECTION') failAt(cursor, 'POINT, LINESTRING, POLYGON, MULTIPOINT, MULTILINESTRING or MULTIPOLYGON');
  return readGeometry(cursor);
}

/** A position: 2 coordinates or 3 (always 3 after Z). */
function readPosition(cursor: TokenCursor, z: boolean): Cql2Position {
  const position = [readCoordinate(cursor, 'a coordinate'), readCoordinate(cursor, 'a second coordinate')];
  const startsNumber = (token: Token) => token.kind === 'number' || isSymbol(token, '-') || isSymbol(token, '+');
  if (z || startsNumber(peekToken(cursor))) position.push(readCoordinate(cursor, `a third coordinate${z ? ' (after Z)' : ''}`));
  if (startsNumber(peekToken(cursor))) failAt(cursor, '"," or ")" (a position has at most 3 coordinates)');
  return position;
}

/** A signed number, `what` the message calls it when it is missing. */
export function readCoordinate(cursor: TokenCursor, what: string): number {
  const sign = peekToken(cursor);
  const signed = isSymbol(sign, '-') || isSymbol(sign, '+');
  if (signed) takeToken(cursor);
  const number = peekToken(cursor);
  if (number.kind !== 'number') return failAt(cursor, what);
  takeToken(cursor);
  return applySign(signed ? sign : undefined, number.value);
}

/** What `read` reads, if at least `least` items (a GEOMETRYCOLLECTION needs 2: the BNF allows 1, cql2.json not). */
function checkCount<T>(cursor: TokenCursor, read: () => T[], least: number, what: string, items = 'positions'): T[] {
  const start = peekToken(cursor).start;
  const list = read();
  if (list.length < least) throw new Cql2Error(`expected ${what} of at least ${least} ${items}, found ${list.length} at character ${start + 1}`, { position: start });
  return list;
}

/** A polygon ring: at least 4 positions, the last the first (the BNF's count; GeoJSON's closing). */
function checkRing(cursor: TokenCursor, read: () => Cql2Position[]): Cql2Position[] {
  const start = peekToken(cursor).start;
  const ring = checkCount(cursor, read, 4, 'a polygon ring');
  const first = ring[0] ?? [];
  const last = ring.at(-1) ?? [];
  if (first.length !== last.length || first.some((value, index) => value !== last[index])) {
    throw new Cql2Error(`expected a closed polygon ring (its last position its first), found an open ring at character ${start + 1}`, { position: start });
  }
  return ring;
}

/**
 * `(item, item, …)`: the items `readItem` reads, between parentheses that count towards the depth limit.
 * `least` (1 by default) and `most` bound their number; `expected` is what may follow an item.
 */
export function readList<T>(cursor: TokenCursor, readItem: () => T, bounds: { least?: number; most?: number; expected?: string } = {}): T[] {
  const { least = 1, most = Infinity } = bounds;
  const open = peekToken(cursor);
  if (!isSymbol(open, '(')) failAt(cursor, '"("');
  takeToken(cursor);
  if (++cursor.depth > MAX_CQL2_DEPTH) throw new Cql2Error(`expected at most ${MAX_CQL2_DEPTH} parentheses inside one another, found more at character ${open.start + 1}`, { position: open.start });
  const items: T[] = [];
  if (least > 0 || !isSymbol(peekToken(cursor), ')')) {
    items.push(readItem());
    while (items.length < most && isSymbol(peekToken(cursor), ',')) {
      takeToken(cursor);
      items.push(readItem());
    }
  }
  if (!isSymbol(peekToken(cursor), ')') || items.length < least) {
    const expected = items.length < least ? '","' : items.length < most ? bounds.expected ?? '"," or ")"' : '")"';
    failAt(cursor, expected, `${cursor.previous ? describeToken(cursor.previous) : '"("'} (the "(" at character ${open.start + 1} is open)`);
  }
  takeToken(cursor);
  cursor.depth--;
  return items;
}

/** A number with its sign; `-0.0` stays -0, as JSON.parse reads it in the JSON encoding. */
export function applySign(sign: Token | undefined, value: number): number {
  return sign?.text === '-' ? -value : value;
}


/**
 * Lexes the token at or after `from` (white space skipped).
 * @throws Cql2Error for an unterminated string or quoted name, or a malformed number
 */
export function readToken(text: string, from: number): Token {
  let start = from;
  while (start < text.length && isWhiteSpace(text.charCodeAt(start))) start++;
  if (start >= text.length) return { kind: 'end', value: '', text: '', start: text.length, end: text.length };
  const code = text.codePointAt(start) ?? 0;
  if (code === QUOTE) return readString(text, start);
  if (code === DOUBLE_QUOTE) return readQuotedName(text, start);
  if (isDigit(code) || (code === DOT && isDigit(text.charCodeAt(start + 1)))) return readNumber(text, start);
  if (isIdentifierStart(code)) {
    const end = skipIdentifier(text, start);
    return { kind: 'word', value: text.slice(start, end), text: text.slice(start, end), start, end };
  }
  let end = start + (code > 0xffff ? 2 : 1);
  if (OPERATOR_RUN.includes(text[start] ?? '')) {
    while (end < text.length && OPERATOR_RUN.includes(text[end] ?? '')) end++;
  }
  return { kind: 'symbol', value: text.slice(start, end), text: text.slice(start, end), start, end };
}

/** `'…'`, where `''` and `\'` stand for a quote (the BNF's escapeQuote); any other backslash is itself. */
function readString(text: string, start: number): Token {
  let value = '';
  let chunk = start + 1;
  for (let index = chunk; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const escaped = (code === QUOTE || code === BACKSLASH) && text.charCodeAt(index + 1) === QUOTE;
    if (escaped) {
      value += `${text.slice(chunk, index)}'`;
      chunk = ++index + 1;
    } else if (code === QUOTE) {
      return { kind: 'string', value: value + text.slice(chunk, index), text: text.slice(start, index + 1), start, end: index + 1 };
    }
  }
  throw new Cql2Error(`unterminated string: expected a closing ' for the string that opens at character ${start + 1}`, { position: start });
}

/** `"name"`: a property named by any characters but a double quote (the BNF allows only an identifier there). */
function readQuotedName(text: string, start: number): Token {
  const close = text.indexOf('"', start + 1);
  if (close < 0) throw new Cql2Error(`unterminated name: expected a closing " for the name that opens at character ${start + 1}`, { position: start });
  if (close === start + 1) throw new Cql2Error(`expected a property name between the double quotes at character ${start + 1}`, { position: start });
  return { kind: 'quoted', value: text.slice(start + 1, close), text: text.slice(start, close + 1), start, end: close + 1 };
}

/** An unsigned number: `12`, `1.5`, `1.`, `.5`, `6.02E23`, `1e-3` (the sign is the parser's). */
function readNumber(text: string, start: number): Token {
  let end = skipDigits(text, start);
  if (text.charCodeAt(end) === DOT) end = skipDigits(text, end + 1);
  if (text[end] === 'e' || text[end] === 'E') {
    const sign = text[end + 1] === '+' || text[end + 1] === '-' ? 1 : 0;
    const digits = skipDigits(text, end + 1 + sign);
    if (digits === end + 1 + sign) throw badNumber(text, start);
    end = digits;
  }
  // A number glued to a name or a second point (`5abc`, `1.2.3`) is a typo, not two tokens.
  if (end < text.length && isIdentifierPart(text.codePointAt(end) ?? 0)) throw badNumber(text, start);
  const value = Number(text.slice(start, end));
  if (!Number.isFinite(value)) throw new Cql2Error(`expected a number that fits a double, found ${quoteExcerpt(text.slice(start, end))} at character ${start + 1}`, { position: start });
  return { kind: 'number', value, text: text.slice(start, end), start, end };
}

function badNumber(text: string, start: number): Cql2Error {
  let end = start;
  while (end < text.length && (isIdentifierPart(text.codePointAt(end) ?? 0) || '+-'.includes(text[end] ?? ' '))) end++;
  return new Cql2Error(`expected a number, found ${quoteExcerpt(text.slice(start, end))} at character ${start + 1}`, { position: start });
}

function skipDigits(text: string, from: number): number {
  let end = from;
  while (isDigit(text.charCodeAt(end))) end++;
  return end;
}

function skipIdentifier(text: string, start: number): number {
  let end = start;
  for (let code = text.codePointAt(end); code !== undefined && (end === start ? isIdentifierStart(code) : isIdentifierPart(code)); code = text.codePointAt(end)) {
    end += code > 0xffff ? 2 : 1;
  }
  return end;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** The BNF's whitespace: ASCII's, and the Unicode spaces and separators it lists. */
function isWhiteSpace(code: number): boolean {
  return (code >= 0x09 && code <= 0x0d) || code === 0x20 || code === 0x85 || code === 0xa0 || code === 0x1680
    || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000;
}

/** The BNF's identifierStart: `:`, `_`, ASCII letters and the XML name-start ranges. */
function isIdentifierStart(code: number): boolean {
  return code === 0x3a || code === 0x5f || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)
    || (code >= 0xc0 && code <= 0xd6) || (code >= 0xd8 && code <= 0xf6) || (code >= 0xf8 && code <= 0x2ff)
    || (code >= 0x370 && code <= 0x37d) || (code >= 0x37f && code <= 0x1ffe) || code === 0x200c || code === 0x200d
    || (code >= 0x2070 && code <= 0x218f) || (code >= 0x2c00 && code <= 0x2fef) || (code >= 0x3001 && code <= 0xd7ff)
    || (code >= 0xf900 && code <= 0xfdcf) || (code >= 0xfdf0 && code <= 0xfffd) || (code >= 0x10000 && code <= 0xeffff);
}

/** The BNF's identifierPart: a start character, `.`, a digit, a combining mark, `‿` or `⁀`. */
function isIdentifierPart(code: number): boolean {
  return isIdentifierStart(code) || code === DOT || isDigit(code) || (code >= 0x300 && code <= 0x36f) || code === 0x203f || code === 0x2040;
}
