/**
 * `geoshelf publish`: the built tree, or with --data the data folder, into an S3-compatible bucket. The publisher
 * and its S3 client are imported when the command runs, so that `--help` and a wrong command line answer at once.
 */
import type { Command } from 'commander';
import { DEFAULT_CONCURRENCY, formatBytes } from '../deploy/upload.ts';
import { failUsage, parseWholeNumber, type Finish } from './command-line.ts';
import { EXIT } from './exit-codes.ts';

/** The options of `geoshelf publish` as commander reads them. */
interface PublishFlags {
  data?: boolean;
  delete?: boolean;
  dryRun?: boolean;
  invalidations?: string;
  all?: boolean;
  concurrency: number;
}

/** Adds `publish` to the program. */
export function definePublishCommand(program: Command, finish: Finish): void {
  program.command('publish')
    .summary('put the built tree (or with --data the data folder) into an S3-compatible bucket')
    .description(
      'Publishes the built tree (GEOSHELF_DIST_DIR) to an S3-compatible bucket, uploading only what changed since ' +
      'the manifest.json already there; with the default GEOSHELF_STORAGE_BASE_URL, the data files go under data/. ' +
      'With --data, publishes the data folder (GEOSHELF_DATA_DIR) instead, for a storage location with backend_type ' +
      's3: each file under PREFIX/ at its path in the folder (names beginning with a dot are skipped), uploading only ' +
      'what changed since the data manifest already there. Exits 1 when the publish fails, saying why in one line.',
    )
    .argument('<target>', 's3://BUCKET[/PREFIX]')
    .option('--data', 'publish the data folder instead of the built tree')
    .option('--delete', 'with --data: delete the objects of files the folder no longer has (without it they stay)')
    .option('--dry-run', 'print what would be uploaded, deleted and purged; change nothing')
    .option('--invalidations <file>', 'write the URL paths a CDN must purge, as a JSON array (not with --data)')
    .option('--all', 'upload every object, changed or not')
    .option('--concurrency <n>', 'objects uploaded at once', parseWholeNumber(1, 64), DEFAULT_CONCURRENCY)
    .addHelpText('after', [
      '',
      'Credentials and endpoint: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION (default us-east-1),',
      'AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (a custom endpoint uses path-style addressing).',
    ].join('\n'))
    .action(async (target: string, flags: PublishFlags, command: Command) => {
      if (flags.delete && !flags.data) failUsage(command, '--delete goes with --data (a site publish always deletes what the new tree no longer has)');
      // The URL of a data object is the storage location's base_url and the key, which only the catalog knows.
      if (flags.data && flags.invalidations) failUsage(command, '--invalidations goes with the site publish, not with --data');
      finish(await runPublish(target, flags));
    });
}

/** Publishes and prints a one-line summary; resolves with the exit code (1 with a one-line reason when it failed). */
async function runPublish(target: string, flags: PublishFlags): Promise<number> {
  try {
    const [{ loadConfig }, { publish }, { publishData }] = await Promise.all([import('../runtime/config.ts'), import('../deploy/publish.ts'), import('../deploy/publish-data.ts')]);
    const config = loadConfig();
    const common = { dataDir: config.dataDir, cacheDir: config.cacheDir, cacheMaxAge: config.cacheMaxAge, target, concurrency: flags.concurrency, dryRun: flags.dryRun ?? false, all: flags.all ?? false };
    const [would, did] = common.dryRun ? ['would upload', 'would delete'] : ['uploaded', 'deleted'];
    if (flags.data) {
      const summary = await publishData({ ...common, delete: flags.delete ?? false });
      console.log(`${summary.dryRun ? 'Dry run: ' : ''}${would} ${summary.uploaded} objects (${formatBytes(summary.uploadedBytes)}), ${did} ${summary.deleted}, ${summary.unchanged} unchanged, ${summary.kept} kept (no longer in the folder), in ${summary.seconds.toFixed(1)} s`);
      return EXIT.ok;
    }
    const summary = await publish({ ...common, distDir: config.distDir, ...(flags.invalidations ? { invalidations: flags.invalidations } : {}) });
    console.log(`${summary.dryRun ? 'Dry run: ' : ''}${would} ${summary.uploaded} objects (${formatBytes(summary.uploadedBytes)}), ${did} ${summary.deleted}, ${summary.unchanged} unchanged, ${summary.invalidations.length} URLs to purge, in ${summary.seconds.toFixed(1)} s`);
    return EXIT.ok;
  } catch (error) {
    // A PublishError is already one line without secrets; anything else is cut to its message.
    console.error(`publish: ${(error as Error)?.message ?? String(error)}`);
    return EXIT.failed;
  }
}
