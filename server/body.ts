/** Why a request body was refused: larger than the limit, or not JSON. */
export type BodyRefusal = 'too_large' | 'invalid_json';

/**
 * Reads a JSON request body of at most `maxBytes`. A body that declares or streams more is refused without
 * reading the rest; each surface turns the refusal into its own error (QueryError, STAC, OGC).
 */
export async function readJsonBody(request: Request, maxBytes: number, refuse: (why: BodyRefusal) => Error): Promise<unknown> {
  if (Number(request.headers.get('content-length') ?? 0) > maxBytes) throw refuse('too_large');
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body?.getReader();
  for (;;) {
    const next = reader ? await reader.read() : { done: true as const, value: undefined };
    if (next.done) break;
    size += next.value.byteLength;
    if (size > maxBytes) {
      await reader?.cancel();
      throw refuse('too_large');
    }
    chunks.push(next.value);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw refuse('invalid_json');
  }
}
