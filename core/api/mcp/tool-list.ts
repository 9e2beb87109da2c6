import { z } from 'zod';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { makeSchemaPortable } from './portable-schema.ts';
import { MCP_TOOLS, READ_ONLY_ANNOTATIONS, type ToolDefinition } from './tools.ts';

/**
 * The dialect of the tool schemas: JSON Schema draft 7, named in `$schema` (MCP allows an explicit dialect besides its
 * default 2020-12). It is what the MCP SDK's own tools/list wrote, and what SDK 1.x clients check structuredContent
 * with (Ajv's draft-07 class): in 2020-12 a tuple is `prefixItems` with `items: false`, which draft 7 reads as "no
 * items", so every `bounds` would fail there.
 */
const TARGET = 'draft-7';

let cached: readonly Tool[] | undefined;

/**
 * The answer of `tools/list`, which the server card repeats: every tool of {@link MCP_TOOLS} with its words,
 * read-only annotations and portable input and output schemas. The schemas come from code, so they are converted once
 * per process (converting them took 60–140 ms of main thread on every tools/list) and frozen.
 */
export function listMcpTools(): readonly Tool[] {
  cached ??= deepFreeze(Object.values(MCP_TOOLS).map((tool) => describeTool(tool as ToolDefinition)));
  return cached;
}

function describeTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    // As the SDK reads them: the arguments as they come in, the structured content as it goes out.
    inputSchema: toJsonSchema(z.object(tool.input), 'input') as Tool['inputSchema'],
    outputSchema: toJsonSchema(tool.output, 'output') as Tool['outputSchema'],
    annotations: { title: tool.title, ...READ_ONLY_ANNOTATIONS },
  };
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  return makeSchemaPortable(z.toJSONSchema(schema, { target: TARGET, io }) as Record<string, unknown>);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
