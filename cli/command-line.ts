/** What every geoshelf command shares: how it reports a bad command line, and how it reads a number option. */
import { InvalidArgumentError, type Command } from 'commander';
import { EXIT } from './exit-codes.ts';

/** Receives a command's exit code once its action has run. */
export type Finish = (code: number) => void;

/**
 * Says what is wrong with the command line, in commander's words, and ends the command with exit code 2.
 * @example if (options.delete && !options.data) failUsage(command, '--delete goes with --data');
 */
export function failUsage(command: Command, message: string): never {
  command.error(`error: ${message}`, { exitCode: EXIT.usage, code: 'geoshelf.usage' });
}

/**
 * An option parser for a whole number from `min` to `max`; commander reports anything else as a usage error.
 * @example command.option('--concurrency <n>', 'objects uploaded at once', parseWholeNumber(1, 64), 8)
 */
export function parseWholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (value.trim() === '' || !Number.isInteger(number) || number < min || number > max) throw new InvalidArgumentError(`It must be a whole number from ${min} to ${max}.`);
    return number;
  };
}
