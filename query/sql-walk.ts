import { checkExpression, checkQueryNode, checkTableRef, refuse, type AstObject, type RuleContext, type SqlRefusal } from './sql-rules.ts';

/** Most syntax nodes (expressions, query nodes, table references) one query may have. */
export const MAX_AST_NODES = 20_000;
/** Deepest nesting of syntax nodes one query may have. */
export const MAX_AST_DEPTH = 200;

const QUERY_NODES = new Set(['SELECT_NODE', 'SET_OPERATION_NODE', 'RECURSIVE_CTE_NODE', 'CTE_NODE', 'STATEMENT_NODE']);
const TABLE_REFS = new Set([
  'BASE_TABLE', 'JOIN', 'SUBQUERY', 'TABLE_FUNCTION', 'EMPTY', 'EXPRESSION_LIST', 'PIVOT', 'SHOW_REF', 'COLUMN_DATA', 'DELIM_GET',
]);

type NodeKind = 'expression' | 'query' | 'table' | 'plain';
/** What a position in the tree must hold: `from_table` a table reference, `node` a query node, … */
type Slot = 'any' | 'query' | 'table';

interface Frame {
  value: unknown;
  slot: Slot;
  /** CTE names visible here, lowercase. */
  scope: ReadonlySet<string>;
  depth: number;
}

/** What the walk learnt about an accepted query. */
export interface WalkResult {
  orderedAtTop: boolean;
}

function kindOf(node: AstObject): NodeKind {
  if (typeof node.class === 'string') return 'expression';
  if (typeof node.type !== 'string') return 'plain';
  if (QUERY_NODES.has(node.type)) return 'query';
  return TABLE_REFS.has(node.type) ? 'table' : 'plain';
}

function slotOf(kind: NodeKind, key: string): Slot {
  if (key === 'from_table') return 'table';
  if (key === 'node') return 'query';
  if ((key === 'left' || key === 'right') && (kind === 'query' || kind === 'table')) return kind;
  return key === 'source' && kind === 'table' ? 'table' : 'any';
}

function isOrdered(root: AstObject): boolean {
  const modifiers = Array.isArray(root.modifiers) ? (root.modifiers as AstObject[]) : [];
  return modifiers.some((modifier) => modifier.type === 'ORDER_MODIFIER' && Array.isArray(modifier.orders) && modifier.orders.length > 0);
}

/**
 * Walks the whole tree of one SELECT and applies every rule of sql-rules.ts. Iterative, so a deep tree
 * cannot overflow the stack; every object is visited, so an expression hidden in an unusual place (a
 * PIVOT, a sample, a window frame) is checked like any other. CTE names are scoped as DuckDB binds them:
 * a CTE sees the CTEs defined before it, the query body sees all of them.
 */
export function walkSelect(root: AstObject, ctx: RuleContext): WalkResult | SqlRefusal {
  const stack: Frame[] = [{ value: root, slot: 'query', scope: new Set(), depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { value, scope } = frame;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ ...frame, value: value[i] });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const node = value as AstObject;
    const kind = kindOf(node);
    if (frame.slot !== 'any' && kind !== frame.slot) return refuse('sql_unsupported_syntax');
    const depth = kind === 'plain' ? frame.depth : frame.depth + 1;
    if (kind !== 'plain' && (++nodes > MAX_AST_NODES || depth > MAX_AST_DEPTH)) {
      return refuse('sql_too_complex', { nodes: MAX_AST_NODES, depth: MAX_AST_DEPTH });
    }
    const refusal =
      kind === 'expression' ? checkExpression(node, ctx)
      : kind === 'query' ? checkQueryNode(node)
      : kind === 'table' ? checkTableRef(node, scope, ctx)
      : undefined;
    if (refusal) return refusal;

    let inner = scope;
    const children: Frame[] = [];
    const ctes = kind === 'query' ? ((node.cte_map as AstObject | undefined)?.map as AstObject[] | undefined) ?? [] : [];
    for (const entry of ctes) {
      const cte = (entry.value ?? {}) as AstObject;
      if (Array.isArray(cte.key_targets) && cte.key_targets.length > 0) return refuse('sql_recursive_cte', 'using-key');
      children.push({ value: cte, slot: 'any', scope: inner, depth });
      inner = new Set([...inner, String(entry.key).toLowerCase()]);
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === 'cte_map' && kind === 'query') continue;
      children.push({ value: child, slot: slotOf(kind, key), scope: inner, depth });
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return { orderedAtTop: isOrdered(root) };
}
