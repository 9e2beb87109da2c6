import { parentPort } from 'node:worker_threads';
import { createWriter } from './write-jobs.ts';
import type { WriteBatch, WriteBatchResult } from './write-pool.ts';

// Each thread keeps the folders it has made for the whole build.
const write = createWriter();

parentPort?.on('message', (batch: WriteBatch) => {
  let result: WriteBatchResult;
  try {
    result = { id: batch.id, sizes: batch.jobs.map((job) => write(job, batch)) };
  } catch (error) {
    const { message, code } = error as NodeJS.ErrnoException;
    result = { id: batch.id, error: { message, ...(code ? { code } : {}) } };
  }
  parentPort?.postMessage(result);
});
