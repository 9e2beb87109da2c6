/** The outcome of `geoshelf add` (add.ts): what it wrote and left alone, or why it could not run at all. */

/** What `add` did: the record files it wrote (relative to the catalog folder), and the data it left alone and why. */
export interface AddResult {
  written: string[];
  skipped: { path: string; reason: string }[];
}

/** Why `add` cannot run at all, in one line. */
export class AddError extends Error {
  override name = 'AddError';
}
