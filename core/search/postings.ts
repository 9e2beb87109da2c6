import { encodeNumbers, pushPosting } from './codec.ts';
import { compareText } from './format.ts';

/** Collects the posting lists of an index one document at a time, by increasing id. */
export interface PostingTable {
  /** Starts the next document; its id must be higher than the previous one's. */
  startDocument(id: number): void;
  /** Adds weight to a term of the current document. */
  add(term: string, weight: number): void;
  /** Every term with its encoded posting list (codec.ts `encodePostings`), in code-unit order. */
  finish(): [term: string, postings: string][];
}

/** One term's list so far, and the weight gathered for the document being read. */
interface TermList {
  values: number[];
  /** Id of the last posting written, 0 before the first. */
  written: number;
  /** Id of the document whose weight is being gathered, 0 when none. */
  current: number;
  weight: number;
}

/**
 * A posting table. One map lookup per word read: a term's weight in a document is summed in place and
 * written to its list when the term next appears in a later document, or at the end.
 */
export function createPostingTable(): PostingTable {
  const lists = new Map<string, TermList>();
  let documentId = 0;
  const flush = (list: TermList) => {
    if (list.current === 0) return;
    pushPosting(list.values, list.current - list.written, list.weight);
    list.written = list.current;
    list.current = 0;
  };
  return {
    startDocument(id) {
      if (id <= documentId) throw new RangeError(`search documents must come by increasing id: ${id} after ${documentId}`);
      documentId = id;
    },
    add(term, weight) {
      let list = lists.get(term);
      if (!list) lists.set(term, (list = { values: [], written: 0, current: 0, weight: 0 }));
      if (list.current !== documentId) {
        flush(list);
        list.current = documentId;
        list.weight = 0;
      }
      list.weight += weight;
    },
    finish() {
      const entries: [string, string][] = [];
      for (const [term, list] of lists) {
        flush(list);
        entries.push([term, encodeNumbers(list.values)]);
      }
      return entries.sort((a, b) => compareText(a[0], b[0]));
    },
  };
}
