import { FastResponse } from 'srvx';
import { requestBodyTooLargeMessage } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describeQueryError, QueryFailure } from '../query/errors.ts';

/**
 * MCP's error vocabulary, in one place: what a failed tool call or resource read looks like on the wire
 * ({@link renderMcpFailure}), and what `/mcp` answers when it refuses a request before any MCP server is made
 * ({@link refuseMcpRequest}). The query tools fail with the engine's QUERY_ERRORS (query/errors.ts), as /api/queries
 * does; the catalog tools with {@link CatalogFailure}.
 */

/** JSON-RPC 2.0's code of a body that is no JSON. */
const PARSE_ERROR = -32700;
/** JSON-RPC 2.0's code of a message that is not a valid request: what a batch is to this server. */
const INVALID_REQUEST = -32600;
/** JSON-RPC 2.0's implementation-defined server error, which the SDK's transport also answers with. */
const SERVER_ERROR = -32000;
/** JSON-RPC 2.0's code of an error inside the server. */
const INTERNAL_ERROR = -32603;
/** JSON-RPC code of a resource that does not exist (MCP specification, resources). */
const RESOURCE_NOT_FOUND = -32002;

/** Codes of a failed catalog read, beside the QUERY_ERRORS codes; both are ToolErrorSchema's `code`. */
export type CatalogFailureCode = 'not_found' | 'invalid_parameter';

/** A catalog read that failed, as the agent sees it: a stable code and a message safe to show. */
export class CatalogFailure extends Error {
  readonly code: CatalogFailureCode;

  constructor(code: CatalogFailureCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** The failure of a slug that names nothing the catalog routes serve (malformed, or a fixed route's word). */
export function createSlugNotFound(): CatalogFailure {
  return new CatalogFailure('not_found', 'There is no such collection, dataset or file; list_collections and search_datasets give the slugs.');
}

/**
 * A failure on MCP's wire. A tool's is a tool result with `isError` whose text is `{"code", "message"}`
 * (ToolErrorSchema), never a protocol error, and without structuredContent: clients check any structuredContent
 * against the outputSchema, even on errors. A resource's is the JSON-RPC error "resource not found", to throw from
 * the read; an error that is no CatalogFailure is given back as it is, for the SDK to answer.
 * Anything unexpected in a tool is logged and answered without its detail.
 */
export function renderMcpFailure(error: unknown, wire: 'tool'): CallToolResult;
export function renderMcpFailure(error: unknown, wire: 'resource'): unknown;
export function renderMcpFailure(error: unknown, wire: 'tool' | 'resource'): CallToolResult | unknown {
  if (wire === 'resource') return error instanceof CatalogFailure ? new McpError(RESOURCE_NOT_FOUND, error.message) : error;
  const { code, message } = describeToolFailure(error);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ code, message }) }] };
}

function describeToolFailure(error: unknown): { code: string; message: string } {
  if (error instanceof CatalogFailure) return { code: error.code, message: error.message };
  if (error instanceof QueryFailure) return { code: error.body.code, message: error.body.message };
  console.error('unexpected error in an MCP tool', error);
  const { code, message } = describeQueryError('internal_error');
  return { code, message };
}

/** A refusal of `/mcp` before any server is made: HTTP status, JSON-RPC code and message, and extra headers. */
interface Refusal {
  status: number;
  code: number;
  message: string;
  headers?: Record<string, string>;
}

/** Every reason `/mcp` refuses a request before reading it as JSON-RPC, with the details its message names. */
const REFUSALS = {
  rate: (seconds: number): Refusal => ({
    status: 429, code: SERVER_ERROR, message: `Too many requests: this client is over its rate on /mcp; retry in ${seconds} s.`, headers: { 'retry-after': String(seconds) },
  }),
  method: (): Refusal => ({ status: 405, code: SERVER_ERROR, message: 'Method not allowed: this MCP endpoint is stateless and accepts POST only.', headers: { allow: 'POST' } }),
  origin: (): Refusal => ({ status: 403, code: SERVER_ERROR, message: 'Forbidden: the Origin header names another site.' }),
  unreadable: (): Refusal => ({ status: 400, code: PARSE_ERROR, message: 'Parse error: the request body could not be read.' }),
  too_large: (maxBytes: number): Refusal => ({ status: 413, code: SERVER_ERROR, message: requestBodyTooLargeMessage(maxBytes) }),
  too_deep: (problem: string): Refusal => ({ status: 400, code: INVALID_REQUEST, message: `Invalid Request: the body ${problem}.` }),
  internal: (): Refusal => ({ status: 500, code: INTERNAL_ERROR, message: 'Internal error: it has been logged.' }),
  batch: (): Refusal => ({
    status: 400, code: INVALID_REQUEST, message: 'Invalid Request: JSON-RPC batches are not supported; send one message per request (MCP 2025-11-25 has no batches).',
  }),
};

/** Why `/mcp` refused a request. */
export type RefusalReason = keyof typeof REFUSALS;

/**
 * The answer of a request `/mcp` refuses before any server is made: a JSON-RPC error with `id: null` (no request id
 * is known yet), never stored by a cache.
 * @example refuseMcpRequest('rate', 2) // 429, Retry-After: 2
 */
export function refuseMcpRequest<R extends RefusalReason>(reason: R, ...details: Parameters<(typeof REFUSALS)[R]>): Response {
  const { status, code, message, headers = {} } = (REFUSALS[reason] as (...values: unknown[]) => Refusal)(...details);
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  return new FastResponse(body, { status, headers: { ...headers, 'content-type': 'application/json', 'cache-control': 'no-store' } });
}

/** The error mapper of `/mcp` (server/surface-kit.ts): what escaped the SDK's transport is logged and answered 500. */
export function mapMcpError(error: unknown): Response {
  console.error('unexpected error on /mcp', error);
  return refuseMcpRequest('internal');
}
