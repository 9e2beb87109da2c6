/**
 * What a geoshelf command's exit status means, the same for every command (README "Exit codes"): scripts and CI
 * tell a failed build or publish from a mistyped command line.
 */
export const EXIT = {
  /** The command did what it was asked. */
  ok: 0,
  /** The command ran and failed: problems in the records or data, a publish that could not finish, a server that could not start. */
  failed: 1,
  /** The command line was wrong: an unknown command or option, a missing or bad value. Nothing was done. */
  usage: 2,
} as const;
