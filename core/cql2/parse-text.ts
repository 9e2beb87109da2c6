import { Cql2Error, type Cql2Expression, type Cql2IntervalEnd } from './expression.ts';
import {
  applySign, createTokenCursor, failAt, GEOMETRY_TYPES, isSymbol, isWord, peekToken, quoteExcerpt, readCoordinate, readGeometry, readList, takeToken,
  type Token, type TokenCursor,
} from './lex-text.ts';
import {
  BOOLEAN_OPERAND, CQL2_OPERATORS, checkCql2Size, findCql2Operator, findOperandRule, isCql2Date, isCql2Timestamp, isIntervalEnd,
  NUMERIC_OPERAND, SCALAR_OPERAND, type Cql2OperandRule,
} from './read-json.ts';

/** Longest text filter accepted, in UTF-8 bytes: room for a polygon of some 3,000 vertices. */
export const MAX_CQL2_TEXT_BYTES = 65_536;

/** A parsed piece of the filter and the characters it spans, so that a message can quote it. */
interface Parsed {
  node: Cql2Expression;
  start: number;
  end: number;
}

const COMPARISONS = new Set(['=', '<>', '<', '>', '<=', '>=']);
/** Words that are operators wherever they stand: never a property, a function or a value. */
const OPERATOR_WORDS = new Set(['AND', 'OR', 'NOT', 'LIKE', 'BETWEEN', 'IN', 'IS', 'NULL', 'DIV']);
/**
 * Parses a filter in the CQL2 text encoding (the BNF of OGC 21-065r2) into the tree of its JSON encoding. AND and
 * OR chains become one n-ary operation, as in the standard's JSON examples; `x NOT LIKE p` becomes NOT of LIKE, and
 * `-x` becomes `-1 * x` (the JSON encoding has no unary minus). Keywords are read in any case, names as written.
 * @example parseCql2Text("name = 'Paris' AND pop > 5") // { op: 'and', args: [{ op: '=', … }, { op: '>', … }] }
 * With `ilike`, `a ILIKE p` is read as `CASEI(a) LIKE CASEI(p)`: CQL2 has no ILIKE, but its drafts' `cql-text` had
 * it, and GDAL 3.6 sends OGR SQL's ILIKE so.
 * @throws Cql2Error at the character of the first problem; one past the size limits has a JSON pointer instead
 */
export function parseCql2Text(text: string, options: { ilike?: boolean } = {}): Cql2Expression {
  const past = findPastLimit(text);
  if (past !== undefined) throw new Cql2Error(`the filter is longer than ${MAX_CQL2_TEXT_BYTES} bytes (in UTF-8); it passes the limit at character ${past + 1}`, { position: past });
  const cursor = createTokenCursor(text, options);
  if (peekToken(cursor).kind === 'end') throw new Cql2Error('expected a filter, found an empty text at character 1', { position: 0 });
  const tree = parseChain(cursor, false, 'OR');
  if (peekToken(cursor).kind !== 'end') failAt(cursor, 'AND, OR or the end of the filter');
  checkCql2Size(tree.node);
  return tree.node;
}

/** booleanExpression (`word` OR) and booleanTerm (`word` AND). `allowValue`: inside parentheses, x may be a value. */
function parseChain(cursor: TokenCursor, allowValue: boolean, word: 'AND' | 'OR'): Parsed {
  const parseOperand = word === 'OR' ? () => parseChain(cursor, allowValue, 'AND') : () => parseNot(cursor, allowValue);
  const first = parseOperand();
  if (!isWord(peekToken(cursor), word)) return first;
  const args = [first];
  while (isWord(peekToken(cursor), word)) {
    takeToken(cursor);
    args.push(parseOperand());
  }
  return buildOperation(cursor, word.toLowerCase(), args, first.start);
}

function parseNot(cursor: TokenCursor, allowValue: boolean): Parsed {
  const not = peekToken(cursor);
  if (!isWord(not, 'NOT')) return parsePrimary(cursor, allowValue);
  takeToken(cursor);
  return buildOperation(cursor, 'not', [parsePrimary(cursor, allowValue)], not.start);
}

/**
 * booleanPrimary: a value, then the comparison or predicate it starts. Alone, the value must be true or false
 * (a predicate, TRUE, FALSE or a function), unless `allowValue` and a `)` or `,` ends it: `(a + 1) > b`, `f(a, b)`.
 */
