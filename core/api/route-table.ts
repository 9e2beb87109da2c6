import { z } from 'zod';

/** Methods the route tables use. */
export type RouteMethod = 'GET' | 'POST';

/** One status a route can answer: what it means, and its body when it has one. */
export interface RouteResponse {
  description: string;
  /** Content type of the body; absent for an answer without body (204, 304). */
  contentType?: string;
  /** Schema of the body. A schema registered with `.meta({ id })` becomes a `$ref` in the OpenAPI document. */
  schema?: z.ZodType;
  /** Other media types of the same answer, picked by the request (its Accept header, or a format in its path). */
  alternatives?: { contentType: string; schema?: z.ZodType }[];
}

/**
 * Zod schemas by parameter name. Each parses one value: integer and boolean schemas receive the text already
 * read as a number or boolean (see `readParameter`), every other schema receives the text itself.
 * `.describe()` is the parameter's documentation; `.default()` is the value a canonical URL leaves out.
 */
export type ParamSchemas = Record<string, z.ZodType>;

/** Path parameter values after parsing; every one is present. */
export type PathValues<S extends ParamSchemas> = { [K in keyof S]: z.output<S[K]> };
/** Canonical query values: present only when given and different from the default. */
export type QueryValues<S extends ParamSchemas> = { [K in keyof S]?: Exclude<z.output<S[K]>, undefined | null> };
/** Header values after parsing; optional headers may be absent. */
export type HeaderValues<S extends ParamSchemas> = { [K in keyof S]: z.output<S[K]> };

/** What a route table entry declares. */
export interface RouteDeclaration<P extends ParamSchemas, Q extends ParamSchemas, H extends ParamSchemas> {
  /** The OpenAPI operationId. */
  id: string;
  method: RouteMethod;
  /** OpenAPI path template, e.g. `/api/collections/{slug}`; a placeholder fills a whole segment or its start (`{y}.mvt`). */
  path: string;
  /** OpenAPI tag. */
  tag: string;
  summary: string;
  description: string;
  pathParams?: P;
  query?: Q;
  headers?: H;
  body?: z.ZodType;
  responses: Record<number, RouteResponse>;
  /**
   * What an unknown query parameter does. Default: ignored by a route without query parameters (cache busters,
   * probes), refused with 400 by a route that has some, so a misspelt parameter is never silently dropped.
   */
  unknownQuery?: 'ignore' | 'reject';
  /** Status of a path parameter that does not parse: 404 (default: such a path names nothing) or 400. */
  invalidPathStatus?: 400 | 404;
  /** A rule across parameters, run on the canonical values: aliases, dependent defaults; or the 400 to answer. */
  refineQuery?: (values: QueryValues<Q>) => QueryValues<Q> | ParseFailure;
}

/** A parameter that did not parse, and what to fix. */
export type ParseFailure = { ok: false; name: string; detail: string };
/** The result of parsing parameters: the values, or the parameter at fault. */
export type ParseOutcome<T> = { ok: true; value: T } | ParseFailure;

/** A declared route with its parsers and serialisers. */
export interface Route<P extends ParamSchemas = ParamSchemas, Q extends ParamSchemas = ParamSchemas, H extends ParamSchemas = ParamSchemas>
  extends RouteDeclaration<P, Q, H> {
  /** The h3 (rou3) pattern: `/api/queries/{query_id}/bounds` → `/api/queries/:query_id/bounds`. */
  h3Path: string;
  /** Parses raw path parameters, as h3 gives them in `event.context.params` (already percent-decoded). */
  parsePath: (raw: Readonly<Record<string, string | undefined>>) => ParseOutcome<PathValues<P>>;
  /** Parses the declared headers (names match case-insensitively); undeclared headers are not read. */
  parseHeaders: (headers: Headers) => ParseOutcome<HeaderValues<H>>;
  /** Parses a query string into canonical values: defaults dropped, values normalised, rules applied. */
  parseQuery: (query: URLSearchParams) => ParseOutcome<QueryValues<Q>>;
  /** Writes canonical values back: defaults dropped, names sorted, `name=encodeURIComponent(value)` joined by `&`. */
  encodeQuery: (values: QueryValues<Q>) => string;
  /** Fills the path template, e.g. `{ slug: 'ne' }` → `/api/collections/ne`. */
  fillPath: (values: PathValues<P>) => string;
}

