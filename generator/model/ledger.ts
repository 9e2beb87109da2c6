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

// Entries are checked by hand in `readLedger`: zod over 100,000 entries took a third of a second.
const LedgerSchema = z.strictObject({
  format: z.literal('geoshelf-ledger/1'),
  next: z.strictObject(Object.fromEntries(LEDGER_KINDS.map((kind) => [kind, z.number().int().positive()])) as Record<LedgerKind, z.ZodNumber>),
  ids: z.strictObject(Object.fromEntries(LEDGER_KINDS.map((kind) => [kind, z.custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'must be an object')])) as Record<LedgerKind, z.ZodCustom<Record<string, unknown>>>),
});

/** The committed id ledger: natural key → [id, created_at], per kind. Entries are never removed. */
export interface LedgerData {
  format: 'geoshelf-ledger/1';
  next: Record<LedgerKind, number>;
  ids: Record<LedgerKind, Record<string, LedgerEntry>>;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

/** An empty ledger, for a new catalog. */
export function createEmptyLedger(): LedgerData {
  return {
    format: 'geoshelf-ledger/1',
    next: Object.fromEntries(LEDGER_KINDS.map((kind) => [kind, 1])) as Record<LedgerKind, number>,
    ids: Object.fromEntries(LEDGER_KINDS.map((kind) => [kind, {}])) as LedgerData['ids'],
  };
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
  const ledger = result.data as LedgerData;
  for (const kind of LEDGER_KINDS) {
    const entries = ledger.ids[kind] as Record<string, unknown>;
    const seen = new Set<number>();
    for (const key in entries) {
      const entry = entries[key];
      const valid = Array.isArray(entry) && entry.length === 2 && Number.isInteger(entry[0]) && entry[0] > 0 && entry[0] < ledger.next[kind] &&
        typeof entry[1] === 'string' && TIMESTAMP.test(entry[1]) && !seen.has(entry[0]);
      if (!valid) {
        throw new BuildError([{ code: 'LedgerInvalid', source, path: `ids.${kind}.${key}`, message: `must be [id, "YYYY-MM-DDTHH:MM:SS"] with an id below next.${kind} that no other entry has` }]);
      }
      seen.add(entry[0]);
    }
  }
  return ledger;
}

/**
 * Serialises the ledger with one entry per line and keys sorted, so that a change shows as a small diff.
 */
export function serializeLedger(ledger: LedgerData): string {
  const kinds = LEDGER_KINDS.map((kind) => {
    const entries = Object.entries(ledger.ids[kind]).sort(([, [a]], [, [b]]) => a - b);
    const body = entries.map(([key, entry]) => `      ${JSON.stringify(key)}: ${JSON.stringify(entry)}`).join(',\n');
    return `    ${JSON.stringify(kind)}: {${entries.length ? `\n${body}\n    ` : ''}}`;
  });
  return `{\n  "format": "geoshelf-ledger/1",\n  "next": ${JSON.stringify(ledger.next)},\n  "ids": {\n${kinds.join(',\n')}\n  }\n}\n`;
}

/** Writes the ledger atomically (temporary file, then rename). */
export async function writeLedger(path: string, ledger: LedgerData): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  await writeFile(temporary, serializeLedger(ledger));
  await rename(temporary, path);
}

/**
 * Looks up ids, assigning the next free id to keys the ledger has not seen. Call `assign` for every key, then
 * `added` tells which keys are new. Keys are assigned in the order asked, so callers ask in a stable order.
 */
export class IdAllocator {
  readonly ledger: LedgerData;
  readonly added: { kind: LedgerKind; key: string; id: number }[] = [];
  readonly #now: string;

  /** Takes ownership of `ledger`: new ids are added to it in place. */
  constructor(ledger: LedgerData, now: string) {
    this.ledger = ledger;
    this.#now = now;
  }

  /** Returns the id and creation time of `key`, giving it a new id if it has none. */
  assign(kind: LedgerKind, key: string): { id: number; created_at: string } {
    const existing = this.ledger.ids[kind][key];
    if (existing) return { id: existing[0], created_at: existing[1] };
    const id = this.ledger.next[kind];
    this.ledger.next[kind] = id + 1;
    this.ledger.ids[kind][key] = [id, this.#now];
    this.added.push({ kind, key, id });
    return { id, created_at: this.#now };
  }
}
