/**
 * The exception document of the OGC API family, `{code, description}`, which both STAC API (/stac/api) and
 * OGC API - Features (/features) answer for every failure: the one error vocabulary of each, in one place.
 * Browser-safe: the server writes the document (server/errors.ts `mapOgcError`), core/ only names the failure.
 */
import type { OgcException } from '../../schemas/ogc.ts';

/**
 * Codes of each API's own failures, by status. STAC API spells them in CamelCase, as its specification's examples
 * do; /features in snake_case, as the query engine's QUERY_ERRORS, whose failures it passes on with their own code.
 */
export const OGC_EXCEPTION_CODES = {
  stac: {
    400: 'InvalidParameterValue',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    413: 'PayloadTooLarge',
    500: 'ServerError',
    503: 'ServiceUnavailable',
  },
  features: {
    400: 'invalid_parameter',
    404: 'not_found',
    405: 'method_not_allowed',
    500: 'internal_error',
  },
} as const;

/** An API that answers OGC exception documents. */
export type OgcApi = keyof typeof OGC_EXCEPTION_CODES;
/** A status an API has a code of its own for. */
export type OgcStatus<A extends OgcApi> = keyof (typeof OGC_EXCEPTION_CODES)[A];

/**
 * A request an OGC API cannot answer: the status, the exception document, and the headers of the answer (Allow on
 * a 405, Retry-After on a 503).
 * @example throw ogcFailure('features', 404, 'There is no collection "x"; /features/collections lists them.')
 */
export class OgcApiFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, description: string, headers: Record<string, string> = {}) {
    super(description);
    this.name = 'OgcApiFailure';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }

  /** The exception document. */
  get body(): OgcException {
    return { code: this.code, description: this.message };
  }
}

/** A failure of an API's own, with the code its vocabulary gives the status. */
export function ogcFailure<A extends OgcApi>(api: A, status: OgcStatus<A>, description: string, headers?: Record<string, string>): OgcApiFailure {
  const codes: Record<number, string> = OGC_EXCEPTION_CODES[api];
  return new OgcApiFailure(Number(status), codes[Number(status)]!, description, headers);
}

/**
 * The failure of a request the HTTP layer refused before any route of the API ran (a URL that is not valid
 * percent-encoding). STAC API answers a status it has no code for as a 500; /features keeps the status and picks
 * the code of its class.
 */
export function refusedRequestFailure(api: OgcApi, status: number, description: string): OgcApiFailure {
  const codes: Record<number, string> = OGC_EXCEPTION_CODES[api];
  if (api === 'stac') return Object.hasOwn(codes, status) ? new OgcApiFailure(status, codes[status]!, description) : ogcFailure(api, 500, description);
  return new OgcApiFailure(status, codes[status] ?? (status < 500 ? codes[400]! : codes[500]!), description);
}