/**
 * Declares a route once: the resolver, the static file keys, the OpenAPI document and the h3 registration all
 * read this declaration, so a parameter, its default and its limits are written nowhere else.
 * @example
 * const health = defineRoute({
 *   id: 'getHealth', method: 'GET', path: '/api/health', tag: 'catalog', summary: 'Health', description: 'Always ok.',
 *   responses: { 200: { description: 'Healthy.', contentType: 'application/json', schema: HealthSchema } },
 * });
 */
export function defineRoute<const P extends ParamSchemas = {}, const Q extends ParamSchemas = {}, const H extends ParamSchemas = {}>(
  declaration: RouteDeclaration<P, Q, H>,
): Route<P, Q, H> {
  const pathParams = (declaration.pathParams ?? {}) as P;
  const query = (declaration.query ?? {}) as Q;
  const headers = (declaration.headers ?? {}) as H;
  const ignoreUnknown = (declaration.unknownQuery ?? (Object.keys(query).length === 0 ? 'ignore' : 'reject')) === 'ignore';
  // Links are written for every document of a build (tens of thousands), so the path template and the sorted
  // parameter names are prepared once here rather than on every call.
  const queryNames = Object.keys(query).sort();
  const pathParts = declaration.path.split(/\{([^}]+)\}/);
  return {
    ...declaration,
    h3Path: declaration.path.replace(/\{([^}]+)\}/g, ':$1'),
    parsePath: (raw) => {
      const values: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(pathParams)) {
        const read = readParameter(name, schema, raw[name] ?? '', 'path');
        if (!read.ok) return read;
        values[name] = read.value;
      }
      return { ok: true, value: values as PathValues<P> };
    },
    parseHeaders: (given) => {
      const values: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(headers)) {
        const text = given.get(name);
        if (text === null && isOptional(schema)) continue;
        const read = readParameter(name, schema, text ?? '', 'header');
        if (!read.ok) return { ok: false, name, detail: text === null ? `the header ${name} is required` : read.detail };
        values[name] = read.value;
      }
      return { ok: true, value: values as HeaderValues<H> };
    },
    parseQuery: (given) => {
      const texts = new Map<string, string>();
      const unknown: string[] = [];
      for (const [name, text] of given) {
        if (!Object.hasOwn(query, name)) {
          if (!ignoreUnknown) unknown.push(name);
          continue;
        }
        if (texts.has(name)) return { ok: false, name, detail: `query parameter "${name}" is given more than once` };
        texts.set(name, text);
      }
      if (unknown.length > 0) {
        const accepted = Object.keys(query);
        const names = unknown.slice(0, 5).map((name) => `"${name.slice(0, 40)}"`).join(', ');
        return { ok: false, name: unknown[0]!, detail: `unknown query parameter ${names}; this route accepts ${accepted.length ? accepted.join(', ') : 'none'}` };
      }
      const values: Record<string, unknown> = {};
      for (const [name, text] of texts) {
        const schema = query[name]!;
        const read = readParameter(name, schema, text, 'query');
        if (!read.ok) return read;
        if (!isDefault(schema, read.value)) values[name] = read.value;
      }
      const refined = declaration.refineQuery ? declaration.refineQuery(values as QueryValues<Q>) : (values as QueryValues<Q>);
      if ('ok' in refined) return refined as ParseFailure;
      return { ok: true, value: refined };
    },
    encodeQuery: (values) => {
      const pairs: string[] = [];
      for (const name of queryNames) {
        const value = (values as Record<string, unknown>)[name];
        const schema = query[name]!;
        if (isDefault(schema, value)) continue;
        const text = schema instanceof z.ZodCodec ? String(z.encode(schema, value as never)) : String(value);
        if (text !== '') pairs.push(`${name}=${encodeURIComponent(text)}`);
      }
      return pairs.join('&');
    },
    fillPath: (values) => {
      let path = pathParts[0]!;
      for (let index = 1; index < pathParts.length; index += 2) {
        path += encodeURIComponent(String((values as Record<string, unknown>)[pathParts[index]!])) + pathParts[index + 1]!;
      }
      return path;
    },
  };
}