function parsePrimary(cursor: TokenCursor, allowValue: boolean): Parsed {
  const left = parseArithmetic(cursor);
  const token = peekToken(cursor);
  if (token.kind === 'symbol' && COMPARISONS.has(token.text)) {
    takeToken(cursor);
    return buildOperation(cursor, token.text, [left, parseArithmetic(cursor)], left.start);
  }
  const negated = isWord(token, 'NOT');
  if (negated) {
    takeToken(cursor);
    if (![...(cursor.ilike ? ['ILIKE'] : []), 'LIKE', 'BETWEEN', 'IN'].some((word) => isWord(peekToken(cursor), word))) failAt(cursor, 'LIKE, BETWEEN or IN');
  }
  const predicate = parseWordPredicate(cursor, left);
  if (predicate) return negated ? buildOperation(cursor, 'not', [predicate], left.start) : predicate;
  if (BOOLEAN_OPERAND.accepts(left.node)) return left;
  if (allowValue && (isSymbol(token, ')') || isSymbol(token, ','))) return left;
  return failAt(cursor, `a comparison operator, LIKE, BETWEEN, IN${allowValue ? ', IS, "," or ")"' : ' or IS'}`, quoteExcerpt(excerpt(cursor, left)));
}

/** LIKE, BETWEEN, IN and IS [NOT] NULL after their left operand, or undefined when none follows. */
function parseWordPredicate(cursor: TokenCursor, left: Parsed): Parsed | undefined {
  const token = peekToken(cursor);
  if (isWord(token, 'LIKE')) {
    takeToken(cursor);
    return buildOperation(cursor, 'like', [left, parsePattern(cursor)], left.start);
  }
  if (cursor.ilike && isWord(token, 'ILIKE')) {
    takeToken(cursor);
    const pattern = parsePattern(cursor);
    const fold = (side: Parsed) => buildOperation(cursor, 'casei', [side], side.start);
    return buildOperation(cursor, 'like', [fold(left), fold(pattern)], left.start);
  }
  if (isWord(token, 'BETWEEN')) {
    takeToken(cursor);
    const low = parseArithmetic(cursor);
    if (!isWord(peekToken(cursor), 'AND')) failAt(cursor, 'AND');
    takeToken(cursor);
    return buildOperation(cursor, 'between', [left, low, parseArithmetic(cursor)], left.start);
  }
  if (isWord(token, 'IN')) {
    takeToken(cursor);
    const open = peekToken(cursor);
    const items = readList(cursor, () => checkOperand(cursor, parseArithmetic(cursor), SCALAR_OPERAND, 'in the list of IN'));
    return buildOperation(cursor, 'in', [left, { node: items.map((item) => item.node), start: open.start, end: endOf(cursor) }], left.start);
  }
  if (!isWord(token, 'IS')) return undefined;
  takeToken(cursor);
  const not = isWord(peekToken(cursor), 'NOT');
  if (not) takeToken(cursor);
  if (!isWord(peekToken(cursor), 'NULL')) failAt(cursor, not ? 'NULL' : 'NULL or NOT NULL');
  takeToken(cursor);
  const isNull = buildOperation(cursor, 'isNull', [left], left.start);
  return not ? buildOperation(cursor, 'not', [isNull], left.start) : isNull;
}

/** patternExpression: a string, or CASEI(…) or ACCENTI(…) of a pattern. */
function parsePattern(cursor: TokenCursor): Parsed {
  const token = peekToken(cursor);
  if (token.kind === 'string') return takeValue(cursor, token.value);
  const wrapper = token.kind === 'word' && isSymbol(peekToken(cursor, 1), '(') ? findCql2Operator(token.text) : undefined;
  if (wrapper !== 'casei' && wrapper !== 'accenti') return failAt(cursor, 'a pattern: a string, or CASEI(…) or ACCENTI(…) of one');
  takeToken(cursor);
  const [inner] = readList(cursor, () => parsePattern(cursor), { most: 1 });
  return { node: { op: wrapper, args: [inner?.node ?? ''] }, start: token.start, end: endOf(cursor) };
}

/** arithmeticExpression: terms joined by + and -, left to right. */
function parseArithmetic(cursor: TokenCursor): Parsed {
  let left = parseTerm(cursor);
  for (let token = peekToken(cursor); isSymbol(token, '+') || isSymbol(token, '-'); token = peekToken(cursor)) {
    takeToken(cursor);
    left = buildOperation(cursor, token.text, [left, parseTerm(cursor)], left.start);
  }
  return left;
}

