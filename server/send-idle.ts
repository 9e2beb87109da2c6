/**
 * Cuts a streamed response body whose client stops taking bytes. Without this, a download whose client stalls
 * (reads the headers, then nothing) holds its file open, a deleted temporary file included, until the client
 * goes away, which may be never: stalled downloads could fill the disk, invisibly to `du`.
 *
 * The returned stream is pulled only when its reader asks for bytes (high-water mark 0), and srvx asks only once
 * the socket has taken the previous chunk (a `drain`), so the time between handing out a chunk and the next pull is
 * the time the client has taken no bytes. Past `idleMs`, the source is cancelled (which closes its file) and the
 * stream errors, on which srvx destroys the response and its socket. The time the source itself takes to produce
 * a chunk does not count.
 * @example new FastResponse(cutWhenIdle(Readable.toWeb(createReadStream(path)) as ReadableStream, 30_000))
 */
export function cutWhenIdle(body: ReadableStream<Uint8Array>, idleMs: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let timer: NodeJS.Timeout | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      clearTimeout(timer);
      const { done, value } = await reader.read();
      if (done) return controller.close();
      controller.enqueue(value);
      timer = setTimeout(() => {
        const reason = new Error(`The client took no bytes for ${idleMs} ms; the response was cut.`);
        controller.error(reason);
        reader.cancel(reason).catch(() => undefined);
      }, idleMs);
    },
    cancel(reason) {
      clearTimeout(timer);
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
}
