/** A typed array of any of the kinds the project grows. */
type Growable = Int32Array | Uint32Array | Float64Array | Uint8Array;

/**
 * A copy of `array` at a larger `length`, the new elements set to `fill`: the typed-array columns of the PMTiles
 * writer and of the STAC text index grow by doubling through this.
 */
export function growArray<T extends Growable>(array: T, length: number, fill = 0): T {
  const larger = new (array.constructor as new (length: number) => T)(length);
  if (fill !== 0) larger.fill(fill);
  larger.set(array as ArrayLike<number>);
  return larger;
}