/** How a parameter's text is read before its schema sees it, taken from the schema's JSON Schema. */
interface ParameterKind {
  type: 'integer' | 'boolean' | 'string';
  nullable: boolean;
  json: Record<string, unknown>;
}

const kinds = new WeakMap<z.ZodType, ParameterKind>();

/** The JSON Schema of a parameter, as the OpenAPI document shows it (input side, no `$schema`). */
export function parameterJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return kindOf(schema).json;
}

function kindOf(schema: z.ZodType): ParameterKind {
  let kind = kinds.get(schema);
  if (kind) return kind;
  const { $schema: _schema, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const variants = [json, ...((json.anyOf as Record<string, unknown>[] | undefined) ?? [])];
  const types = variants.flatMap((variant) => [variant.type].flat()) as unknown[];
  const type = types.includes('integer') ? 'integer' : types.includes('boolean') ? 'boolean' : 'string';
  kind = { type, nullable: types.includes('null'), json };
  kinds.set(schema, kind);
  return kind;
}

const QUERY_INTEGER = /^\d{1,15}$/;
/** Path integers are identities of files and resources, so only their one canonical spelling is accepted. */
const PATH_INTEGER = /^(?:0|[1-9]\d{0,14})$/;

/**
 * Reads one parameter. Integers: decimal digits (in a path without leading zeros: `01`, `0x1`, `1e0` and `+1`
 * are refused); booleans: `true` or `false`; a nullable parameter given as empty or `null` is absent. The value
 * then goes through the schema, whose own messages (from refinements and codecs) are kept.
 */
function readParameter(name: string, schema: z.ZodType, text: string, place: 'path' | 'query' | 'header'): ParseOutcome<unknown> {
  const kind = kindOf(schema);
  const label = place === 'path' ? `path parameter {${name}}` : place === 'header' ? `the header ${name}` : `"${name}"`;
  const fail = (): ParseOutcome<unknown> => ({ ok: false, name, detail: `${label} ${describeExpected(kind, place)}, got "${text.slice(0, 80)}"` });
  let value: unknown = text;
  // An empty string parameter is absent, and so is a nullable one given as empty or `null`; `limit=` stays a 400.
  if (place === 'query' && ((kind.nullable && (text === '' || text === 'null')) || (kind.type === 'string' && text === ''))) return { ok: true, value: undefined };
  if (kind.type === 'integer') {
    const trimmed = place === 'query' ? text.trim() : text;
    if (!(place === 'query' ? QUERY_INTEGER : PATH_INTEGER).test(trimmed)) return fail();
    value = Number(trimmed);
  } else if (kind.type === 'boolean') {
    if (text !== 'true' && text !== 'false') return fail();
    value = text === 'true';
  }
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const custom = result.error.issues.find((issue) => issue.code === 'custom');
  if (!custom) return fail();
  return { ok: false, name, detail: custom.message.includes(`"${name}"`) ? custom.message : `${label} ${custom.message}` };
}

function describeExpected(kind: ParameterKind, place: 'path' | 'query' | 'header'): string {
  const { json } = kind;
  const range = [json, ...((json.anyOf as Record<string, unknown>[] | undefined) ?? [])].find((variant) => variant.type === 'integer') ?? {};
  if (kind.type === 'integer') {
    const min = range.minimum as number | undefined;
    const max = range.maximum as number | undefined;
    const bounded = max !== undefined && max < Number.MAX_SAFE_INTEGER;
    const spelling = place === 'path' ? ' written without leading zeros' : '';
    return `must be an integer${bounded ? ` from ${min ?? 0} to ${max}` : min !== undefined ? ` of at least ${min}` : ''}${spelling}`;
  }
  if (kind.type === 'boolean') return 'must be true or false';
  if (Array.isArray(json.enum)) return `accepts ${json.enum.map((value) => `"${String(value)}"`).join(' or ')}`;
  if (typeof json.pattern === 'string') return `must match ${json.pattern}`;
  if (typeof json.minLength === 'number' && json.minLength > 0) return 'must not be empty';
  return 'is not valid';
}

/** Whether a value is what the canonical URL leaves out: nothing, or the schema's `.default()`. */
function isDefault(schema: z.ZodType, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  return schema instanceof z.ZodDefault && schema.def.defaultValue === value;
}

function isOptional(schema: z.ZodType): boolean {
  return schema.safeParse(undefined).success;
}
