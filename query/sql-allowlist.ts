/**
 * The functions a query may call (layer 1 of the query sandbox, DESIGN.md "Query sandbox").
 *
 * Curated by hand from `duckdb_functions()` of DuckDB 1.5.6 (942 names, scalar, aggregate, window, macro,
 * table and pragma) family by family. A name is here only if it computes from its arguments alone and its
 * output is bounded by its input. Names are lowercase, as DuckDB compares them. Left out on purpose, and
 * why (when unsure, a function was left out):
 * - reads files or the network: `read_*`, `glob`, `parquet_*`, `sniff_csv`, `*_scan`, `query`, `query_table`;
 * - reads settings, variables, the catalog, logs or the process: `current_setting`, `getvariable`,
 *   `duckdb_*`, `pragma_*`, `current_database`, `current_schema(s)`, `current_catalog`, `current_query*`,
 *   `current_connection_id`, `current_transaction_id`, `txid_current`, `in_search_path`, `version`,
 *   `which_secret`, `stats`, `vector_type`, `json_serialize_sql`, `json_serialize_plan`,
 *   `json_deserialize_sql`, `json_execute_serialized_sql`, `parse_duckdb_log_message`, every `pg_catalog`
 *   macro (`pg_sleep`, `pg_get_viewdef`, `format_type`, `has_*_privilege`, …);
 * - side effects or waiting: `enable_logging`, `disable_logging`, `write_log`, `truncate_duckdb_logs`,
 *   `checkpoint`, `sleep_ms`, `nextval`, `currval`, `setseed`, `error`;
 * - builds one huge value from a small call (`memory_limit` does not bound single values, DESIGN.md):
 *   `repeat`, `lpad`, `rpad`, `range`, `generate_series`, `generate_subscripts`, `list_resize`,
 *   `array_resize`, `printf`, `format` (width specifiers), `bitstring`, `bitstring_agg`, `equi_width_bins`,
 *   `reservoir_quantile` (sample size), `list_reduce`/`reduce`/`array_reduce` (doubling accumulators),
 *   `repeat_row`, `test_all_types`;
 * - internals and type plumbing: `__internal_*`, `icu_collate_*`, `icu_sort_key`, `combine`, `finalize`,
 *   `sum_no_overflow`, `variant_*`, `remap_struct`, `replace_type`, `make_type`, `cast_to_type`, `get_type`,
 *   `alias`, `constant_or_null`, `create_sort_key`, `timetz_byte_comparable`, `can_cast_implicitly`,
 *   `is_histogram_other_bin`, `unpivot_list`, `from_json`/`json_transform` (unsure), `parse_*path`.
 */

/** Operators as the parser names them (`a + b` is the function `+`), with their named twins. */
const OPERATORS = [
  '+', '-', '*', '/', '//', '%', '**', '^', '&', '|', '<<', '>>', '~', '@', '!__postfix', '||',
  '~~', '!~~', '~~*', '!~~*', '~~~', '^@', '->>', '<->', '<=>', '<@', '@>', '&&',
  'add', 'subtract', 'multiply', 'divide', 'mod', 'xor', 'pow', 'power', 'factorial',
];

const MATH = [
  'abs', 'acos', 'acosh', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'bar', 'bit_count', 'cbrt', 'ceil',
  'ceiling', 'cos', 'cosh', 'cot', 'degrees', 'even', 'exp', 'fdiv', 'floor', 'fmod', 'gamma', 'gcd',
  'greatest', 'greatest_common_divisor', 'isfinite', 'isinf', 'isnan', 'lcm', 'least', 'least_common_multiple',
  'lgamma', 'ln', 'log', 'log10', 'log2', 'nextafter', 'pi', 'radians', 'random', 'round', 'round_even',
  'roundbankers', 'sign', 'signbit', 'sin', 'sinh', 'sqrt', 'tan', 'tanh', 'to_base', 'trunc',
];

/** String functions whose output is at most a small multiple of their input. */
const STRING = [
  'array_extract', 'ascii', 'base64', 'bin', 'bit_length', 'char_length', 'character_length', 'chr', 'concat',
  'concat_ws', 'contains', 'damerau_levenshtein', 'decode', 'editdist3', 'encode', 'ends_with',
  'format_bytes', 'formatreadabledecimalsize', 'formatreadablesize', 'from_base64', 'from_binary', 'from_hex',
  'hamming', 'hash', 'hex', 'ilike_escape', 'instr', 'jaccard', 'jaro_similarity', 'jaro_winkler_similarity',
  'lcase', 'left', 'left_grapheme', 'len', 'length', 'length_grapheme', 'levenshtein', 'like_escape', 'lower',
  'ltrim', 'md5', 'md5_number', 'md5_number_lower', 'md5_number_upper', 'mismatches', 'nfc_normalize',
  'not_ilike_escape', 'not_like_escape', 'octet_length', 'ord', 'position', 'prefix', 'replace', 'reverse',
  'right', 'right_grapheme', 'rtrim', 'sha1', 'sha256', 'split', 'split_part', 'starts_with', 'str_split',
  'string_split', 'string_to_array', 'strip_accents', 'strlen', 'strpos', 'substr', 'substring',
  'substring_grapheme', 'suffix', 'to_base64', 'to_binary', 'to_hex', 'translate', 'trim', 'ucase', 'unbin',
  'unhex', 'unicode', 'upper', 'url_decode', 'url_encode',
];