/** arithmeticTerm: powers joined by *, /, % and DIV, left to right. */
function parseTerm(cursor: TokenCursor): Parsed {
  let left = parsePower(cursor);
  for (let token = peekToken(cursor); ['*', '/', '%'].some((symbol) => isSymbol(token, symbol)) || isWord(token, 'DIV'); token = peekToken(cursor)) {
    takeToken(cursor);
    left = buildOperation(cursor, token.kind === 'word' ? 'div' : token.text, [left, parsePower(cursor)], left.start);
  }
  return left;
}

/** powerTerm: one `^` at most, as in the BNF, since `a ^ b ^ c` reads two ways. */
function parsePower(cursor: TokenCursor): Parsed {
  const base = parseFactor(cursor);
  if (!isSymbol(peekToken(cursor), '^')) return base;
  takeToken(cursor);
  const power = buildOperation(cursor, '^', [base, parseFactor(cursor)], base.start);
  if (isSymbol(peekToken(cursor), '^')) failAt(cursor, 'parentheses around one "^" of two, as in (a ^ b) ^ c');
  return power;
}

/** arithmeticFactor: a value, or a signed number, or `-` before a value. */
function parseFactor(cursor: TokenCursor): Parsed {
  const sign = peekToken(cursor);
  if (!isSymbol(sign, '-') && !isSymbol(sign, '+')) return parseValue(cursor);
  takeToken(cursor);
  const number = peekToken(cursor);
  if (number.kind === 'number') {
    takeToken(cursor);
    return { node: applySign(sign, number.value), start: sign.start, end: number.end };
  }
  if (sign.text === '+') return failAt(cursor, 'a number');
  const operand = checkOperand(cursor, parseValue(cursor), NUMERIC_OPERAND, 'after "-"');
  return { node: { op: '*', args: [-1, operand.node] }, start: sign.start, end: operand.end };
}

/** A literal, a property, a function or predicate call, or something in parentheses. */
function parseValue(cursor: TokenCursor): Parsed {
  const token = peekToken(cursor);
  if (token.kind === 'number' || token.kind === 'string') return takeValue(cursor, token.value);
  if (token.kind === 'quoted') return takeValue(cursor, { property: token.value });
  if (token.kind === 'word') return parseWord(cursor, token);
  if (isSymbol(token, '(')) return parseGroup(cursor, false);
  return failAt(cursor, 'a value');
}

function parseWord(cursor: TokenCursor, word: Token): Parsed {
  const upper = word.text.toUpperCase();
  if (upper === 'TRUE' || upper === 'FALSE') return takeValue(cursor, upper === 'TRUE');
  if (OPERATOR_WORDS.has(upper)) return failAt(cursor, 'a value');
  const next = peekToken(cursor, 1);
  if (GEOMETRY_TYPES.has(upper) && (isSymbol(next, '(') || isWord(next, 'Z'))) return { node: readGeometry(cursor), start: word.start, end: endOf(cursor) };
  if (!isSymbol(next, '(')) return takeValue(cursor, { property: word.text });
  if (upper === 'DATE' || upper === 'TIMESTAMP') return parseInstant(cursor, upper === 'DATE');
  if (upper === 'INTERVAL') return parseInterval(cursor);
  if (upper === 'BBOX') return parseBbox(cursor);
  const operator = findCql2Operator(word.text);
  // A function named isNull would read as the operator in the JSON encoding.
  if (operator === 'isNull') throw new Cql2Error(`expected a function name, found the operator ${quoteExcerpt(word.text)} at character ${word.start + 1}`, { position: word.start });
  return parseCall(cursor, operator ?? word.text);
}

/** NAME(a, …): a function, or CASEI, ACCENTI or a spatial, temporal or array predicate. */
function parseCall(cursor: TokenCursor, op: string): Parsed {
  const name = takeToken(cursor);
  // An operand of A_EQUALS… in parentheses is an array even of one item; elsewhere (x) is x.
  const arrays = op.startsWith('a_') && CQL2_OPERATORS.has(op);
  const args = readList(cursor, () => (arrays && isSymbol(peekToken(cursor), '(') ? parseGroup(cursor, true) : parseChain(cursor, true, 'OR')), { least: 0 });
  return buildOperation(cursor, op, args, name.start);
}

