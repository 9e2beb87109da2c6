import { loadConfig } from '../runtime/config.ts';
import { InputError, formatIssue } from '../schemas/parse.ts';
import { buildCatalog } from './build.ts';
import { createTerminalProgress } from './enrich/progress.ts';
import { BUILD_ERRORS, BuildError } from './errors.ts';

/** Prints every problem of a failed build, then one hint per kind of problem. */
export function printBuildError(error: BuildError, write: (line: string) => void = console.error): void {
  write(`✖ ${error.message}\n`);
  for (const issue of error.issues) write(`  ${formatIssue(issue)}  [${issue.code}]`);
  write('');
  for (const code of new Set(error.issues.map((issue) => issue.code))) write(`  ${code}: ${BUILD_ERRORS[code].title}. ${BUILD_ERRORS[code].hint}`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== '--full' && arg !== '--shallow');
  if (unknown.length > 0) {
    console.error(`Unknown option ${unknown.join(' ')}. Usage: npm run build [-- --full] [--shallow]`);
    process.exit(2);
  }
  try {
    // --shallow reads only the footers of sources in object storage, whatever GEOSHELF_REMOTE_SCAN says.
    const config = { ...loadConfig(), ...(args.includes('--shallow') ? { remoteScan: 'footer' as const } : {}) };
    const quiet = config.ci || !process.stdout.isTTY;
    const result = await buildCatalog({
      config,
      full: args.includes('--full'),
      ...(quiet ? {} : { log: (line: string) => console.log(`  ${line}`), progress: createTerminalProgress(process.stdout) }),
    });
    for (const warning of result.warnings) console.warn(`⚠ ${warning}`);
    // Said even when quiet: in CI it shows whether the cached twins were taken (docs/ci-workflow.yml).
    const twins = result.twins.made + result.twins.current > 0 ? `; PMTiles twins: ${result.twins.made} made, ${result.twins.current} current` : '';
    console.log(`✔ ${result.documents} documents in ${config.distDir} (${result.mode}: ${result.written.length} written, ${result.removed.length} removed${twins})`);
  } catch (error) {
    if (error instanceof BuildError) printBuildError(error);
    else if (error instanceof InputError) console.error(`✖ ${error.message}`);
    else console.error(error);
    process.exit(1);
  }
}

if (import.meta.main) await main();
