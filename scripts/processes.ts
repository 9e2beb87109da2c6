/** Child-process helpers of the scripts that run several processes in one terminal (`npm run fleet`, `npm run cdn`). */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { isProcessAlive } from '../runtime/process-alive.ts';

const START_TIMEOUT_MS = 60_000;

/** What waitForAnswer watches and accepts. */
export interface WaitOptions {
  /** Give up as soon as this process exits. */
  child?: ChildProcess;
  /** Whether a response counts; by default a 200. */
  accept?: (response: Response) => boolean;
  timeoutMs?: number;
}

/**
 * Polls `url` until it answers as `accept` wants (200 by default), the process exits, or the time runs out.
 * @example await waitForAnswer('http://127.0.0.1:8080/api/health', 'nginx', { child: nginx });
 */
export async function waitForAnswer(url: string, what: string, options: WaitOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? START_TIMEOUT_MS;
  const accept = options.accept ?? ((response: Response) => response.status === 200);
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const { exitCode, signalCode } = options.child ?? {};
    if (exitCode != null || signalCode != null) throw new Error(`${what} exited (${signalCode ?? `code ${exitCode}`}) before answering`);
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
    await response?.body?.cancel();
    if (response && accept(response)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not answer ${url} within ${timeoutMs} ms`);
}

/** Prints a child's output lines prefixed with its name, so the terminal reads as one log. */
export function prefixOutput(child: ChildProcess, name: string): void {
  for (const [stream, write] of [[child.stdout, console.log], [child.stderr, console.error]] as const) {
    if (stream) createInterface({ input: stream }).on('line', (line) => write(`[${name}] ${line}`));
  }
}

/** Resolves with a process's exit code (or 1 when a signal ended it). */
export function exited(child: ChildProcess): Promise<number> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? 1);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

/**
 * Calls `stop` once this process's parent is gone. `kill <pid of npm>` makes npm pass SIGTERM to its shell, and
 * Debian's sh dies without passing it on, leaving a script run by `npm run` to init with its children still up.
 * The parent being gone is the sign (`process.ppid` keeps the value it had at start).
 */
export function stopWhenOrphaned(stop: () => void): void {
  const parent = process.ppid;
  setInterval(() => isProcessAlive(parent) || stop(), 1000).unref();
}
