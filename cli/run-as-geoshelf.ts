/**
 * Runs `geoshelf <command> …` with this process's arguments, for the scripts that were entries before `geoshelf`
 * (`node generator/cli.ts`, `node server/main.ts`, `node deploy/publish.ts`, …), so they parse, answer `--help`
 * and exit as the one entry does.
 *
 * It must not be awaited at the top level: the command imports the calling script again (geoshelf's commands import
 * their runners when they run), and that import waits until the script has finished loading, which a top-level
 * await would hold up for ever.
 *
 * @example if (import.meta.main) runAsGeoshelf(['build']); // node generator/cli.ts --full → geoshelf build --full
 */
export function runAsGeoshelf(command: string[]): void {
  void import('./geoshelf.ts').then(async ({ runGeoshelf }) => {
    process.exitCode = await runGeoshelf([...command, ...process.argv.slice(2)]);
  });
}
