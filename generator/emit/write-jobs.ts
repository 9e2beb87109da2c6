import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { compressBody, type CompressSettings } from './compress.ts';

/** One body to write at one or more paths (files with the same bytes), with `.br` and `.gz` siblings if `compress`. */
export interface WriteJob {
  body: Uint8Array;
  paths: string[];
  compress: boolean;
}

/** The sizes of a job's siblings, or null for a job without them. */
export type WrittenSizes = { br: number; gz: number } | null;

/**
 * A writer of jobs that makes each folder once (`mkdirSync` is a system call even when the folder exists). The body
 * is compressed once however many paths share it.
 */
export function createWriter(): (job: WriteJob, settings: CompressSettings) => WrittenSizes {
  const made = new Set<string>();
  const put = (path: string, bytes: Uint8Array) => {
    const folder = dirname(path);
    if (!made.has(folder)) {
      mkdirSync(folder, { recursive: true });
      made.add(folder);
    }
    writeFileSync(path, bytes);
  };
  return (job, settings) => {
    const siblings = job.compress ? compressBody(job.body, settings) : undefined;
    for (const path of job.paths) {
      put(path, job.body);
      if (siblings) {
        put(`${path}.br`, siblings.br);
        put(`${path}.gz`, siblings.gz);
      }
    }
    return siblings ? { br: siblings.br.length, gz: siblings.gz.length } : null;
  };
}
