import { readFile, rename, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { safeParseWithFriendlyErrors } from '../../schemas/parse.ts';
import { BuildError, withCode } from '../errors.ts';

/** Kinds of records that get ids; each kind has its own sequence. */
export const LEDGER_KINDS = ['collection', 'dataset', 'file', 'file_format', 'source', 'format', 'storage_location'] as const;

/** A kind of record that gets an id. */
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** One entry of the ledger: the id and when it was given. */
type LedgerEntry = [id: number, createdAt: string];

/** The largest `next` a ledger may hold: the checks and the allocator keep a byte per id below it. */
const MAX_NEXT_ID = 2 ** 31 - 1;

// Entries are checked by hand in `readLedger`: zod over 100,000 entries took a third of a second.
const byKind = () => z.strictObject(Object.fromEntries(LEDGER_KINDS.map((kind) => [kind, z.custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'must be an object')])) as Record<LedgerKind, z.ZodCustom<Record<string, unknown>>>);
const LedgerSchema = z.strictObject({
  format: z.literal('geoshelf-ledger/1'),
  next: z.strictObject(Object.fromEntries(LEDGER_KINDS.map((kind) => [kind, z.number().int().positive().max(MAX_NEXT_ID)])) as Record<LedgerKind, z.ZodNumber>),
  ids: byKind(),
  removed: byKind().partial().optional(),
});

/**
 * The committed id ledger: natural key → [id, created_at] per kind, and natural key → removed_at for the records that
 * are gone, from the first build that missed them. Entries are never dropped, so an id is never given again; a
 * record that comes back leaves `removed`. Removals are kept apart from the ids so that a build reads them without
 * going through every id.
 */
export interface LedgerData {
  format: 'geoshelf-ledger/1';
  next: Record<LedgerKind, number>;
  ids: Record<LedgerKind, Record<string, LedgerEntry>>;
  removed: Record<LedgerKind, Record<string, string>>;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

/** An empty ledger, for a new catalog. */
export function createEmptyLedger(): LedgerData {
  return {
    format: 'geoshelf-ledger/1',
    next: Object.fromEntries(LEDGER_KINDS.map((kind) => [kind, 1])) as Record<LedgerKind, number>,
    ids: byKindWithoutPrototype() as LedgerData['ids'],
    removed: byKindWithoutPrototype() as LedgerData['removed'],
  };
}

/**
 * One object per kind; keyed by slugs, so none has a prototype (a record named `constructor` must not find Object's).
 * The objects of `from` lose theirs in place: copying the 160,000 entries of a 10k × 3 ledger took 80–140 ms.
 */
function byKindWithoutPrototype(from: Partial<Record<LedgerKind, Record<string, unknown>>> = {}): Record<LedgerKind, Record<string, unknown>> {
  return Object.fromEntries(LEDGER_KINDS.map((kind) => [kind, from[kind] ? Object.setPrototypeOf(from[kind], null) as Record<string, unknown> : Object.create(null) as Record<string, unknown>])) as Record<LedgerKind, Record<string, unknown>>;
}

/** Reads the ledger file; a missing file is an empty ledger. A damaged one fails the build. */
export async function readLedger(path: string): Promise<LedgerData> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return createEmptyLedger();
    throw error;
  }
  const source = 'ledger.json';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new BuildError([{ code: 'LedgerInvalid', source, path: '', message: `not valid JSON: ${(error as Error).message}` }]);
  }
  const result = safeParseWithFriendlyErrors(LedgerSchema, value, { source });
  if (!result.ok) throw new BuildError(withCode('LedgerInvalid', result.issues));
  const ledger: LedgerData = { ...result.data, ids: byKindWithoutPrototype(result.data.ids) as LedgerData['ids'], removed: byKindWithoutPrototype(result.data.removed) as LedgerData['removed'] };
  for (const kind of LEDGER_KINDS) {
    const entries = ledger.ids[kind] as Record<string, unknown>;
    // A flag per id below next: a set of 160,000 ids cost as much as the rest of the checks.
    const seen = new Uint8Array(ledger.next[kind]);
    for (const key in entries) {
      const entry = entries[key];
      const valid = Array.isArray(entry) && entry.length === 2 && Number.isInteger(entry[0]) && entry[0] > 0 && entry[0] < ledger.next[kind] &&
        typeof entry[1] === 'string' && TIMESTAMP.test(entry[1]) && seen[entry[0]] === 0;
      if (!valid) {
        throw new BuildError([{ code: 'LedgerInvalid', source, path: `ids.${kind}.${key}`, message: `must be [id, "YYYY-MM-DDTHH:MM:SS"] with an id below next.${kind} that no other entry has` }]);
      }
      seen[entry[0]] = 1;
    }
    const removed = ledger.removed[kind] as Record<string, unknown>;
    for (const key in removed) {
      const time = removed[key];
      if (typeof time !== 'string' || !TIMESTAMP.test(time) || !(key in entries)) {
        throw new BuildError([{ code: 'LedgerInvalid', source, path: `removed.${kind}.${key}`, message: `must be "YYYY-MM-DDTHH:MM:SS", for a key that ids.${kind} holds` }]);
      }
    }
  }
  return ledger;
}

