import {
  ALLOWED_AGGREGATES,
  ALLOWED_FUNCTIONS,
  ALLOWED_TABLE_FUNCTIONS,
  LIST_AGGREGATE_FUNCTIONS,
  SQL_VALUE_FUNCTIONS,
} from './sql-allowlist.ts';
import type { SqlSource } from './sql-source.ts';
import { describeQueryError, type MessageArgs } from './errors.ts';

/** Every refusal code of the SQL check (the table in query/validate-sql.ts). */
export type SqlCheckCode =
  | 'sql_empty' | 'sql_syntax_error' | 'sql_not_select' | 'sql_multiple_statements' | 'sql_unknown_table'
  | 'sql_qualified_name' | 'sql_file_not_allowed' | 'sql_table_function_not_allowed' | 'sql_function_not_allowed'
  | 'sql_recursive_cte' | 'sql_parameter_not_allowed' | 'sql_unsupported_syntax' | 'sql_too_complex';

/** A refused query: a stable code, a message safe to show, and for syntax errors the character offset. */
export type SqlRefusal = { ok: false; code: SqlCheckCode; message: string; position?: number };

/** One object of the JSON tree `json_serialize_sql` returns. */
export type AstObject = Record<string, unknown>;

/** What the rules need besides the node: the SQL text and the request's aliases. */
export interface RuleContext {
  source: SqlSource;
  /** Declared aliases by lowercase name. */
  aliases: ReadonlyMap<string, string>;
  /** Declared aliases the query reads, as declared. */
  used: Set<string>;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/i;
/** Operator expressions of the parser; none of them reads anything. */
const OPERATOR_TYPES = new Set([
  'OPERATOR_NOT', 'OPERATOR_IS_NULL', 'OPERATOR_IS_NOT_NULL', 'COMPARE_IN', 'COMPARE_NOT_IN', 'OPERATOR_COALESCE',
  'ARRAY_EXTRACT', 'ARRAY_SLICE', 'STRUCT_EXTRACT', 'ARRAY_CONSTRUCTOR', 'GROUPING_FUNCTION', 'OPERATOR_TRY',
  'OPERATOR_UNPACK',
]);
/** Expression classes that need no check of their own (their children are still walked). */
const PLAIN_CLASSES = new Set([
  'CONSTANT', 'STAR', 'LAMBDA', 'COMPARISON', 'CONJUNCTION', 'BETWEEN', 'CASE', 'CAST', 'COLLATE', 'SUBQUERY',
  'POSITIONAL_REFERENCE',
]);
/** The text at a call the user qualified with `main.`; the parser qualifies its own helpers the same way. */
const TYPED_MAIN = /^(?:main|"main")\s*\./i;

/** Builds a refusal with the catalog's message; messages never quote the SQL, only the user's own identifiers. */
export function refuse<C extends SqlCheckCode>(code: C, ...args: MessageArgs<C>): SqlRefusal {
  return { ok: false, code, message: describeQueryError(code, ...args).message };
}

/** `"name"` when the identifier is plain enough to repeat back, else `fallback`. */
function quoteName(name: string, fallback: string): string {
  return IDENTIFIER.test(name) ? `"${name}"` : fallback;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function functionRefusal(name: string): SqlRefusal {
  return refuse('sql_function_not_allowed', quoteName(name, 'a function'));
}

function unsupported(what: string): SqlRefusal {
  return refuse('sql_unsupported_syntax', what);
}

/** Checks a function or window call: no schema or catalog, an allowed name, and a constant aggregate name. */
function checkCall(node: AstObject, ctx: RuleContext): SqlRefusal | undefined {
  const name = text(node.function_name).toLowerCase();
  const schema = text(node.schema);
  const typedMain = schema.toLowerCase() === 'main' && TYPED_MAIN.test(ctx.source.textAt(node.query_location));
  if (text(node.catalog) || (schema && schema.toLowerCase() !== 'main') || typedMain) {
    return refuse('sql_qualified_name', quoteName(name, 'the function'));
  }
  if (!ALLOWED_FUNCTIONS.has(name)) return functionRefusal(name);
  if (LIST_AGGREGATE_FUNCTIONS.has(name)) {
    const argument = (node.children as AstObject[] | undefined)?.[1];
    const aggregate = argument?.class === 'CONSTANT' ? (argument.value as AstObject | null)?.value : undefined;
    if (typeof aggregate !== 'string' || !ALLOWED_AGGREGATES.has(aggregate.toLowerCase())) {
      return refuse('sql_function_not_allowed', name, 'aggregate-name');
    }
  }
  return undefined;
}

/** Checks one expression node (the walker visits its children). */
export function checkExpression(node: AstObject, ctx: RuleContext): SqlRefusal | undefined {
  const kind = text(node.class);
  if (kind === 'FUNCTION' || kind === 'WINDOW') return checkCall(node, ctx);
  if (kind === 'COLUMN_REF') {
    const names = node.column_names as unknown[];
    const name = names.length === 1 ? text(names[0]).toLowerCase() : '';
    if (SQL_VALUE_FUNCTIONS.has(name) && !ALLOWED_FUNCTIONS.has(name)) {
      return refuse('sql_function_not_allowed', name, 'bare-name');
    }
    return undefined;
  }
  if (kind === 'OPERATOR') return OPERATOR_TYPES.has(text(node.type)) ? undefined : unsupported('an unknown operator');
  if (kind === 'PARAMETER') return refuse('sql_parameter_not_allowed');
  if (kind === 'DEFAULT') return unsupported('DEFAULT');
  return PLAIN_CLASSES.has(kind) ? undefined : unsupported('an unknown kind of expression');
}

/** Checks a query node; CTE names are scoped by the walker. */
export function checkQueryNode(node: AstObject): SqlRefusal | undefined {
  const type = text(node.type);
  if (type === 'RECURSIVE_CTE_NODE') return refuse('sql_recursive_cte');
  if (type === 'SELECT_NODE' || type === 'SET_OPERATION_NODE') return undefined;
  return unsupported('an unknown kind of query');
}

/** Checks a table reference: a declared alias or a CTE in scope, or `unnest(…)`; never a file or the catalog. */
export function checkTableRef(node: AstObject, scope: ReadonlySet<string>, ctx: RuleContext): SqlRefusal | undefined {
  switch (text(node.type)) {
    case 'JOIN':
    case 'SUBQUERY':
    case 'EXPRESSION_LIST':
    case 'EMPTY':
    case 'PIVOT':
      return undefined;
    case 'SHOW_REF':
      return refuse('sql_not_select', 'describe');
    case 'TABLE_FUNCTION': {
      const call = (node.function ?? {}) as AstObject;
      const name = text(call.function_name).toLowerCase();
      if (call.class === 'FUNCTION' && ALLOWED_TABLE_FUNCTIONS.has(name)) return undefined;
      const what = IDENTIFIER.test(name) ? `Table function "${name}" is` : 'This table function is';
      return refuse('sql_table_function_not_allowed', what);
    }
    case 'BASE_TABLE':
      return checkBaseTable(node, scope, ctx);
    default:
      return unsupported('an unknown kind of table reference');
  }
}

function checkBaseTable(node: AstObject, scope: ReadonlySet<string>, ctx: RuleContext): SqlRefusal | undefined {
  const name = text(node.table_name);
  const start = ctx.source.textAt(node.query_location, 2);
  if (start.startsWith("'") || start.startsWith('$') || /^e'/i.test(start) || /[/\\.:]/.test(name)) {
    return refuse('sql_file_not_allowed');
  }
  if (text(node.schema_name) || text(node.catalog_name)) {
    return refuse('sql_qualified_name');
  }
  if (node.at_clause) return unsupported('AT (time travel)');
  const key = name.toLowerCase();
  if (scope.has(key)) return undefined;
  const alias = ctx.aliases.get(key);
  if (alias === undefined) {
    return refuse('sql_unknown_table', quoteName(name, 'in FROM'));
  }
  ctx.used.add(alias);
  return undefined;
}
