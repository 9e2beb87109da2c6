import { parentPort } from 'node:worker_threads';
import { compressBody } from './compress.ts';
import type { CompressBatch } from './compress-pool.ts';

parentPort?.on('message', (batch: CompressBatch) => {
  try {
    const results = batch.bodies.map((body) => compressBody(body, batch));
    parentPort?.postMessage({ id: batch.id, results }, results.flatMap(({ br, gz }) => [br.buffer, gz.buffer]) as ArrayBuffer[]);
  } catch (error) {
    parentPort?.postMessage({ id: batch.id, error: (error as Error).message });
  }
});
