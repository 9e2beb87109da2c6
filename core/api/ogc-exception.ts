/**
 * The exception document of the OGC API family, `{code, description}`, which both STAC API (/stac/api) and
 * OGC API - Features (/features) answer for every failure, in one vocabulary for both.
 * Browser-safe: the server writes the document (server/errors.ts `mapOgcError`), core/ only names the failure.
 */
import type { OgcException } from '../../schemas/ogc.ts';

/**
 * The codes of an API's own failures, by status: one vocabulary for STAC API and /features, in CamelCase as the
 * STAC API specification's examples spell them. A failure of the query engine keeps its QUERY_ERRORS code
 * (`query_timeout`, `query_service_busy`), on both APIs, so a client can tell the engine's state from a request's fault.
 */
export const OGC_EXCEPTION_CODES = {
  400: 'InvalidParameterValue',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  413: 'PayloadTooLarge',
  500: 'ServerError',
  503: 'ServiceUnavailable',
} as const;

/** An API that answers OGC exception documents: they differ only in what their logs say. */
export type OgcApi = 'stac' | 'features';
/** A status the vocabulary has a code for. */
export type OgcStatus = keyof typeof OGC_EXCEPTION_CODES;

/**
 * A request an OGC API cannot answer: the status, the exception document, and the headers of the answer (Allow on
 * a 405, Retry-After on a 503).
 * @example throw ogcFailure(404, 'There is no collection "x"; /features/collections lists them.')
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

/** A failure of an API's own, with the code the vocabulary gives the status. */
export function ogcFailure(status: OgcStatus, description: string, headers?: Record<string, string>): OgcApiFailure {
  return new OgcApiFailure(status, OGC_EXCEPTION_CODES[status], description, headers);
}

/**
 * The failure of a request the HTTP layer refused before any route of the API ran (a URL that is not valid
 * percent-encoding): its status, and the code of the status, or of its class when the vocabulary has none.
 */
export function refusedRequestFailure(status: number, description: string): OgcApiFailure {
  const codes: Record<number, string> = OGC_EXCEPTION_CODES;
  return new OgcApiFailure(status, codes[status] ?? (status < 500 ? OGC_EXCEPTION_CODES[400] : OGC_EXCEPTION_CODES[500]), description);
}
