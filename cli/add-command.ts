/**
 * `geoshelf add PATH…`: records for data files in the data folder or in object storage (generator/scaffold/add.ts). The collection comes
 * from `--collection`, or is asked for at a terminal.
 */
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { failUsage, type Finish } from './command-line.ts';
import { EXIT } from './exit-codes.ts';

/** Adds `add` to the program. */
export function defineAddCommand(program: Command, finish: Finish): void {
  program.command('add')
    .summary('write catalog records for data files in the data folder or in object storage')
    .description(
      'Reads each data file under the PATHs (files or folders inside GEOSHELF_DATA_DIR: GeoParquet, GeoJSON, shapefiles, ' +
      'GeoPackages, File Geodatabases, PMTiles) that no source names yet, or in object storage (s3://bucket/prefix, listed ' +
      'with the AWS variables; or the https:// URL of one file), and writes a dataset record for it in ' +
      'GEOSHELF_CATALOG_DIR: its name from the file name, one file record per layer, every column listed with a TODO ' +
      'description to write, and one source. Formats, a storage location for the data folder or the bucket, and the collection are ' +
      'added when the catalog lacks them. A record file that exists is never written, so running it again adds only ' +
      'what is new. Then edit the TODOs and run geoshelf build.',
    )
    .argument('<paths...>', 'data files or folders inside the data folder, s3://bucket/prefix keys, or https:// URLs of files')
    .option('--collection <slug>', 'the collection the new datasets go in (asked for at a terminal when left out)')
    .option('--version <version>', 'the version of every new source (default: the date each file was last modified)')
    .option('--convert', 'write GeoParquet beside each file that is not (geoshelf convert), as its GeoParquet source; CSV files are cataloged this way')
    .action(async (paths: string[], options: { collection?: string; version?: string; convert?: boolean }, command: Command) => {
      const collection = options.collection ?? (process.stdin.isTTY && process.stdout.isTTY ? await ask('Collection (a slug, e.g. my-data): ') : undefined);
      if (!collection) failUsage(command, 'name the collection with --collection SLUG');
      if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(collection)) failUsage(command, `"${collection}" is not a slug: lower-case letters and digits separated by single hyphens`);
      finish(await runAdd(paths, { collection, convert: options.convert ?? false, ...(options.version ? { version: options.version } : {}) }));
    });
}

async function ask(question: string): Promise<string> {
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await prompt.question(question)).trim();
  } finally {
    prompt.close();
  }
}

/** Writes the records and prints what it did; resolves with the exit code. */
async function runAdd(paths: string[], options: { collection: string; version?: string; convert: boolean }): Promise<number> {
  const [{ loadCommandConfig }, { addRecords }, { AddError }] = await Promise.all([import('../generator/cli.ts'), import('../generator/scaffold/add.ts'), import('../generator/scaffold/add-outcome.ts')]);
  const config = loadCommandConfig({});
  if (!config) return EXIT.failed;
  try {
    const result = await addRecords({ config, paths, ...options, log: (line) => console.log(`  ${line}`) });
    for (const { path, reason } of result.skipped) console.log(`- ${path}: ${reason}`);
    for (const path of result.written) console.log(`+ ${path}`);
    console.log(result.written.length === 0 ? '✔ nothing new to add' : `✔ wrote ${result.written.length} record file${result.written.length === 1 ? '' : 's'} in ${config.catalogDir}: describe the TODOs, then run geoshelf build`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof AddError)) throw error;
    console.error(`✖ ${error.message}`);
    return EXIT.failed;
  }
}
