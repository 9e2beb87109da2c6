/** Reports how far a long stage is: items done of total, and an estimate of the time left. */
export type ProgressReporter = (label: string, done: number, total: number, secondsLeft: number | undefined) => void;

/**
 * Tracks progress of `total` items and reports it at most every `intervalMs`, with an ETA from the average pace
 * so far. The last item is always reported.
 */
export function createProgress(label: string, total: number, report: ProgressReporter | undefined, intervalMs = 500) {
  const started = performance.now();
  let last = 0;
  return (done: number) => {
    if (!report) return;
    const now = performance.now();
    if (done < total && now - last < intervalMs) return;
    last = now;
    const elapsed = (now - started) / 1000;
    report(label, done, total, done > 0 && done < total ? (elapsed / done) * (total - done) : undefined);
  };
}

/**
 * Writes progress on one terminal line, rewritten in place; nothing when output is not a terminal. Items part
 * done (a stage may count them so) show in the percentage, not in the count of items done.
 */
export function createTerminalProgress(stream: NodeJS.WriteStream): ProgressReporter {
  return (label, done, total, secondsLeft) => {
    const eta = secondsLeft === undefined ? '' : `, about ${Math.ceil(secondsLeft)} s left`;
    stream.write(`\r\x1b[K  ${label}: ${Math.floor(done)} of ${total} (${Math.floor((done / total) * 100)}%)${eta}${done === total ? '\n' : ''}`);
  };
}
