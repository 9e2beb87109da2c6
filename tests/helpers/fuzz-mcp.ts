import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { MCP_TOOLS } from '../../core/api/mcp/tools.ts';
import { QueryRequestSchema } from '../../schemas/query.ts';
import { checkRequests, errorLeaks, jsonPost, sqlOf, type FuzzContext, type FuzzRunOptions, type FuzzTally } from './fuzz.ts';
import { send, type FuzzResponse } from './fuzz-server.ts';
import { hostileText, jsonSchemaValue, mutatedToken, type ValuePools } from './fuzz-values.ts';
import { queryBody } from './sql-grammar.ts';

type Json = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** A tool as `tools/list` serves it. */
interface ServedTool {
  name: string;
  inputSchema: Json;
  outputSchema: Json;
}

/** One JSON-RPC call to /mcp and how it is sent. */
interface McpCall {
  payload: unknown;
  headers: Record<string, string>;
}

/** Statuses /mcp may answer: JSON-RPC results, 202 to notifications, and the transport's refusals. */
const MCP_STATUSES = new Set([200, 202, 400, 403, 405, 406, 413, 415]);
/** JSON-RPC's "Internal error": the MCP counterpart of a 500. */
const INTERNAL_ERROR = -32603;
const ACCEPT = 'application/json, text/event-stream';

/**
 * Tool calls built from the tools the server lists (so a tool added later is fuzzed too): arguments from each
 * input schema with catalog values by name, `run_query` from the SQL grammar, real and mangled query ids and
 * tokens; mixed with unknown tools, other methods, batches, broken JSON and wrong headers.
 */
export async function fuzzMcp(context: FuzzContext, options: FuzzRunOptions): Promise<FuzzTally> {
  const tools = await listTools(context);
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const outputs = new Map<string, ValidateFunction>(tools.map((tool) => [tool.name, ajv.compile(tool.outputSchema)]));
  const pools = toolPools(context);
  const queryArguments = queryBody(context.harvest.sources).map((test) => test.body);
  const argumentsOf = (tool: ServedTool) => (MCP_TOOLS[tool.name as keyof typeof MCP_TOOLS]?.input === QueryRequestSchema.shape ? queryArguments : jsonSchemaValue(tool.inputSchema, pools));
  const call = fc.oneof(...tools.map((tool) => argumentsOf(tool).map((args) => ({ name: tool.name, arguments: args }))));
  const payload = fc.oneof(
    { weight: 12, arbitrary: fc.tuple(call, fc.nat()).map(([params, id]) => ({ jsonrpc: '2.0', id, method: 'tools/call', params })) },
    { weight: 1, arbitrary: fc.tuple(hostileText(), fc.jsonValue({ maxDepth: 2 })).map(([name, args]) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } })) },
    { weight: 1, arbitrary: fc.constantFrom('tools/list', 'ping', 'initialize', 'resources/templates/list', 'prompts/list', 'nope', '__proto__').map((method) => ({ jsonrpc: '2.0', id: 'x', method })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('collections', '__proto__', '..', ''), hostileText()).map(([collection, dataset]) => ({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: `geoshelf://collections/${collection}/datasets/${encodeURIComponent(dataset.toWellFormed())}` } })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('explore_dataset', 'write_query', 'nope'), fc.dictionary(fc.constantFrom('collection', 'dataset', 'question', '__proto__'), hostileText())).map(([name, args]) => ({ jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name, arguments: args } })) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom({ jsonrpc: '2.0', id: 4, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '1.0', id: 5, method: 'ping' }), { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constantFrom('{', '', 'null', '[]', '{"jsonrpc":"2.0"}', JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'get_source', arguments: { collection: 'a', dataset: 'b', source_id: 1, x: Array.from({ length: 600 }, (_, index) => index) } } })) },
  );
  const headers = fc.oneof(
    { weight: 10, arbitrary: fc.constant({ accept: ACCEPT, 'content-type': 'application/json' }) },
    { weight: 1, arbitrary: fc.record({ accept: fc.constantFrom(ACCEPT, 'application/json', 'text/html', ''), 'content-type': fc.constantFrom('application/json', 'text/plain', ''), origin: fc.constantFrom('https://evil.example', 'null'), 'mcp-protocol-version': fc.constantFrom('2025-06-18', '1999-01-01', 'x') }, { requiredKeys: ['accept'] }) },
  );
  const calls = fc.record({ payload, headers }) as fc.Arbitrary<McpCall>;
  const toRequest = (value: McpCall) => ({ ...jsonPost('/mcp', null, value.headers), body: typeof value.payload === 'string' ? value.payload : JSON.stringify(value.payload) });
  return checkRequests(context, 'mcp', calls, toRequest, (value, response) => mcpProblems(context, value, response, outputs), options, describeOutcome);
}

