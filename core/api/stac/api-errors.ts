/**
 * The errors of the STAC API: OGC exception documents `{code, description}` in the vocabulary /features answers
 * too (core/api/ogc-exception.ts). The server answers every failure of a /stac/api route through it, so no other
 * shape leaks out.
 */
import { OGC_EXCEPTION_CODES, OgcApiFailure, type OgcStatus } from '../ogc-exception.ts';

/** A status the STAC API answers with an exception document. */
export type StacErrorStatus = OgcStatus;

/**
 * A request the STAC API cannot answer, with the status and what to change.
 * @example throw new StacApiFailure(404, 'There is no Collection "x"; GET /stac/api/collections lists them.')
 */
export class StacApiFailure extends OgcApiFailure {
  declare readonly status: StacErrorStatus;

  constructor(status: StacErrorStatus, description: string, headers: Record<string, string> = {}) {
    super(status, OGC_EXCEPTION_CODES[status], description, headers);
    this.name = 'StacApiFailure';
  }
}
