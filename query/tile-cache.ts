/** Options of {@link createTileCache}. */
export interface TileCacheOptions {
  /** Budget of the cache in bytes: tile bytes plus an allowance per entry, so empty tiles count too. */
  maxBytes: number;
}

/** A cache of encoded tiles (or anything that carries `bytes`). */
export interface TileCache<T extends { bytes: Uint8Array }> {
  /** The value under `key`: cached, being produced for another caller, or produced now by `produce`. */
  get: (key: string, produce: () => Promise<T>) => Promise<T>;
  /** What the cache holds now (values being produced are not counted). */
  size: () => { bytes: number; entries: number };
}

/** Bytes counted per entry besides its tile: the key, the map entry and the value object. */
const ENTRY_BYTES = 128;

/**
 * Creates an in-memory tile cache: least recently used entries go first once the byte budget is passed,
 * concurrent requests for one key share one `produce` call (a map asking for the same tile twice runs it
 * once), and failures are not cached, so the next request tries again. A value larger than the whole budget
 * is returned but not kept.
 * @example
 * const cache = createTileCache<TileValue>({ maxBytes: 64 * 2 ** 20 });
 * const tile = await cache.get(`${buildId}/${queryId}/${z}/${x}/${y}`, () => runTile(...));
 */
export function createTileCache<T extends { bytes: Uint8Array }>(options: TileCacheOptions): TileCache<T> {
  const entries = new Map<string, { value: T; cost: number }>();
  const pending = new Map<string, Promise<T>>();
  let bytes = 0;

  const keep = (key: string, value: T) => {
    const cost = value.bytes.byteLength + key.length + ENTRY_BYTES;
    if (cost > options.maxBytes) return;
    const old = entries.get(key);
    if (old) bytes -= old.cost;
    entries.delete(key);
    entries.set(key, { value, cost });
    bytes += cost;
    for (const [oldest, entry] of entries) {
      if (bytes <= options.maxBytes) break;
      entries.delete(oldest);
      bytes -= entry.cost;
    }
  };

  return {
    get(key, produce) {
      const hit = entries.get(key);
      if (hit) {
        entries.delete(key);
        entries.set(key, hit);
        return Promise.resolve(hit.value);
      }
      const running = pending.get(key);
      if (running) return running;
      const produced = (async () => produce())().then(
        (value) => {
          pending.delete(key);
          keep(key, value);
          return value;
        },
        (error: unknown) => {
          pending.delete(key);
          throw error;
        },
      );
      pending.set(key, produced);
      return produced;
    },
    size: () => ({ bytes, entries: entries.size }),
  };
}
