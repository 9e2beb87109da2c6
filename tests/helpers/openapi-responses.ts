import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { canDecode } from '../../server/errors.ts';

type Json = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Where a request lands in a surface's OpenAPI document. */
export type OperationMatch =
  | { kind: 'operation'; surface: Surface; path: string; method: string; operation: Json }
  /** The path is documented, but not for this method. */
  | { kind: 'method'; surface: Surface; path: string }
  /** The surface's prefix, but no documented path. */
  | { kind: 'none'; surface: Surface }
  /** No surface serves this path. */
  | { kind: 'outside' };

/** One OpenAPI document and the prefix its paths share. */
export interface Surface {
  name: string;
  prefix: string;
  document: Json;
  /** Each path of the document (`template`, its key) with its absolute form on the site. */
  paths: { template: string; absolute: string; pattern: RegExp; literals: number }[];
  /** Validators of every error body the document declares (status ≥ 400), by content type. */
  errorBodies: Map<string, ValidateFunction[]>;
  /** Compiled response schemas by JSON pointer, compiled on first use. */
  compiled: Map<string, ValidateFunction>;
  ajv: Ajv;
}

/**
 * Checks answers against the OpenAPI documents the server publishes: the status must be one the operation
 * declares, the content type the one declared for it, and a JSON body must validate against its schema. A request
 * to a documented path with another method must be a 405, and one to no documented path a 400, 404 or 405; their
 * bodies must still be one of the surface's documented error bodies. Documents of OpenAPI 3.1 are compiled as
 * JSON Schema 2020-12, those of 3.0 as draft-07 (with `nullable`).
 */
export function createResponseChecker(documents: Record<string, Json>) {
  const surfaces = Object.entries(documents).map(([name, document]) => createSurface(name, document));
  surfaces.sort((a, b) => b.prefix.length - a.prefix.length);
  const match = (pathname: string, method: string): OperationMatch => {
    const surface = surfaces.find((candidate) => pathname === candidate.prefix || pathname.startsWith(`${candidate.prefix}/`));
    if (!surface) return { kind: 'outside' };
    // A path that is not valid percent-encoding names no resource: the HTTP layer refuses it before any route.
    if (!canDecode(pathname)) return { kind: 'none', surface };
    const found = surface.paths.filter((path) => path.pattern.test(pathname)).sort((a, b) => b.literals - a.literals)[0];
    if (!found) return { kind: 'none', surface };
    const operation = surface.document.paths[found.template][method === 'HEAD' ? 'get' : method.toLowerCase()];
    return operation ? { kind: 'operation', surface, path: found.template, method, operation } : { kind: 'method', surface, path: found.template };
  };
  /**
   * The paths a request may be read as: without one trailing slash (every surface serves `/x/` as `/x`), or
   * without all of them (/api's resolver strips them all; h3's routes take one).
   */
  const readings = (pathname: string) => [...new Set([pathname.replace(/(.)\/$/, '$1'), pathname.replace(/(.)\/+$/, '$1')])];
  return {
    /** Where a request lands, read with at most one trailing slash dropped. */
    match: (pathname: string, method: string) => match(readings(pathname)[0]!, method),
    /** Problems of one answer (empty when it is as documented under some reading of its path). */
    check(request: { method: string; pathname: string }, status: number, contentType: string | undefined, body: Buffer): string[] {
      const problems = readings(request.pathname).map((pathname) => checkAnswer(match(pathname, request.method), request.method, status, contentType, body));
      return problems.find((list) => list.length === 0) ?? problems[0]!;
    },
  };
}

function checkAnswer(where: OperationMatch, method: string, status: number, contentType: string | undefined, body: Buffer): string[] {
  if (where.kind === 'outside') return [];
  // A preflight is answered before routing (204), unless the URL itself cannot be read (400, a documented error body).
  if (method === 'OPTIONS' && status === 204) return body.length === 0 ? [] : ['a preflight answered 204 with a body'];
  if (where.kind !== 'operation' || method === 'OPTIONS') {
    const allowed = where.kind === 'method' && method !== 'OPTIONS' ? [405] : [400, 404, 405];
    if (!allowed.includes(status)) return [`${where.kind === 'method' ? `${where.path} does not document ${method}` : 'no documented path matches'}, yet the answer is ${status} (expected ${allowed.join(' or ')})`];
    return checkErrorBody(where.surface, contentType, body, method);
  }
  const { operation } = where;
  const response = operation.responses[String(status)];
  if (!response) return [`${operation.operationId} does not document status ${status} (it documents ${Object.keys(operation.responses).join(', ')})`];
  const declared = response.content ? Object.keys(response.content) : [];
  if (declared.length === 0 || method === 'HEAD') return body.length === 0 ? [] : [`${operation.operationId} ${status} has no body in the document, yet ${body.length} bytes came`];
  const type = declared.find((candidate) => sameMediaType(candidate, contentType));
  if (!type) return [`${operation.operationId} ${status} is documented as ${declared.join(', ')}, but came as ${contentType}`];
  if (!isJson(type)) return [];
  const pointer = `#/paths/${escapePointer(where.path)}/${method.toLowerCase()}/responses/${status}/content/${escapePointer(type)}/schema`;
  return validateJson(where.surface, pointer, body, `${operation.operationId} ${status}`);
}

