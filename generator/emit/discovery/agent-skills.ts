/**
 * The agent skills under /.well-known/agent-skills: a SKILL.md per skill (the whole guide, and one per task an agent
 * comes for) and `index.json`, the Agent Skills discovery index that lists them with the digest of each. Agents that
 * load skills read the index and fetch the skills they need; /.well-known/ai-catalog.json lists the same skills.
 */
import { createHash } from 'node:crypto';
import type { CatalogIndex } from '../../../core/catalog-index.ts';
import { serializeJson, type TreeFile } from '../../../core/static-files.ts';
import { renderDictionarySection, renderErrorCodesSection, renderFindDataSection, renderMapSection } from './guide-sections.ts';
import { renderLlmsTxt } from './llms-txt.ts';
import { renderWalkthroughSection } from './query-walkthrough.ts';
import { findWorkedExample } from './worked-example.ts';

/** One agent skill: its name (a folder under /.well-known/agent-skills), what it is for, and its SKILL.md body. */
export interface AgentSkill {
  name: string;
  description: string;
  /** Two to five questions the skill answers, for the AI catalog's `representativeQueries`. */
  queries: string[];
  body: string;
}

/**
 * The skills of /.well-known/agent-skills: the whole guide, and one per task an agent comes for (find data, read a
 * dictionary, query and page, map a result), each made of the same sections as /llms.txt so they cannot disagree.
 */
export function listAgentSkills(index: CatalogIndex): AgentSkill[] {
  const base = index.settings.baseUrl;
  const example = findWorkedExample(index);
  const intro = `The geoshelf catalog at ${base} is read-only and needs no key. ${base}/llms.txt is the whole guide.`;
  return [
    {
      name: 'geoshelf-catalog',
      queries: ['Which geospatial datasets does this catalog hold?', 'Find a dataset of world cities and read its columns', 'Query a GeoParquet file with SQL and fetch the next page'],
      description: `Find geospatial datasets in the geoshelf catalog at ${base}, read their data dictionaries, query GeoParquet with SQL and page the results, over HTTP or MCP.`,
      body: renderLlmsTxt(index),
    },
    {
      name: 'geoshelf-find-data',
      queries: ['Find datasets about country boundaries', 'Which datasets carry a given tag?', 'List the files and download links of a dataset'],
      description: 'Find datasets in the geoshelf catalog: list collections, search datasets by words and tags, read a dataset with its files and sources.',
      body: `# Find data in geoshelf\n\n${intro}\n\n${renderFindDataSection(index, example)}\n`,
    },
    {
      name: 'geoshelf-read-dictionary',
      queries: ['What columns does this GeoParquet file have, and of which types?', 'Which values does a column take, and how many are null?'],
      description: 'Read the data dictionary of a geoshelf file: every column with its type, nulls, distinct values, examples and range.',
      body: `# Read a data dictionary in geoshelf\n\n${intro}\n\n${renderDictionarySection(index, example)}\n`,
    },
    {
      name: 'geoshelf-query-and-page',
      queries: ['Run a SQL query over a GeoParquet file', 'Fetch the second page of a query result', 'Download a query result as GeoParquet or CSV'],
      description: 'Run a SQL query over GeoParquet sources of the geoshelf catalog and fetch further pages with the query token, over HTTP or MCP.',
      body: `# Query and page in geoshelf\n\n${intro}\n\n${renderWalkthroughSection(index, example)}\n\n${renderErrorCodesSection()}\n`,
    },
    {
      name: 'geoshelf-map-result',
      queries: ['Draw a query result on a map', 'What is the extent of a query result?'],
      description: 'Draw a geoshelf query result on a map: its WGS84 bounds and its vector tiles, with the query token.',
      body: `# Map a query result from geoshelf\n\n${intro}\n\n${renderMapSection(index, example)}\n`,
    },
  ];
}

/** Where a skill's SKILL.md lives in the tree; its URL is this key under the base URL. */
export function skillKey(name: string): string {
  return `.well-known/agent-skills/${name}/SKILL.md`;
}

/** The skills' files: each SKILL.md, then `index.json`, whose digests are those of the SKILL.md bodies written. */
export function renderAgentSkillFiles(base: string, skills: AgentSkill[]): TreeFile[] {
  const written = skills.map((skill) => ({ skill, body: Buffer.from(renderSkillMd(skill)) }));
  const index = {
    $schema: 'https://schemas.agentskills.io/discovery/0.2.0/schema.json',
    skills: written.map(({ skill, body }) => ({
      name: skill.name,
      type: 'skill-md',
      description: skill.description,
      url: `${base}/${skillKey(skill.name)}`,
      digest: `sha256:${createHash('sha256').update(body).digest('hex')}`,
    })),
  };
  return [
    ...written.map(({ skill, body }): TreeFile => ({ key: skillKey(skill.name), body, type: 'text/markdown; charset=utf-8' })),
    { key: '.well-known/agent-skills/index.json', body: serializeJson(index), type: 'application/json' },
  ];
}

/** A skill as SKILL.md: YAML front matter (name, description) and its body. */
function renderSkillMd(skill: AgentSkill): string {
  return `---\nname: ${skill.name}\ndescription: ${skill.description}\n---\n\n${skill.body}`;
}

