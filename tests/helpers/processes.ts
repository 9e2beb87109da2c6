import { spawn, type ChildProcess } from 'node:child_process';
import { settingsEnvironment, type Config } from '../../runtime/config.ts';
import { ROOT } from './catalog.ts';

/** This process's environment with `config`'s settings and `extra` on top, for a child process. */
export function childEnvironment(config: Config, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...settingsEnvironment(config), ...extra };
}

/** A child process whose output a test reads as it comes. */
export interface WatchedProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output: () => string;
  /** Resolves with the first match of `pattern` in the output (already there or still to come); rejects on exit or timeout. */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
  /** Resolves with the exit code once the process has ended. */
  exitCode: () => Promise<number | null>;
}

/**
 * Runs a Node script of the repository (with the Node running the tests) and collects its output.
 * @example const server = runScript(['server/main.ts', '--no-build'], env); await server.waitFor(/is serving/);
 */
export function runScript(args: string[], env: NodeJS.ProcessEnv): WatchedProcess {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    text += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const ended = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const waitFor = (pattern: RegExp, timeoutMs = 30_000) => new Promise<RegExpMatchArray>((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(text);
      if (!match) return;
      listeners.delete(check);
      clearTimeout(timer);
      resolve(match);
    };
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in the output within ${timeoutMs} ms:\n${text}`)), timeoutMs);
    void ended.then((code) => {
      if (!listeners.has(check)) return;
      listeners.delete(check);
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before printing ${pattern}:\n${text}`));
    });
    listeners.add(check);
    check();
  });
  return { child, output: () => text, waitFor, exitCode: () => ended };
}
