import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { InputIssue } from '../../schemas/parse.ts';

/** A parsed YAML or JSON document that can tell the line of any field. */
export interface SourceDocument {
  /** Path relative to the catalog folder, used in every message. */
  source: string;
  /** The document as plain data; undefined when the text could not be parsed. */
  value: unknown;
  /** 1-based line of the field at `path`, or of its nearest existing parent. */
  locate: (path: readonly PropertyKey[]) => number | undefined;
  /** Syntax errors, each with its line. */
  issues: InputIssue[];
}

/**
 * Parses YAML (or JSON, a subset of YAML 1.2) keeping positions, so later stages can report file:line.
 * @example parseSourceDocument('collections/x.yaml', 'slug: x\nname: X\n').locate(['name']) // 2
 */
export function parseSourceDocument(source: string, text: string): SourceDocument {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const lineOf = (offset: number) => lineCounter.linePos(offset).line;
  // Later syntax errors are nearly always knock-on effects of the first, so only the first is reported.
  const first = doc.errors[0];
  const more = doc.errors.length > 1 ? ` (fix this first; ${doc.errors.length - 1} more error${doc.errors.length > 2 ? 's' : ''} may follow from it)` : '';
  const issues: InputIssue[] = first
    ? [{ source, line: first.linePos?.[0].line ?? lineOf(first.pos[0]), path: '', message: `YAML syntax error: ${first.message.split('\n')[0]}${more}` }]
    : [];
  const locate = (path: readonly PropertyKey[]) => {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = findNode(doc.contents, path.slice(0, depth), depth < path.length ? undefined : 'key');
      if (node?.range) return lineOf(node.range[0]);
    }
    return undefined;
  };
  return { source, value: issues.length > 0 ? undefined : doc.toJS(), locate, issues };
}

/** Walks maps and sequences; at the last step of a map path, prefers the key node so the line is the field's own. */
function findNode(root: unknown, path: readonly PropertyKey[], prefer?: 'key'): Node | undefined {
  let node = root as Node | null | undefined;
  for (const [index, part] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((item) => (item.key as { value?: unknown } | null)?.value === part);
      if (!pair) return undefined;
      const last = index === path.length - 1;
      node = (last && prefer === 'key' ? pair.key : pair.value) as Node | null;
      if (node === null && last) node = pair.key as Node;
    } else if (isSeq(node) && typeof part === 'number') {
      node = node.items[part] as Node | undefined;
    } else {
      return undefined;
    }
  }
  return node ?? undefined;
}
