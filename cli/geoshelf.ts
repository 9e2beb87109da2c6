#!/usr/bin/env node
/**
 * `geoshelf <command>`: the one command-line entry (the package's `bin`; the npm scripts call it). Each command has
 * `--help`; the exit code means the same for all of them (cli/exit-codes.ts): 0 done, 1 failed, 2 a wrong command
 * line. Output carries no colours, and under CI or when piped no progress either.
 *
 * It runs from a clone of the repository: Node strips the types of .ts files, but not under node_modules.
 *
 * @example npx geoshelf build --full
 * @example npx geoshelf publish s3://geoshelf-site/v1 --dry-run
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { defineAddCommand } from './add-command.ts';
import { defineCatalogCommands } from './catalog-commands.ts';
import { defineConvertCommand } from './convert-command.ts';
import type { Finish } from './command-line.ts';
import { EXIT } from './exit-codes.ts';
import { definePublishCommand } from './publish-command.ts';
import { defineServeCommands } from './serve-commands.ts';

const PACKAGE = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

const EPILOGUE = `
Every setting is an environment variable (README "Settings"); CI=1 keeps the output plain.
Exit codes: 0 done, 1 the command failed (problems in the records, a failed publish), 2 a wrong command line.`;

/**
 * The program with every command. Commander's own errors (an unknown command or option, a missing or bad value)
 * throw a `CommanderError` rather than exit, so that `runGeoshelf` gives them exit code 2; commands created after
 * these settings inherit them.
 */
export function createGeoshelfProgram(finish: Finish): Command {
  const program = new Command('geoshelf')
    .description('A static-first catalog of geospatial datasets: build the static API from catalog records, check them, serve, and publish.')
    .version(PACKAGE.version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print this help')
    .helpCommand('help [command]', 'print the help of a command')
    .exitOverride()
    .showSuggestionAfterError()
    // Options after a command are that command's: `geoshelf add … --version 2` is the sources' version, not geoshelf's.
    .enablePositionalOptions()
    .showHelpAfterError('(add --help for the commands and their options)')
    .addHelpText('after', EPILOGUE);
  defineCatalogCommands(program, finish);
  defineAddCommand(program, finish);
  defineServeCommands(program, finish);
  definePublishCommand(program, finish);
  defineConvertCommand(program, finish);
  for (const command of program.commands) command.showHelpAfterError(`(geoshelf ${command.name()} --help lists its options)`);
  return program;
}

/**
 * Runs a geoshelf command line (without `node` and the script); resolves with its exit code. A command that serves
 * resolves with 0 once it listens, and the process goes on until a signal stops it.
 * @example process.exitCode = await runGeoshelf(['build', '--full']);
 */
export async function runGeoshelf(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = createGeoshelfProgram((result) => {
    code = result;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    // --help and --version end parsing through the same path, with exit code 0.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    console.error(error);
    return EXIT.failed;
  }
  return code;
}

if (import.meta.main) process.exitCode = await runGeoshelf(process.argv.slice(2));
