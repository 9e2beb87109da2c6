import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { SandboxSettings } from './protocol.ts';

const WORKER_PATH = new URL('./worker.ts', import.meta.url);

/**
 * Forks one worker process of the pool (query/worker.ts), talking over IPC only; `limits` are those of the
 * sandboxes it makes ahead from its start.
 */
export function forkWorker(limits: Pick<SandboxSettings, 'threads' | 'memoryLimitMb'> | undefined): ChildProcess {
  return fork(WORKER_PATH, [], {
    serialization: 'advanced',
    ...(limits ? { env: { ...process.env, GEOSHELF_SANDBOX_LIMITS: `${limits.threads}/${limits.memoryLimitMb}` } } : {}),
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    execArgv: ['--max-old-space-size=512'],
  });
}

/** Resident memory of a process in MiB, from /proc (Linux); 0 where it cannot be read. */
export function readResidentMegabytes(pid: number): number {
  try {
    const kilobytes = Number(/VmRSS:\s*(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    return kilobytes / 1024;
  } catch {
    return 0;
  }
}