/** RE2 regular expressions: linear time, and RE2 refuses patterns whose program is too large. */
const REGEXP = [
  'regexp_escape', 'regexp_extract', 'regexp_extract_all', 'regexp_full_match', 'regexp_matches',
  'regexp_replace', 'regexp_split_to_array', 'regexp_split_to_table', 'str_split_regex', 'string_split_regex',
];

/** Dates, times and intervals; `current_date` and friends are also written without parentheses. */
const DATE_TIME = [
  'age', 'ago', 'century', 'current_date', 'current_localtime', 'current_localtimestamp', 'current_time',
  'current_timestamp', 'date_add', 'date_diff', 'date_part', 'date_sub', 'date_trunc', 'datediff', 'datepart',
  'datesub', 'datetrunc', 'day', 'dayname', 'dayofmonth', 'dayofweek', 'dayofyear', 'days_in_month', 'decade',
  'epoch', 'epoch_ms', 'epoch_ns', 'epoch_us', 'era', 'get_current_time', 'get_current_timestamp', 'hour',
  'isodow', 'isoyear', 'julian', 'last_day', 'localtime', 'localtimestamp', 'make_date', 'make_time',
  'make_timestamp', 'make_timestamp_ms', 'make_timestamp_ns', 'make_timestamptz', 'microsecond', 'millennium',
  'millisecond', 'minute', 'month', 'monthname', 'nanosecond', 'normalized_interval', 'now', 'quarter',
  'second', 'strftime', 'strptime', 'time_bucket', 'timezone', 'timezone_hour', 'timezone_minute',
  'to_centuries', 'to_days', 'to_decades', 'to_hours', 'to_microseconds', 'to_millennia', 'to_milliseconds',
  'to_minutes', 'to_months', 'to_quarters', 'to_seconds', 'to_timestamp', 'to_weeks', 'to_years', 'today',
  'transaction_timestamp', 'try_strptime', 'week', 'weekday', 'weekofyear', 'year', 'yearweek',
];

/** Aggregates; DuckDB caps the `n` of `min`/`max`/`arg_*`/`approx_top_k` below one million. */
const AGGREGATES = [
  'any_value', 'approx_count_distinct', 'approx_quantile', 'approx_top_k', 'arbitrary', 'arg_max',
  'arg_max_null', 'arg_max_nulls_last', 'arg_min', 'arg_min_null', 'arg_min_nulls_last', 'argmax', 'argmin',
  'array_agg', 'avg', 'bit_and', 'bit_or', 'bit_xor', 'bool_and', 'bool_or', 'corr', 'count', 'count_if',
  'count_star', 'countif', 'covar_pop', 'covar_samp', 'entropy', 'favg', 'first', 'fsum', 'geomean',
  'geometric_mean', 'group_concat', 'histogram', 'histogram_exact', 'json_group_array', 'json_group_object',
  'json_group_structure', 'kahan_sum', 'kurtosis', 'kurtosis_pop', 'last', 'list', 'listagg', 'mad', 'max',
  'max_by', 'mean', 'median', 'min', 'min_by', 'mode', 'product', 'quantile', 'quantile_cont', 'quantile_disc',
  'regr_avgx', 'regr_avgy', 'regr_count', 'regr_intercept', 'regr_r2', 'regr_slope', 'regr_sxx', 'regr_sxy',
  'regr_syy', 'sem', 'skewness', 'stddev', 'stddev_pop', 'stddev_samp', 'string_agg', 'sum', 'sumkahan',
  'var_pop', 'var_samp', 'variance', 'wavg', 'weighted_avg',
];

/** Functions that exist only as window functions (`… OVER (…)`); every aggregate also works as one. */
const WINDOW = [
  'cume_dist', 'dense_rank', 'fill', 'first_value', 'lag', 'last_value', 'lead', 'nth_value', 'ntile',
  'percent_rank', 'rank', 'rank_dense', 'row_number',
];

