/**
 * `geoshelf build` (`npm run build`): the build as a command, with its output and exit code. `node generator/cli.ts`
 * still works: it runs `geoshelf build` with the same arguments.
 */
import { runAsGeoshelf } from '../cli/run-as-geoshelf.ts';
import { EXIT } from '../cli/exit-codes.ts';
import { loadConfig, type Config } from '../runtime/config.ts';
import { InputError, formatIssue } from '../schemas/parse.ts';
import { buildCatalog } from './build.ts';
import { createTerminalProgress, type ProgressReporter } from './enrich/progress.ts';
import { BUILD_ERRORS, BuildError, type BuildIssue } from './errors.ts';
import { groupWarnings } from './warnings.ts';

/** What `geoshelf build` is asked for. */
export interface BuildCommandOptions {
  /** Ignore the previous tree and every cache, and write every file. */
  full?: boolean;
  /** Read only the footers of sources in object storage, whatever GEOSHELF_REMOTE_SCAN says. */
  shallow?: boolean;
}

/** Prints every problem of a failed build, then one hint per kind of problem. */
export function printBuildError(error: BuildError, write: (line: string) => void = console.error): void {
  printIssues(error.message, error.issues, write);
}

/** Prints a headline, every issue with its file and line, then one hint per kind of issue. */
export function printIssues(headline: string, issues: BuildIssue[], write: (line: string) => void = console.error): void {
  write(`✖ ${headline}\n`);
  for (const issue of issues) write(`  ${formatIssue(issue)}  [${issue.code}]`);
  write('');
  for (const code of new Set(issues.map((issue) => issue.code))) write(`  ${code}: ${BUILD_ERRORS[code].title}. ${BUILD_ERRORS[code].hint}`);
}

/**
 * The settings of a build or a check from the environment; undefined, with the problem printed, when one is wrong.
 * @example const config = loadCommandConfig({ shallow: true }); if (!config) return EXIT.failed;
 */
export function loadCommandConfig(options: { shallow?: boolean }): Config | undefined {
  try {
    return { ...loadConfig(), ...(options.shallow ? { remoteScan: 'footer' as const } : {}) };
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    console.error(`✖ ${error.message}`);
    return undefined;
  }
}

/** Progress lines and bars for a person at a terminal; nothing in CI or when the output is piped. */
export function describeProgress(config: Config): { log?: (line: string) => void; progress?: ProgressReporter } {
  const quiet = config.ci || !process.stdout.isTTY;
  return quiet ? {} : { log: (line: string) => console.log(`  ${line}`), progress: createTerminalProgress(process.stdout) };
}

/** Builds `dist/` and prints what it did; resolves with the exit code (1 when the build failed). */
export async function runBuild(options: BuildCommandOptions): Promise<number> {
  const config = loadCommandConfig(options);
  if (!config) return EXIT.failed;
  try {
    const result = await buildCatalog({ config, full: options.full ?? false, ...describeProgress(config) });
    for (const warning of groupWarnings(result.warnings)) console.warn(`⚠ ${warning}`);
    // Said even when quiet: in CI it shows whether the cached twins were taken (docs/ci-workflow.yml).
    const twins = result.twins.made + result.twins.current > 0 ? `; PMTiles twins: ${result.twins.made} made, ${result.twins.current} current` : '';
    const what = result.skipped ? 'nothing changed since the last build' : `${result.mode}: ${result.written.length} written, ${result.removed.length} removed`;
    console.log(`✔ ${result.documents} documents in ${config.distDir} (${what}${twins})`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof BuildError) printBuildError(error);
    else if (error instanceof InputError) console.error(`✖ ${error.message}`);
    else console.error(error);
    return EXIT.failed;
  }
}

if (import.meta.main) runAsGeoshelf(['build']);
