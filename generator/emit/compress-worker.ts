import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parentPort } from 'node:worker_threads';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { WriteBatch, WriteResult } from './write-pool.ts';

const made = new Set<string>();

/** Writes a batch of files under its root, with `.br` and `.gz` siblings for files of at least `minBytes`. */
function writeBatch(batch: WriteBatch): WriteResult[] {
  return batch.files.map(({ key, body }) => {
    const path = join(batch.root, key);
    const directory = dirname(path);
    if (!made.has(directory)) {
      mkdirSync(directory, { recursive: true });
      made.add(directory);
    }
    const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    writeFileSync(path, bytes);
    if (bytes.length < batch.minBytes) return { key };
    const br = brotliCompressSync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: batch.brotliQuality,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    });
    const gz = gzipSync(bytes, { level: batch.gzipLevel });
    writeFileSync(`${path}.br`, br);
    writeFileSync(`${path}.gz`, gz);
    return { key, br: br.length, gz: gz.length };
  });
}

parentPort?.on('message', (batch: WriteBatch) => {
  try {
    parentPort?.postMessage({ id: batch.id, results: writeBatch(batch) });
  } catch (error) {
    parentPort?.postMessage({ id: batch.id, error: (error as Error).message });
  }
});