/**
 * Serialises the ledger with one entry per line and keys sorted, so that a change shows as a small diff.
 */
export function serializeLedger(ledger: LedgerData): string {
  const section = (entries: [string, unknown][]) => {
    const body = entries.map(([key, entry]) => `      ${JSON.stringify(key)}: ${JSON.stringify(entry)}`).join(',\n');
    return `{${entries.length ? `\n${body}\n    ` : ''}}`;
  };
  const ids = LEDGER_KINDS.map((kind) => `    ${JSON.stringify(kind)}: ${section(Object.entries(ledger.ids[kind]).sort(([, [a]], [, [b]]) => a - b))}`);
  // Removals in the order they happened, then by key; the section is left out while nothing was removed.
  const removed = LEDGER_KINDS.filter((kind) => Object.keys(ledger.removed[kind]).length > 0)
    .map((kind) => `    ${JSON.stringify(kind)}: ${section(Object.entries(ledger.removed[kind]).sort(([a, x], [b, y]) => (x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0)))}`);
  return `{\n  "format": "geoshelf-ledger/1",\n  "next": ${JSON.stringify(ledger.next)},\n  "ids": {\n${ids.join(',\n')}\n  }${removed.length > 0 ? `,\n  "removed": {\n${removed.join(',\n')}\n  }` : ''}\n}\n`;
}

/** Writes the ledger atomically (temporary file, then rename). */
export async function writeLedger(path: string, ledger: LedgerData): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  await writeFile(temporary, serializeLedger(ledger));
  await rename(temporary, path);
}

/** Which ids of a kind were asked for: a flag per id the ledger held before the build, and their number. */
interface AskedIds {
  flags: Uint8Array;
  count: number;
}

/**
 * Looks up ids, assigning the next free id to keys the ledger has not seen. Call `assign` for every key, then
 * `added` tells which keys are new, and `markRemoved` stamps the keys no record asked for. Keys are assigned in the
 * order asked, so callers ask in a stable order.
 */
export class IdAllocator {
  readonly ledger: LedgerData;
  readonly added: { kind: LedgerKind; key: string; id: number }[] = [];
  /** Keys stamped removed by `markRemoved`, and removed keys whose record came back. */
  readonly removed: { kind: LedgerKind; key: string }[] = [];
  readonly returned: { kind: LedgerKind; key: string }[] = [];
  readonly #now: string;
  /**
   * Per kind, which of the ids the ledger held before were asked for (by id), and how many: a flag per id costs a
   * tenth of a set of 160,000 keys.
   */
  readonly #asked: Record<LedgerKind, AskedIds>;

  /** Takes ownership of `ledger`: new ids and removals are written to it in place. */
  constructor(ledger: LedgerData, now: string) {
    this.ledger = ledger;
    this.#now = now;
    this.#asked = Object.fromEntries(LEDGER_KINDS.map((kind) => [kind, { flags: new Uint8Array(ledger.next[kind]), count: 0 }])) as Record<LedgerKind, AskedIds>;
  }

  /** Whether the ledger differs from the file it was read from. */
  get changed(): boolean {
    return this.added.length + this.removed.length + this.returned.length > 0;
  }

  /** Returns the id and creation time of `key`, giving it a new id if it has none. */
  assign(kind: LedgerKind, key: string): { id: number; created_at: string } {
    const existing = this.ledger.ids[kind][key];
    if (existing) {
      const asked = this.#asked[kind];
      if (asked.flags[existing[0]] === 0) {
        asked.flags[existing[0]] = 1;
        asked.count++;
      }
      const removed = this.ledger.removed[kind];
      if (key in removed) {
        delete removed[key];
        this.returned.push({ kind, key });
      }
      return { id: existing[0], created_at: existing[1] };
    }
    const id = this.ledger.next[kind];
    this.ledger.next[kind] = id + 1;
    this.ledger.ids[kind][key] = [id, this.#now];
    this.added.push({ kind, key, id });
    return { id, created_at: this.#now };
  }

  /**
   * Records the current time as removed_at of every key that is not removed yet and that `assign` was not asked
   * for. Call it once every record is resolved, and only for a catalog that resolved without problems: a record that
   * failed to parse is not a removed one.
   */
  markRemoved(): void {
    for (const kind of LEDGER_KINDS) {
      const entries = this.ledger.ids[kind];
      const removed = this.ledger.removed[kind];
      const asked = this.#asked[kind];
      // Ids are given in sequence and entries never dropped, so the ledger held next - 1 entries of a kind: when
      // those asked for and those removed make that many, none is left to stamp, and 100,000 need not be walked.
      if (asked.count + Object.keys(removed).length === asked.flags.length - 1) continue;
      for (const key in entries) {
        const id = entries[key]![0];
        if (id < asked.flags.length && asked.flags[id] === 0 && !(key in removed)) {
          removed[key] = this.#now;
          this.removed.push({ kind, key });
        }
      }
    }
  }
}
