import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** A batch of files for a writer thread. */
export interface WriteBatch {
  id: number;
  root: string;
  files: { key: string; body: Uint8Array }[];
  minBytes: number;
  brotliQuality: number;
  gzipLevel: number;
}

/** Compressed sizes of a written file; absent when the file was too small to compress. */
export interface WriteResult {
  key: string;
  br?: number;
  gz?: number;
}

/** Options of the writer pool. */
export interface WritePoolOptions {
  threads: number;
  minBytes: number;
  brotliQuality: number;
  gzipLevel: number;
}

const BATCH_BYTES = 256 * 1024;

/**
 * Writes files and their compressed siblings from worker threads, so compression and file-system calls use every
 * core. Long-lived for one build; `close()` ends the threads.
 */
export class WritePool {
  readonly #workers: Worker[];
  readonly #options: WritePoolOptions;
  readonly #pending = new Map<number, { resolve: (results: WriteResult[]) => void; reject: (error: Error) => void }>();
  readonly #idle: Worker[] = [];
  readonly #queue: WriteBatch[] = [];
  #nextId = 0;

  constructor(options: WritePoolOptions) {
    this.#options = options;
    const threads = options.threads > 0 ? options.threads : availableParallelism();
    this.#workers = Array.from({ length: threads }, () => {
      const worker = new Worker(new URL('./compress-worker.ts', import.meta.url));
      worker.on('message', (message: { id: number; results?: WriteResult[]; error?: string }) => {
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

  /** Writes every file under `root`; resolves to compressed sizes by key. */
  async writeAll(root: string, files: { key: string; body: Buffer }[]): Promise<Map<string, WriteResult>> {
    const batches: Promise<WriteResult[]>[] = [];
    let current: WriteBatch['files'] = [];
    let bytes = 0;
    const flush = () => {
      if (current.length === 0) return;
      batches.push(this.#submit(root, current));
      current = [];
      bytes = 0;
    };
    for (const file of files) {
      current.push({ key: file.key, body: file.body });
      bytes += file.body.length;
      if (bytes >= BATCH_BYTES || current.length >= 512) flush();
    }
    flush();
    const results = new Map<string, WriteResult>();
    for (const batch of await Promise.all(batches)) for (const result of batch) results.set(result.key, result);
    return results;
  }

  #submit(root: string, files: WriteBatch['files']): Promise<WriteResult[]> {
    const id = this.#nextId++;
    const batch: WriteBatch = { id, root, files, ...this.#options };
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#queue.push(batch);
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
