/**
 * The errors of the STAC API: the `exception` document of STAC API and OGC API - Features, `{code, description}`.
 * The server renders every failure of a /stac/api route through `StacApiFailure`, so no other shape leaks out.
 */

/** Codes of the exception document, by status. */
export const STAC_ERROR_CODES = {
  400: 'InvalidParameterValue',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  413: 'PayloadTooLarge',
  500: 'ServerError',
  503: 'ServiceUnavailable',
} as const;

/** A status the STAC API answers with an exception document. */
export type StacErrorStatus = keyof typeof STAC_ERROR_CODES;

/**
 * A request the STAC API cannot answer, with the status and what to change.
 * @example throw new StacApiFailure(404, 'There is no Collection "x"; GET /stac/api/collections lists them.')
 */
export class StacApiFailure extends Error {
  readonly status: StacErrorStatus;
  readonly code: string;
  /** Headers of the answer, such as Allow on a 405. */
  readonly headers: Record<string, string>;

  constructor(status: StacErrorStatus, description: string, headers: Record<string, string> = {}) {
    super(description);
    this.name = 'StacApiFailure';
    this.status = status;
    this.code = STAC_ERROR_CODES[status];
    this.headers = headers;
  }

  /** The exception document. */
  get body(): { code: string; description: string } {
    return { code: this.code, description: this.message };
  }
}
