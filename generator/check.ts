/**
 * `geoshelf check`: every problem of the records and the data in one pass, without writing `dist/`. The same
 * stages as a build up to rendering (generator/build.ts `loadCatalogModel`), whose facts it caches as a build does,
 * so a check followed by a build reads each data file once.
 */
import type { Config } from '../runtime/config.ts';
import { loadCatalogModel } from './build.ts';
import { BuildError, type BuildIssue } from './errors.ts';
import type { ProgressReporter } from './enrich/progress.ts';

/** What a check found: the problems that would fail a build, and the warnings it would print. */
export interface CheckResult {
  issues: BuildIssue[];
  warnings: string[];
}

/** Checks a catalog's records and data; resolves with what it found rather than throwing it. */
export async function checkCatalog(options: { config: Config; log?: (line: string) => void; progress?: ProgressReporter }): Promise<CheckResult> {
  try {
    const loaded = await loadCatalogModel(options);
    return { issues: [], warnings: loaded.warnings };
  } catch (error) {
    if (error instanceof BuildError) return { issues: error.issues, warnings: error.warnings };
    throw error;
  }
}