/** `(…)`: what it holds; or an array when it holds none, several items, or one with `array`. */
function parseGroup(cursor: TokenCursor, array: boolean): Parsed {
  const open = peekToken(cursor);
  const items = readList(cursor, () => parseChain(cursor, true, 'OR'), { least: 0, expected: 'AND, OR, "," or ")"' });
  const [first] = items;
  const node = first && items.length === 1 && !array ? first.node : items.map((item) => item.node);
  return { node, start: open.start, end: endOf(cursor) };
}

function parseInstant(cursor: TokenCursor, date: boolean): Parsed {
  const name = takeToken(cursor);
  const [text] = readList(cursor, () => {
    const token = peekToken(cursor);
    if (token.kind !== 'string' || !(date ? isCql2Date : isCql2Timestamp)(token.value)) {
      return failAt(cursor, date ? "a date in quotes, like '1969-07-20'" : "a timestamp in quotes, like '1969-07-20T20:17:40Z'");
    }
    takeToken(cursor);
    return token.value;
  }, { most: 1 });
  const value = text ?? '';
  return { node: date ? { date: value } : { timestamp: value }, start: name.start, end: endOf(cursor) };
}

function parseInterval(cursor: TokenCursor): Parsed {
  const name = takeToken(cursor);
  const ends = readList(cursor, () => {
    const end = parseArithmetic(cursor);
    if (isIntervalEnd(end.node)) return end.node;
    throw new Cql2Error(`expected a date, a timestamp, '..', a property or a function as an end of INTERVAL, found ${quoteExcerpt(excerpt(cursor, end))} at character ${end.start + 1}`, { position: end.start });
  }, { least: 2, most: 2 });
  const interval: [Cql2IntervalEnd, Cql2IntervalEnd] = [ends[0] ?? '..', ends[1] ?? '..'];
  return { node: { interval }, start: name.start, end: endOf(cursor) };
}

function parseBbox(cursor: TokenCursor): Parsed {
  const name = takeToken(cursor);
  const bbox = readList(cursor, () => readCoordinate(cursor, 'a number'), { most: 6 });
  if (bbox.length !== 4 && bbox.length !== 6) throw new Cql2Error(`expected 4 or 6 numbers in BBOX, found ${bbox.length} at character ${name.start + 1}`, { position: name.start });
  return { node: { bbox }, start: name.start, end: endOf(cursor) };
}

/** An operation whose operands the standard's rules accept (the same rules as the JSON encoding's). */
function buildOperation(cursor: TokenCursor, op: string, args: Parsed[], start: number): Parsed {
  const rule = CQL2_OPERATORS.get(op);
  if (rule && (args.length < rule.min || args.length > rule.max)) {
    throw new Cql2Error(`expected ${rule.min} operand${rule.min === 1 ? '' : 's'} of ${labelOf(op)}, found ${args.length} at character ${start + 1}`, { position: start });
  }
  if (rule) args.forEach((arg, index) => checkOperand(cursor, arg, findOperandRule(rule, index), `as operand ${index + 1} of ${labelOf(op)}`));
  return { node: { op, args: args.map((arg) => arg.node) }, start, end: endOf(cursor) };
}

function checkOperand(cursor: TokenCursor, parsed: Parsed, rule: Cql2OperandRule, where: string): Parsed {
  if (rule.accepts(parsed.node)) return parsed;
  throw new Cql2Error(`expected ${rule.expected} ${where}, found ${quoteExcerpt(excerpt(cursor, parsed))} at character ${parsed.start + 1}`, { position: parsed.start });
}

/** How a message names an operator: its keyword, or the symbol in quotes. */
function labelOf(op: string): string {
  if (op === 'isNull') return 'IS NULL';
  return /^[a-z]/i.test(op) ? op.toUpperCase() : `"${op}"`;
}

function takeValue(cursor: TokenCursor, node: Cql2Expression): Parsed {
  const token = takeToken(cursor);
  return { node, start: token.start, end: token.end };
}

function endOf(cursor: TokenCursor): number {
  return cursor.previous?.end ?? 0;
}

function excerpt(cursor: TokenCursor, parsed: Parsed): string {
  return cursor.text.slice(parsed.start, parsed.end);
}

/** The character where the text passes MAX_CQL2_TEXT_BYTES in UTF-8, or undefined; it stops there. */
function findPastLimit(text: string): number | undefined {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // Each half of a surrogate pair counts 2: the pair is 4 bytes.
    bytes += code < 0x80 ? 1 : code < 0x800 || (code >= 0xd800 && code <= 0xdfff) ? 2 : 3;
    if (bytes > MAX_CQL2_TEXT_BYTES) return index;
  }
  return undefined;
}