/** `get_dataset ok`, `run_query error sql_not_select`, `ping 200`: what a call came to, for the tally. */
function describeOutcome(call: McpCall, response: FuzzResponse): string {
  const request = call.payload as Json | null;
  const method = typeof request?.method === 'string' ? request.method : Array.isArray(request) ? 'batch' : 'not JSON-RPC';
  if (method !== 'tools/call' || response.status !== 200) return `${method} ${response.status}`;
  try {
    const result = (JSON.parse(response.body.toString('utf8')) as Json).result as Json | undefined;
    const text = String(result?.content?.[0]?.text ?? '');
    const code = text.startsWith('{') ? (JSON.parse(text) as Json).code : text.slice(0, 16);
    return `${String(request?.params?.name).slice(0, 20)} ${result?.isError ? `error ${code}` : 'ok'}`;
  } catch {
    return `${method} ${response.status}`;
  }
}

async function listTools(context: FuzzContext): Promise<ServedTool[]> {
  const response = await send(context.server.origin, jsonPost('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: ACCEPT }));
  return (JSON.parse(response.body.toString('utf8')) as { result: { tools: ServedTool[] } }).result.tools;
}

/** Catalog values by tool argument name: `collection` takes the collection slugs the crawl found, and so on. */
function toolPools(context: FuzzContext): ValuePools {
  const { pools, sources } = context.harvest;
  const byName: ValuePools = new Map(pools);
  for (const name of ['collection', 'dataset', 'file']) byName.set(name, [...(pools.get(`${name}Slug`) ?? []), ...(pools.get('slug') ?? [])]);
  byName.set('source_id', sources.map((source) => String(source.file_source_id)));
  const tokens = context.queries.map((query) => query.query_token);
  byName.set('query_token', fc.sample(mutatedToken(tokens), { numRuns: 40, seed: 1 }));
  return byName;
}

/**
 * Problems of an /mcp answer: a status outside the transport's, a JSON-RPC internal error, a tool failure that
 * is not a `{code, message}` document (or that is an internal_error), or a result that its output schema refuses.
 */
function mcpProblems(context: FuzzContext, call: McpCall, response: FuzzResponse, outputs: Map<string, ValidateFunction>): string[] {
  if (!MCP_STATUSES.has(response.status)) return [`/mcp answered ${response.status}`];
  if (response.body.length === 0) return [];
  let messages: Json[];
  try {
    messages = [JSON.parse(response.body.toString('utf8'))].flat();
  } catch {
    return ['/mcp answered a body that is not JSON'];
  }
  const problems: string[] = [];
  const request = call.payload as Json;
  for (const message of messages) {
    if (message.error?.code === INTERNAL_ERROR && !isSdkParamsRefusal(message.error.message)) problems.push(`JSON-RPC internal error: ${JSON.stringify(message.error).slice(0, 200)}`);
    const result = message.result as Json | undefined;
    if (request?.method !== 'tools/call' || !result) continue;
    const validate = outputs.get(request.params?.name);
    if (result.isError) problems.push(...toolErrorProblems(result), ...errorLeaks(context, JSON.stringify(result), sqlOf({ method: 'POST', target: '/mcp', headers: {}, body: JSON.stringify(request) })));
    else if (validate && !validate(result.structuredContent)) problems.push(`${request.params.name}: structuredContent does not match its outputSchema: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
  }
  return problems;
}

/**
 * The MCP SDK (1.32) answers a request whose params break the protocol's own schema (tools/call with `arguments`
 * an array, resources/read without a string uri) with -32603 and the zod issues as message, where JSON-RPC says
 * -32602: upstream issue modelcontextprotocol/typescript-sdk#2284. That refusal is the SDK's, not a defect of a
 * geoshelf handler, so it is let through; any other internal error fails the property.
 */
function isSdkParamsRefusal(message: unknown): boolean {
  try {
    const issues = JSON.parse(String(message)) as { path?: unknown[] }[];
    return Array.isArray(issues) && issues.length > 0 && issues.every((issue) => issue.path?.[0] === 'params');
  } catch {
    return false;
  }
}

/** A failed tool call says `{code, message}` (never internal_error), or is the SDK's own refusal of the input. */
function toolErrorProblems(result: Json): string[] {
  const text = String(result.content?.[0]?.text ?? '');
  if (text.startsWith('MCP error -32602')) return [];
  try {
    const failure = JSON.parse(text) as Json;
    if (typeof failure.code !== 'string' || typeof failure.message !== 'string') return [`a tool failure is not {code, message}: ${text.slice(0, 200)}`];
    return failure.code === 'internal_error' ? [`a tool failed with internal_error: ${text.slice(0, 200)}`] : [];
  } catch {
    return [`a tool failure is not JSON: ${text.slice(0, 200)}`];
  }
}
