/**
 * Values derived from a catalog index (its STAC search index, its feature layers) or from its model's objects (a
 * dataset's search document, a file's STAC facts), kept with the index they were derived from and held strongly.
 *
 * They used to sit in module-level WeakMaps keyed by the index or the model object. V8 marks what only a WeakMap's
 * entries (ephemerons) reach apart from the rest of the heap, and much of it in the final, atomic pause of a full
 * collection: at 100,000 datasets × 3 files, those WeakMaps held about 700,000 entries and both STAC indexes, and
 * during a server reload that pause took up to 0.21 s, 0.17 s of it in the ephemeron phase (`--trace-gc-nvp`).
 * Held in Maps, the same pauses took 12–40 ms, once 0.15 s. An index that is dropped takes its derived values
 * with it, as the WeakMaps did.
 */

/** Names one kind of derived value; compared by identity, so each module makes its own once. */
export interface DerivedKey<T> {
  readonly name: string;
  /** Never set: carries the value's type. */
  readonly type?: T;
}

/** A key for `Derived`. */
export function derivedKey<T>(name: string): DerivedKey<T> {
  return { name };
}

/** The derived values of one catalog index. */
export class Derived {
  readonly #values = new Map<DerivedKey<unknown>, unknown>();
  #previous: Derived | undefined;

  /**
   * `previous` is the index that a reload replaces: the memos of this one take over its values for the model
   * objects both hold, which are the same objects where a model part did not change (runtime/model-file.ts).
   */
  constructor(previous?: Derived) {
    this.#previous = previous;
  }

  get<T>(key: DerivedKey<T>): T | undefined {
    return this.#values.get(key) as T | undefined;
  }

  set<T>(key: DerivedKey<T>, value: T): T {
    this.#values.set(key, value);
    return value;
  }

  /** The memo of this index under `key`, made on first use, reading through to the previous index's. */
  memo<K extends object, V>(key: DerivedKey<ObjectMemo<K, V>>): ObjectMemo<K, V> {
    return this.get(key) ?? this.set(key, new ObjectMemo<K, V>(this.#previous?.get(key)));
  }

  /**
   * Lets go of the previous index, once everything this one takes over has been taken: until then the previous
   * index's values stay reachable from here, and with them the model objects that the new build changed.
   */
  forgetPrevious(): void {
    this.#previous = undefined;
    for (const value of this.#values.values()) if (value instanceof ObjectMemo) value.forgetPrevious();
  }
}

/** Values computed once per model object, in a Map rather than a WeakMap (see above). */
export class ObjectMemo<K extends object, V> {
  readonly #values = new Map<K, V>();
  #previous: ObjectMemo<K, V> | undefined;

  constructor(previous?: ObjectMemo<K, V>) {
    this.#previous = previous;
  }

  /** The value kept for `key`, here or in the previous index's memo (from which it is taken over). */
  get(key: K): V | undefined {
    const value = this.#values.get(key);
    if (value !== undefined || !this.#previous) return value;
    const carried = this.#previous.#values.get(key);
    if (carried !== undefined) this.#values.set(key, carried);
    return carried;
  }

  set(key: K, value: V): V {
    this.#values.set(key, value);
    return value;
  }

  /** The value kept for `key`, made by `make` the first time. */
  getOrMake(key: K, make: (key: K) => V): V {
    return this.get(key) ?? this.set(key, make(key));
  }

  forgetPrevious(): void {
    this.#previous = undefined;
  }
}
