import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

/** Argument schemas of the prompts, made once per process rather than by every request's server. */
const PROMPT_ARGS = {
  collection: z.string().describe('Collection slug.'),
  dataset: z.string().describe('Dataset slug.'),
  question: z.string().max(2000).describe('The question to answer.'),
};

/** The prompts of the MCP server: one that walks an agent through a dataset with the tools, one that answers a question. */
export function addPrompts(server: McpServer): void {
  server.registerPrompt(
    'explore_dataset',
    {
      title: 'Explore a dataset',
      description: 'Read a dataset, its columns, and a first page of its rows.',
      argsSchema: { collection: PROMPT_ARGS.collection, dataset: PROMPT_ARGS.dataset },
    },
    ({ collection, dataset }) => ({
      messages: [{
        role: 'user',
        content: {
          type: 'text',
          text: `Explore the dataset "${dataset}" of collection "${collection}" in the geoshelf catalog. Call get_dataset for its files and their ids, `
            + 'get_file on each file for its columns, then run_query with one source (alias t) and SELECT * FROM t LIMIT 10, '
            + 'and describe what the data holds, its extent (get_query_bounds) and which columns look useful.',
        },
      }],
    }),
  );
  server.registerPrompt(
    'write_query',
    {
      title: 'Write a query for a question',
      description: 'Answer a question about a dataset with SQL run by the query service.',
      argsSchema: PROMPT_ARGS,
    },
    ({ collection, dataset, question }) => ({
      messages: [{
        role: 'user',
        content: {
          type: 'text',
          text: `Answer this question with the dataset "${dataset}" of collection "${collection}" in the geoshelf catalog: ${question}\n`
            + 'Call get_dataset for its files and their ids, get_file for the columns of the file that fits, then run_query with one SELECT '
            + '(the alias is the table name; ORDER BY makes pages stable). If has_more is true, get_query_page with next_offset reads on. '
            + 'A failed call answers a code and a message: fix the SQL as the message says and run it again.',
        },
      }],
    }),
  );
}
