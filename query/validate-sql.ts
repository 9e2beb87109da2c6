/**
 * Layer 1 of the query sandbox (DESIGN.md "Query sandbox"): parse-only validation. The SQL is bound as a
 * parameter of `json_serialize_sql(?)` on a locked-down in-memory DuckDB, never run, and its syntax tree is
 * walked (sql-walk.ts, sql-rules.ts) against the function allowlist (sql-allowlist.ts).
 *
 * Refusal codes (stable; messages never quote the SQL, a path or a setting, only the user's own identifiers):
 *
 * | code                             | when                                                                              |
 * |----------------------------------|-----------------------------------------------------------------------------------|
 * | `sql_empty`                      | there is no statement, only blanks or comments                                    |
 * | `sql_syntax_error`               | DuckDB cannot parse the SQL (the character offset is given when known), or NUL   |
 * | `sql_not_select`                 | the statement is not a SELECT: PRAGMA, SET, RESET, COPY, ATTACH, INSTALL, LOAD,   |
 * |                                  | CALL, EXPORT, EXPLAIN, CREATE, PIVOT …; or DESCRIBE, SHOW, SUMMARIZE             |
 * | `sql_multiple_statements`        | more than one statement                                                           |
 * | `sql_unknown_table`              | a table is neither a declared alias nor a CTE in scope (`sqlite_master`, …)       |
 * | `sql_qualified_name`             | a table or function has a schema or catalog prefix (`main.x`, `pg_catalog.f()`)   |
 * | `sql_file_not_allowed`           | FROM names a file: a string (`FROM 'x.parquet'`) or a path-like name               |
 * | `sql_table_function_not_allowed` | a table function other than `unnest` in FROM (`read_csv`, `range`, `duckdb_*` …) |
 * | `sql_function_not_allowed`       | a function, aggregate, window function or operator outside the allowlist        |
 * | `sql_recursive_cte`              | `WITH RECURSIVE`, including `USING KEY`                                           |
 * | `sql_parameter_not_allowed`      | a prepared-statement parameter (`?`, `$1`, `$name`)                               |
 * | `sql_unsupported_syntax`         | DEFAULT, time travel (`AT (…)`), or a node kind this check does not know         |
 * | `sql_too_complex`                | over 64 KiB, over DuckDB's expression depth, or over the node or depth caps       |
 */
import { DuckDBInstance, type DuckDBConnection, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { refuse, type AstObject, type SqlRefusal } from './sql-rules.ts';
import { countStatements, saysWithRecursive, SqlSource } from './sql-source.ts';
import { walkSelect } from './sql-walk.ts';

/** The outcome of a check; `orderedAtTop` says the outermost query has ORDER BY, `tablesUsed` lists the aliases read. */
export type SqlCheck = { ok: true; orderedAtTop: boolean; tablesUsed: string[] } | SqlRefusal;

/** Longest SQL (UTF-8 bytes) the parser looks at; the API allows 8 KiB, this guards direct callers. */
export const MAX_SQL_BYTES = 64 * 1024;

/** What `json_serialize_sql` returns. */
interface SerializedSql {
  error?: boolean;
  error_type?: string;
  error_message?: string;
  position?: string;
  statements?: { node?: AstObject }[];
}

const tooComplex = () => refuse('sql_too_complex', { bytes: MAX_SQL_BYTES });
const notSelect = () => refuse('sql_not_select');
const multipleStatements = () => refuse('sql_multiple_statements');

/** Turns a parse error into a refusal that keeps DuckDB's position but never its message (it quotes the SQL). */
function refuseParseError(result: SerializedSql, sql: string): SqlRefusal {
  const message = result.error_message ?? '';
  if (/max expression depth|memory exhausted|stack depth/i.test(message)) return tooComplex();
  if (result.error_type === 'not implemented' && /only select statements/i.test(message)) return countStatements(sql) > 1 ? multipleStatements() : notSelect();
  if (/named and positional parameters/i.test(message)) return refuse('sql_parameter_not_allowed');
  const position = result.position === undefined ? undefined : new SqlSource(sql).indexOfCodePoint(Number(result.position));
  if (position === undefined) return refuse('sql_syntax_error');
  return { ...refuse('sql_syntax_error', { position }), position };
}

/** Holds one locked-down in-memory DuckDB instance used only to parse. Long-lived (one per API process). */
export class SqlParser {
  readonly #instance: DuckDBInstance;
  readonly #connection: DuckDBConnection;
  readonly #statement: DuckDBPreparedStatement;
  /** Checks run one at a time: binding and running the shared statement must not interleave. */
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  private constructor(instance: DuckDBInstance, connection: DuckDBConnection, statement: DuckDBPreparedStatement) {
    this.#instance = instance;
    this.#connection = connection;
    this.#statement = statement;
  }

  /** Opens the parser: no extensions, no external access, then the configuration locked. */
  static async create(): Promise<SqlParser> {
    const instance = await DuckDBInstance.create(':memory:', {
      threads: '1',
      memory_limit: '256MB',
      temp_directory: '',
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      allow_community_extensions: 'false',
      allow_unsigned_extensions: 'false',
      // Last: DuckDB refuses to change path settings such as temp_directory once external access is off.
      enable_external_access: 'false',
    });
    const connection = await instance.connect();
    try {
      await connection.run('SET lock_configuration = true');
      const statement = await connection.prepare('SELECT json_serialize_sql(?::VARCHAR)');
      return new SqlParser(instance, connection, statement);
    } catch (error) {
      connection.closeSync();
      instance.closeSync();
      throw error;
    }
  }

  /**
   * Parses and checks `sql`; `aliases` are the table names the request declared (case-insensitive match as DuckDB does).
   * @example
   * const check = await parser.check('SELECT name FROM countries ORDER BY name', ['countries']);
   * // { ok: true, orderedAtTop: true, tablesUsed: ['countries'] }
   */
  check(sql: string, aliases: readonly string[]): Promise<SqlCheck> {
    const run = this.#queue.then(() => this.#check(sql, aliases));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #check(sql: string, aliases: readonly string[]): Promise<SqlCheck> {
    if (this.#closed) throw new Error('SqlParser is closed');
    if (sql.includes('\0')) return refuse('sql_syntax_error', { nul: true });
    if (Buffer.byteLength(sql, 'utf8') > MAX_SQL_BYTES) return tooComplex();
    this.#statement.bindVarchar(1, sql);
    const serialized = (await this.#statement.runAndReadAll()).getRows()[0]?.[0];
    const result = JSON.parse(String(serialized)) as SerializedSql;
    if (result.error) return refuseParseError(result, sql);
    const statements = result.statements ?? [];
    if (statements.length === 0) return refuse('sql_empty');
    if (statements.length > 1) return multipleStatements();
    if (saysWithRecursive(sql)) return refuse('sql_recursive_cte');
    const declared = new Map(aliases.map((alias) => [alias.toLowerCase(), alias]));
    const used = new Set<string>();
    const walked = walkSelect(statements[0]!.node ?? {}, { source: new SqlSource(sql), aliases: declared, used });
    if ('ok' in walked) return walked;
    return { ok: true, orderedAtTop: walked.orderedAtTop, tablesUsed: aliases.filter((alias, i) => used.has(alias) && aliases.indexOf(alias) === i) };
  }

  /** Closes the DuckDB instance; later checks throw. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#statement.destroySync();
    this.#connection.closeSync();
    this.#instance.closeSync();
  }
}
