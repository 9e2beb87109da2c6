import { createJsonDepthScanner, MAX_JSON_DEPTH } from '../core/json-depth.ts';

/** Why a request body was refused: larger than the limit, nested deeper than MAX_JSON_DEPTH, or not JSON. */
export type BodyRefusal = 'too_large' | 'too_deep' | 'invalid_json';

/**
 * Reads a JSON request body of at most `maxBytes`. A body that declares or streams more is refused without
 * reading the rest. Each piece is scanned for nesting as it arrives: from the first one past `maxDepth` the rest is
 * read but not kept, and the body is refused without being parsed, since JSON.parse's time grows with the depth
 * (1 MiB of `[[[…` took about a second). Each surface turns the refusal into its own error (QueryError, STAC, OGC);
 * `detail` says what was wrong, with the limit.
 */
export async function readJsonBody(
  request: Request,
  maxBytes: number,
  refuse: (why: BodyRefusal, detail: string) => Error,
  maxDepth = MAX_JSON_DEPTH,
): Promise<unknown> {
  const tooLarge = () => refuse('too_large', `is larger than ${maxBytes} bytes`);
  if (Number(request.headers.get('content-length') ?? 0) > maxBytes) throw tooLarge();
  const scan = createJsonDepthScanner(maxDepth);
  let deep: string | undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  for (;;) {
    const next = reader ? await reader.read() : { done: true as const, value: undefined };
    if (next.done) break;
    size += next.value.byteLength;
    if (size > maxBytes) {
      await reader?.cancel();
      throw tooLarge();
    }
    // A body refused for its depth is still read to its end, so that the client, still sending, gets the answer.
    if (deep) continue;
    deep = scan(next.value);
    if (deep) chunks.length = 0;
    else chunks.push(next.value);
  }
  if (deep) throw refuse('too_deep', deep);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw refuse('invalid_json', 'is not JSON');
  }
}
