/**
 * Puts a list of objects into the bucket a few at a time, with a progress line: shared by the site publish and the
 * data publish, which differ only in where an object's bytes are read from.
 */
import type { ObjectStore } from './object-store.ts';
import type { PublishObject } from './publish-plan.ts';

/** Objects uploaded at once unless `--concurrency` says otherwise. */
export const DEFAULT_CONCURRENCY = 8;
const PROGRESS_EVERY_MS = 1000;

/** How to upload: where each object's bytes are, how many at once, and where progress goes. */
export interface UploadOptions {
  /** The local file an object's bytes are read from. */
  fileOf: (object: PublishObject) => string;
  concurrency?: number;
  log: (line: string) => void;
}

/** Uploads objects `concurrency` at a time, printing a progress line at most once a second. */
export async function uploadAll(store: ObjectStore, objects: PublishObject[], options: UploadOptions): Promise<void> {
  const total = sumBytes(objects);
  let done = 0;
  let doneBytes = 0;
  let lastReport = performance.now();
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < objects.length && !failed) {
      const object = objects[next++]!;
      await store.put({
        key: object.key, file: options.fileOf(object), bytes: object.bytes,
        contentType: object.contentType, cacheControl: object.cacheControl, metadata: { sha256: object.sha256 },
        ...(object.contentEncoding ? { contentEncoding: object.contentEncoding } : {}),
      }).catch((error: unknown) => {
        // The other workers finish the object they hold and take no more, so the command ends with this error.
        failed = true;
        throw error;
      });
      done++;
      doneBytes += object.bytes;
      if (performance.now() - lastReport >= PROGRESS_EVERY_MS || done === objects.length) {
        lastReport = performance.now();
        options.log(`uploaded ${done} of ${objects.length} objects (${formatBytes(doneBytes)} of ${formatBytes(total)})`);
      }
    }
  };
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
  await Promise.all(Array.from({ length: Math.min(concurrency, objects.length) }, worker));
}

/** Total bytes of a list of objects. */
export function sumBytes(objects: PublishObject[]): number {
  return objects.reduce((sum, object) => sum + object.bytes, 0);
}

/** Bytes in B, kB or MB, for progress lines. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  return bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`;
}