/** Lists and arrays, bounded by the lists they are given; lambdas are checked like any expression. */
const LIST = [
  'apply', 'array_aggr', 'array_aggregate', 'array_append', 'array_apply', 'array_cat', 'array_concat',
  'array_contains', 'array_cosine_distance', 'array_cosine_similarity', 'array_cross_product', 'array_distance',
  'array_distinct', 'array_dot_product', 'array_filter', 'array_grade_up', 'array_has', 'array_has_all',
  'array_has_any', 'array_indexof', 'array_inner_product', 'array_intersect', 'array_length',
  'array_negative_dot_product', 'array_negative_inner_product', 'array_pop_back', 'array_pop_front',
  'array_position', 'array_prepend', 'array_push_back', 'array_push_front', 'array_reverse',
  'array_reverse_sort', 'array_select', 'array_slice', 'array_sort', 'array_to_string',
  'array_to_string_comma_default', 'array_transform', 'array_unique', 'array_value', 'array_where', 'array_zip',
  'aggregate', 'cardinality', 'filter', 'flatten', 'grade_up', 'list_aggr', 'list_aggregate', 'list_any_value',
  'list_append', 'list_apply', 'list_approx_count_distinct', 'list_avg', 'list_bit_and', 'list_bit_or',
  'list_bit_xor', 'list_bool_and', 'list_bool_or', 'list_cat', 'list_concat', 'list_contains',
  'list_cosine_distance', 'list_cosine_similarity', 'list_count', 'list_distance', 'list_distinct',
  'list_dot_product', 'list_element', 'list_entropy', 'list_extract', 'list_filter', 'list_first',
  'list_grade_up', 'list_has', 'list_has_all', 'list_has_any', 'list_histogram', 'list_indexof',
  'list_inner_product', 'list_intersect', 'list_kurtosis', 'list_kurtosis_pop', 'list_last', 'list_mad',
  'list_max', 'list_median', 'list_min', 'list_mode', 'list_negative_dot_product', 'list_negative_inner_product',
  'list_pack', 'list_position', 'list_prepend', 'list_product', 'list_reverse', 'list_reverse_sort',
  'list_select', 'list_sem', 'list_skewness', 'list_slice', 'list_sort', 'list_stddev_pop', 'list_stddev_samp',
  'list_string_agg', 'list_sum', 'list_transform', 'list_unique', 'list_value', 'list_var_pop', 'list_var_samp',
  'list_where', 'list_zip', 'unnest',
];

const STRUCT_MAP = [
  'element_at', 'map', 'map_concat', 'map_contains', 'map_contains_entry', 'map_contains_value', 'map_entries',
  'map_extract', 'map_extract_value', 'map_from_entries', 'map_keys', 'map_values', 'row', 'struct_concat',
  'struct_contains', 'struct_extract', 'struct_extract_at', 'struct_has', 'struct_indexof', 'struct_insert',
  'struct_keys', 'struct_pack', 'struct_position', 'struct_update', 'struct_values', 'union_extract',
  'union_tag', 'union_value',
];

const JSON_FUNCTIONS = [
  'array_to_json', 'json', 'json_array', 'json_array_length', 'json_contains', 'json_exists', 'json_extract',
  'json_extract_path', 'json_extract_path_text', 'json_extract_string', 'json_keys', 'json_merge_patch',
  'json_object', 'json_pretty', 'json_quote', 'json_structure', 'json_type', 'json_valid', 'json_value',
  'row_to_json', 'to_json',
];

/** The core GEOMETRY functions of DuckDB 1.5 (no spatial extension, DESIGN.md decision 2). */
const GEOMETRY = [
  'st_asbinary', 'st_astext', 'st_aswkb', 'st_aswkt', 'st_crs', 'st_geomfromwkb', 'st_intersects_extent',
  'st_setcrs',
];

/** Conditionals, types, hashes and ids; `current_user` and friends are the constant 'duckdb'. */
const MISC = [
  'current_role', 'current_user', 'enum_code', 'enum_first', 'enum_last', 'enum_range', 'gen_random_uuid',
  'nullif', 'session_user', 'typeof', 'user', 'uuid', 'uuid_extract_timestamp', 'uuid_extract_version',
  'uuidv4', 'uuidv7',
];

/** Every allowed function by family, for documentation (the README lists them from here). */
export const ALLOWED_FUNCTION_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  operators: OPERATORS,
  math: MATH,
  string: STRING,
  regexp: REGEXP,
  'date and time': DATE_TIME,
  aggregates: AGGREGATES,
  window: WINDOW,
  lists: LIST,
  'structs and maps': STRUCT_MAP,
  json: JSON_FUNCTIONS,
  geometry: GEOMETRY,
  other: MISC,
};

/** Every function, aggregate, window function and operator a query may call, lowercase. */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set(Object.values(ALLOWED_FUNCTION_FAMILIES).flat());

/** Aggregates that `list_aggregate(list, 'name')` may name. */
export const ALLOWED_AGGREGATES: ReadonlySet<string> = new Set(AGGREGATES);

/** Functions that call the aggregate named by their second argument; it must be a constant allowed aggregate. */
export const LIST_AGGREGATE_FUNCTIONS: ReadonlySet<string> = new Set(['aggregate', 'array_aggr', 'array_aggregate', 'list_aggr', 'list_aggregate']);

/** The only table function allowed in FROM: it expands a list the query already holds. */
export const ALLOWED_TABLE_FUNCTIONS: ReadonlySet<string> = new Set(['unnest']);

/**
 * Names DuckDB binds as function calls when they are written as a bare column (`SELECT current_schema`)
 * and no column has that name; the parser reports them as column references.
 */
export const SQL_VALUE_FUNCTIONS: ReadonlySet<string> = new Set([
  'current_catalog', 'current_date', 'current_role', 'current_schema', 'current_time', 'current_timestamp',
  'current_user', 'localtime', 'localtimestamp', 'session_user', 'user',
]);
