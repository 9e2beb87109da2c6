/**
 * The one error the preview shows to a person. Its message is a sentence for the status line: what went
 * wrong and, where there is one, what to do instead. Anything else thrown while reading is wrapped in it.
 */
export class PreviewError extends Error {
  override name = 'PreviewError';
}

/** How long a whole preview may take before the page gives up and says so, rather than spin forever. */
export const PREVIEW_TIMEOUT_MS = 30_000;

/**
 * Settles like `promise`, or rejects with a `PreviewError` saying `message` after `ms`. parquet-wasm
 * panics inside spawned futures instead of rejecting, and a panicked read never settles: this is the guard.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PreviewError(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The sentence to show for anything a preview threw. */
export function describePreviewError(error: unknown): string {
  if (error instanceof PreviewError) return error.message;
  const detail = error instanceof Error ? error.message : String(error);
  return `The preview could not be read: ${detail.slice(0, 200)}`;
}
