import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { CompressSettings } from './compress.ts';
import type { WriteJob, WrittenSizes } from './write-jobs.ts';

/** A batch of jobs for a writer thread. */
export interface WriteBatch extends CompressSettings {
  id: number;
  jobs: WriteJob[];
}

/** What a writer thread answers for a batch: the sizes of each job's siblings, or the error that stopped it. */
export type WriteBatchResult = { id: number; sizes: WrittenSizes[] } | { id: number; error: { message: string; code?: string } };

/** Options of the writer pool. */
export interface WritePoolOptions extends CompressSettings {
  /** Threads; 0 means one per CPU core. */
  threads: number;
}

const BATCH_BYTES = 512 * 1024;

/**
 * Writes files on worker threads, each compressing the bodies of its batch into their `.br` and `.gz` siblings and
 * writing them with the body. A thread waiting on the disk leaves the core to one that compresses, so writing
 * overlaps compression (BENCHMARKS.md, "Writing the tree from the compression threads"). Long-lived for one build;
 * `close()` ends the threads.
 */
export class WritePool {
  readonly #options: WritePoolOptions;
  readonly #workers: Worker[];
  readonly #idle: Worker[] = [];
  readonly #queue: WriteBatch[] = [];
  readonly #pending = new Map<number, { resolve: (sizes: WrittenSizes[]) => void; reject: (error: Error) => void }>();
  #nextId = 0;

  constructor(options: WritePoolOptions) {
    this.#options = options;
    const threads = options.threads > 0 ? options.threads : availableParallelism();
    this.#workers = Array.from({ length: threads }, () => {
      const worker = new Worker(new URL('./write-worker.ts', import.meta.url));
      worker.on('message', (message: WriteBatchResult) => {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if ('error' in message) pending?.reject(Object.assign(new Error(message.error.message), message.error.code ? { code: message.error.code } : {}));
        else pending?.resolve(message.sizes);
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

  /** Splits jobs into batches of about 512 KB of bodies and queues them all; returns one promise per batch, in order. */
  writeInBatches(jobs: WriteJob[]): { jobs: WriteJob[]; sizes: Promise<WrittenSizes[]> }[] {
    const batches: { jobs: WriteJob[]; sizes: Promise<WrittenSizes[]> }[] = [];
    let current: WriteJob[] = [];
    let bytes = 0;
    const flush = () => {
      if (current.length === 0) return;
      const batch = current;
      batches.push({ jobs: batch, sizes: this.#submit(batch) });
      current = [];
      bytes = 0;
    };
    for (const job of jobs) {
      current.push(job);
      bytes += job.body.length * job.paths.length;
      if (bytes >= BATCH_BYTES) flush();
    }
    flush();
    return batches;
  }

  #submit(jobs: WriteJob[]): Promise<WrittenSizes[]> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#queue.push({ id, jobs, brotliQuality: this.#options.brotliQuality, gzipLevel: this.#options.gzipLevel });
      const worker = this.#idle.pop();
      if (worker) this.#dispatch(worker);
    });
  }

  // A batch is copied to its thread only when the thread takes it, so the bodies in flight stay one batch a thread.
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
