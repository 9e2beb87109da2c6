/**
 * `geoshelf build` and `geoshelf check`: the catalog's records and data, turned into `dist/` or only checked. The
 * generator is imported when a command runs, so that `--help` and a wrong command line answer at once.
 */
import type { Command } from 'commander';
import { EXIT } from './exit-codes.ts';
import type { Finish } from './command-line.ts';

const SHALLOW_HELP = 'read only the footers of files in object storage (GEOSHELF_REMOTE_SCAN=footer for this run)';

/** Adds `build` and `check` to the program. */
export function defineCatalogCommands(program: Command, finish: Finish): void {
  program.command('build')
    .summary('build dist/: the static API, the web pages and the search index')
    .description(
      'Builds the static tree in GEOSHELF_DIST_DIR from the records in GEOSHELF_CATALOG_DIR and the data files in ' +
      'GEOSHELF_DATA_DIR: every read route of the API, its prebuilt slices, the web pages and the search index. The ' +
      'build is incremental: it writes only the files whose inputs changed. When the records or data have problems it ' +
      'prints every one with its file and line, writes nothing and exits 1.',
    )
    .option('--full', 'ignore the previous tree and every cache, and write every file')
    .option('--shallow', SHALLOW_HELP)
    .action(async (options: { full?: boolean; shallow?: boolean }) => {
      const { runBuild } = await import('../generator/cli.ts');
      finish(await runBuild(options));
    });

  program.command('check')
    .summary('check the records and data as a build would, without writing dist/')
    .description(
      'Reads every record and data file as a build does and prints every problem with its file and line, then one ' +
      'hint per kind of problem, and exits 1 if there is any; warnings are printed with ⚠, one line per kind, and do not fail it. It ' +
      'writes nothing to GEOSHELF_DIST_DIR. Like a build, it keeps the facts it read in GEOSHELF_CACHE_DIR and makes ' +
      'the PMTiles twins that are missing or stale, so a build after it reads nothing again.',
    )
    .option('--shallow', SHALLOW_HELP)
    .action(async (options: { shallow?: boolean }) => finish(await runCheck(options)));
}

/** Checks the catalog and prints what it found; resolves with the exit code (1 when there are problems). */
async function runCheck(options: { shallow?: boolean }): Promise<number> {
  const [{ describeProgress, loadCommandConfig, printIssues }, { checkCatalog }, { groupWarnings }] = await Promise.all([import('../generator/cli.ts'), import('../generator/check.ts'), import('../generator/warnings.ts')]);
  const config = loadCommandConfig(options);
  if (!config) return EXIT.failed;
  const result = await checkCatalog({ config, ...describeProgress(config) });
  for (const warning of groupWarnings(result.warnings)) console.warn(`⚠ ${warning}`);
  const count = result.issues.length;
  if (count > 0) {
    printIssues(`The check found ${count} problem${count === 1 ? '' : 's'}.`, result.issues);
    return EXIT.failed;
  }
  console.log(`✔ no problems in ${config.catalogDir} and the data it names`);
  return EXIT.ok;
}
