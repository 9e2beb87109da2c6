import { PROBLEM_CONTENT_TYPE } from '../../core/constants.ts';
import type { CatalogIndex } from '../../core/catalog-index.ts';
import { renderProblem } from '../../core/api/catalog/problems.ts';
import { NOT_FOUND_KEY, serializeJson, type TreeFile } from '../../core/static-files.ts';
import { listAgentSkills, renderAgentSkillFiles } from './discovery/agent-skills.ts';
import { renderAiCatalog } from './discovery/ai-catalog.ts';
import { renderApiCatalog } from './discovery/api-catalog.ts';
import { renderLlmsTxt } from './discovery/llms-txt.ts';
import { renderMcpServerCard } from './discovery/mcp-server-card.ts';

/**
 * Every discovery file, one document or family per module of `discovery/`: /llms.txt, the agent skills and their
 * index, the API catalog, the MCP server card, the AI catalog, and the static 404 Problem.
 */
export function renderDiscoveryFiles(index: CatalogIndex): TreeFile[] {
  const base = index.settings.baseUrl;
  const skills = listAgentSkills(index);
  return [
    { key: 'llms.txt', body: Buffer.from(renderLlmsTxt(index)), type: 'text/plain; charset=utf-8' },
    ...renderAgentSkillFiles(base, skills),
    jsonFile('.well-known/api-catalog/index.json', renderApiCatalog(index), 'application/linkset+json'),
    jsonFile('.well-known/mcp/server-card.json', renderMcpServerCard(index)),
    jsonFile('.well-known/ai-catalog.json', renderAiCatalog(index, skills)),
    jsonFile(NOT_FOUND_KEY, renderProblem('not-found', 'There is no such route. Start from /api or read /api/openapi.', base), PROBLEM_CONTENT_TYPE),
  ];
}

/** A JSON document of the tree, written as every JSON file of the build is. */
function jsonFile(key: string, body: unknown, type = 'application/json'): TreeFile {
  return { key, body: serializeJson(body), type };
}
