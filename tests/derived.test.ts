import { describe, expect, it } from 'vitest';
import { Derived, derivedKey, ObjectMemo } from '../core/derived.ts';
import { searchStacItems, stacSearchIndex } from '../core/api/stac/search.ts';
import type { CatalogIndex } from '../core/catalog-index.ts';
import { tokenize } from '../core/text.ts';
import { loadSnapshot, reloadSnapshot } from '../server/catalog.ts';
import { sampleConfig } from './helpers/sample.ts';

describe('values derived from a catalog index', () => {
  it('takes over the previous index values for the objects both hold, and lets go of the rest', () => {
    const key = derivedKey<ObjectMemo<object, string>>('test memo');
    const kept = {};
    const changed = {};
    const old = new Derived();
    old.memo(key).set(kept, 'kept');
    old.memo(key).set(changed, 'old value');
    const next = new Derived(old);
    const memo = next.memo(key);
    expect(memo.get(kept)).toBe('kept');
    next.forgetPrevious();
    // Taken over before the previous index was let go: still there. Never asked for: made again.
    expect(memo.get(kept)).toBe('kept');
    expect(memo.get(changed)).toBeUndefined();
    expect(memo.getOrMake(changed, () => 'made again')).toBe('made again');
    expect(old.memo(key).get(changed)).toBe('old value');
  });

  it('gives each index its own values under a key', () => {
    const key = derivedKey<number[]>('test list');
    const one = new Derived();
    const two = new Derived(one);
    one.set(key, [1]);
    expect(two.get(key)).toBeUndefined();
    expect(one.get(key)).toEqual([1]);
  });

  it('lets a reload of an unchanged build take over the search documents, and answer searches alike', async () => {
    const { distDir } = sampleConfig();
    const options = { budgetBytes: 1 << 20, cacheMaxAge: 0 };
    const first = loadSnapshot(distDir, options);
    const word = tokenize(first.context.index.model.collections[0]!.datasets[0]!.name)[0]!;
    const matched = (index: CatalogIndex) => [...searchStacItems(index, { q: [[word]] })].map((position) => stacSearchIndex(index).entries[position]!.id);
    const before = matched(first.context.index);
    expect(before.length).toBeGreaterThan(0);
    const firstDocuments = [...first.context.index.collections.values()].flatMap((entry) => entry.documents);
    const second = await reloadSnapshot(distDir, options, first);
    const secondDocuments = [...second.context.index.collections.values()].flatMap((entry) => entry.documents);
    expect(secondDocuments.length).toBe(firstDocuments.length);
    expect(secondDocuments.every((document, at) => document === firstDocuments[at])).toBe(true);
    expect(matched(second.context.index)).toEqual(before);
  });
});
