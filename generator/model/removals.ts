import type { LedgerData } from './ledger.ts';

/**
 * Something that left the catalog, as the feeds tell it: a collection, a dataset, a file, or a version of a file
 * (every source of that version, in every format). `key` is the ledger's natural key (`{c}`, `{c}/{d}`,
 * `{c}/{d}/{f}`), with `@{version}` for a version; `id` is the ledger id, which is never given again.
 */
export interface Removal {
  kind: 'collection' | 'dataset' | 'file' | 'version';
  key: string;
  id?: number;
  removed_at: string;
}

/**
 * The removals the ledger records, oldest first. What went with its parent is told once, by the parent: a
 * dataset removed with its collection is not listed, and neither is a version removed with its file. A format
 * dropped from a version that other formats still carry is not a removal of the version.
 */
export function listRemovals(ledger: LedgerData): Removal[] {
  const { ids, removed } = ledger;
  const removals: Removal[] = [];
  const wentWith = (kind: 'collection' | 'dataset' | 'file', key: string, at: string) => {
    const parent = removed[kind][key];
    return parent !== undefined && parent <= at;
  };
  const parentKey = (key: string) => key.slice(0, key.lastIndexOf('/'));
  for (const kind of ['collection', 'dataset', 'file'] as const) {
    for (const [key, at] of Object.entries(removed[kind])) {
      if (kind === 'dataset' && wentWith('collection', parentKey(key), at)) continue;
      if (kind === 'file' && wentWith('dataset', parentKey(key), at)) continue;
      removals.push({ kind, key, id: ids[kind][key]![0], removed_at: at });
    }
  }
  // A source's key is `{c}/{d}/{f}/{format}@{version}`; slugs hold no `/` or `@`, a version may. A version is gone
  // when no format of it is left: each format the catalog ever had is looked up, not every source walked.
  const versions = new Map<string, { file: string; version: string; at: string }>();
  for (const [key, at] of Object.entries(removed.source)) {
    const slash = key.indexOf('/', key.indexOf('/', key.indexOf('/') + 1) + 1);
    const sign = key.indexOf('@', slash);
    if (slash < 0 || sign < 0) continue;
    const file = key.slice(0, slash);
    const version = key.slice(sign + 1);
    const seen = versions.get(`${file}@${version}`);
    if (!seen || at > seen.at) versions.set(`${file}@${version}`, { file, version, at });
  }
  const formats = Object.keys(ids.format);
  for (const [key, { file, version, at }] of versions) {
    const left = formats.some((format) => {
      const source = `${file}/${format}@${version}`;
      return source in ids.source && !(source in removed.source);
    });
    if (left || wentWith('file', file, at)) continue;
    removals.push({ kind: 'version', key, removed_at: at });
  }
  return removals.sort((a, b) => (a.removed_at < b.removed_at ? -1 : a.removed_at > b.removed_at ? 1 : 0));
}

/** The collection a removal belongs to, from its key. */
export function collectionOfRemoval(removal: Removal): string {
  const slash = removal.key.indexOf('/');
  return slash < 0 ? removal.key : removal.key.slice(0, slash);
}
