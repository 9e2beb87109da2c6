import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier, quoteLiteral } from '../../core/sql.ts';
import type { ResolvedSource } from './sources.ts';

/** Limits of one sandboxed query. */
export interface SandboxSettings {
  threads: number;
  memoryLimitMb: number;
  maxResponseBytes: number;
  tileMaxFeatures: number;
}

/** An open sandbox: a connection that can read only its sources' files, and nothing can change that. */
export interface Sandbox {
  connection: DuckDBConnection;
  close: () => void;
}

/**
 * Layer 2 of the sandbox (DESIGN.md "Query sandbox"): a fresh DuckDB instance for one query. Extensions cannot
 * be installed or loaded, nothing spills to disk, threads and memory are bounded; `allowed_paths` is set to
 * this query's files, the aliases become views, then external access is switched off and the configuration
 * locked, so the query can neither read another file nor undo any of this.
 */
export async function openSandbox(sources: ResolvedSource[], settings: SandboxSettings): Promise<Sandbox> {
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    allow_community_extensions: 'false',
    allow_unsigned_extensions: 'false',
    temp_directory: '',
    threads: String(settings.threads),
    memory_limit: `${settings.memoryLimitMb}MB`,
  });
  const connection = await instance.connect();
  const close = () => {
    connection.closeSync();
    instance.closeSync();
  };
  try {
    const paths = [...new Set(sources.map((source) => source.path))];
    await connection.run(`SET allowed_paths = [${paths.map(quoteLiteral).join(', ')}]`);
    for (const source of sources) {
      await connection.run(`CREATE VIEW ${quoteIdentifier(source.alias)} AS SELECT * FROM read_parquet(${quoteLiteral(source.path)})`);
    }
    await connection.run('SET enable_external_access = false');
    await connection.run('SET lock_configuration = true');
  } catch (error) {
    close();
    throw error;
  }
  return { connection, close };
}
