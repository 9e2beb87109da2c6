/** Quotes an identifier for DuckDB SQL. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Quotes a string literal for DuckDB SQL. */
export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** Maps a DuckDB type to the contract's type names, with further documented names for the rest. */
export function logicalType(duckdbType: string): string {
  const type = duckdbType.toUpperCase();
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/.test(type)) return 'integer';
  if (/^(FLOAT|DOUBLE|REAL)$/.test(type) || type.startsWith('DECIMAL')) return 'float';
  if (type === 'VARCHAR') return 'string';
  if (type === 'BOOLEAN') return 'boolean';
  if (type === 'DATE') return 'date';
  if (type.startsWith('TIMESTAMP')) return 'timestamp';
  if (type === 'TIME') return 'time';
  if (type === 'GEOMETRY') return 'geometry';
  if (type === 'BLOB') return 'binary';
  if (type === 'JSON') return 'json';
  if (type.startsWith('STRUCT')) return 'struct';
  if (type.endsWith('[]') || type.startsWith('MAP')) return 'list';
  return type.toLowerCase();
}