function createSurface(name: string, document: Json): Surface {
  const ajv = document.openapi.startsWith('3.1') ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true });
  addFormats(ajv as Ajv);
  ajv.addSchema(document, name);
  // Paths are written from the server's URL: /features's document is served at {base}/features and says /collections.
  const mount = new URL(document.servers?.[0]?.url ?? 'http://localhost').pathname.replace(/\/$/, '');
  const templates = Object.keys(document.paths);
  const paths = templates.map((template) => {
    const absolute = template === '/' ? mount || '/' : `${mount}${template}`;
    return {
      template,
      pattern: new RegExp(`^${absolute.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`),
      literals: absolute.split('/').filter((segment) => segment && !segment.includes('{')).length,
      absolute,
    };
  });
  const errorBodies = new Map<string, ValidateFunction[]>();
  const seen = new Set<string>();
  for (const [template, item] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      for (const [status, response] of Object.entries((operation as Json).responses as Json)) {
        for (const [type, content] of Object.entries(((response as Json).content ?? {}) as Json)) {
          const key = `${type} ${JSON.stringify(content.schema)}`;
          if (Number(status) < 400 || !isJson(type) || seen.has(key)) continue;
          seen.add(key);
          const list = errorBodies.get(essence(type)) ?? [];
          list.push(ajv.compile({ $ref: `${name}#/paths/${escapePointer(template)}/${method}/responses/${status}/content/${escapePointer(type)}/schema` }));
          errorBodies.set(essence(type), list);
        }
      }
    }
  }
  return { name, prefix: commonPrefix(paths.map((path) => path.absolute)), document, paths, errorBodies, compiled: new Map(), ajv: ajv as Ajv };
}

/** The longest whole-segment prefix of the paths: `/api`, `/stac/api`, `/features`. */
function commonPrefix(paths: string[]): string {
  const split = paths.map((path) => path.split('/'));
  const prefix: string[] = [];
  for (let index = 0; split.every((parts) => parts.length > index && parts[index] === split[0]![index]); index++) prefix.push(split[0]![index]!);
  return prefix.join('/');
}

function checkErrorBody(surface: Surface, contentType: string | undefined, body: Buffer, method: string): string[] {
  if (method === 'HEAD') return [];
  const validators = surface.errorBodies.get(essence(contentType ?? ''));
  if (!validators) return [`an error of ${surface.name} came as ${contentType}, which no documented error body uses`];
  const parsed = parseJson(body);
  if (!parsed.ok) return [`an error body of ${surface.name} is not JSON`];
  return validators.some((validate) => validate(parsed.value)) ? [] : [`an error body of ${surface.name} matches none of its documented error schemas: ${body.toString('utf8').slice(0, 300)}`];
}

function validateJson(surface: Surface, pointer: string, body: Buffer, what: string): string[] {
  const parsed = parseJson(body);
  if (!parsed.ok) return [`${what}: the body is not JSON`];
  let validate = surface.compiled.get(pointer);
  if (!validate) surface.compiled.set(pointer, (validate = surface.ajv.compile({ $ref: `${surface.name}${pointer}` })));
  if (validate(parsed.value)) return [];
  return [`${what}: the body does not match the documented schema: ${(validate.errors ?? []).slice(0, 5).map((error) => `${error.instancePath} ${error.message}`).join('; ')}`];
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

const essence = (type: string) => type.split(';')[0]!.trim().toLowerCase();
const isJson = (type: string) => /^application\/(?:[\w.+-]*\+)?json$/.test(essence(type));

/** Whether a response's Content-Type is the declared one; parameters must agree when the declaration has some. */
function sameMediaType(declared: string, actual: string | undefined): boolean {
  if (actual === undefined) return false;
  const normalise = (type: string) => type.toLowerCase().replace(/\s+/g, '');
  return declared.includes(';') ? normalise(declared) === normalise(actual) : essence(declared) === essence(actual);
}

/** A JSON pointer token, percent-encoded for a URI fragment. */
function escapePointer(token: string): string {
  return encodeURIComponent(token.replaceAll('~', '~0').replaceAll('/', '~1'));
}
