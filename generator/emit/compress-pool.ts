import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { CompressResult, CompressSettings } from './compress.ts';

/** A batch of bodies for a compression thread. */
export interface CompressBatch extends CompressSettings {
  id: number;
  bodies: Uint8Array[];
}

/** Options of the compression pool. */
export interface CompressPoolOptions extends CompressSettings {
  /** Threads; 0 means one per CPU core. */
  threads: number;
}

const BATCH_BYTES = 512 * 1024;

/**
 * Compresses bodies on worker threads, so the main thread can write files while the other cores compress.
 * Long-lived for one build; `close()` ends the threads.
 */
export class CompressPool {
  readonly #options: CompressPoolOptions;
  readonly #workers: Worker[];
  readonly #idle: Worker[] = [];
  readonly #queue: CompressBatch[] = [];
  readonly #pending = new Map<number, { resolve: (results: CompressResult[]) => void; reject: (error: Error) => void }>();
  #nextId = 0;

  constructor(options: CompressPoolOptions) {
    this.#options = options;
    const threads = options.threads > 0 ? options.threads : availableParallelism();
    this.#workers = Array.from({ length: threads }, () => {
      const worker = new Worker(new URL('./compress-worker.ts', import.meta.url));
      worker.on('message', (message: { id: number; results?: CompressResult[]; error?: string }) => {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (message.error !== undefined) pending?.reject(new Error(message.error));
        else pending?.resolve(message.results ?? []);
        this.#dispatch(worker);
      });
      worker.on('error', (error) => {
        for (const pending of this.#pending.values()) pending.reject(error);
        this.#pending.clear();
      });
      this.#idle.push(worker);
      return worker;
    });
  }

  /** Splits bodies into batches and queues them all; returns one promise per batch, in order. */
  compressInBatches<T extends { body: Uint8Array }>(items: T[]): { items: T[]; results: Promise<CompressResult[]> }[] {
    const batches: { items: T[]; results: Promise<CompressResult[]> }[] = [];
    let current: T[] = [];
    let bytes = 0;
    const flush = () => {
      if (current.length === 0) return;
      const batch = current;
      batches.push({ items: batch, results: this.#submit(batch.map((item) => item.body)) });
      current = [];
      bytes = 0;
    };
    for (const item of items) {
      current.push(item);
      bytes += item.body.length;
      if (bytes >= BATCH_BYTES) flush();
    }
    flush();
    return batches;
  }

  #submit(bodies: Uint8Array[]): Promise<CompressResult[]> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#queue.push({ id, bodies, brotliQuality: this.#options.brotliQuality, gzipLevel: this.#options.gzipLevel });
      const worker = this.#idle.pop();
      if (worker) this.#dispatch(worker);
    });
  }

  #dispatch(worker: Worker): void {
    const batch = this.#queue.shift();
    if (batch) worker.postMessage(batch);
    else this.#idle.push(worker);
  }

  /** Ends the worker threads. */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.terminate()));
  }
}
