import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { AxeResults, RunOptions } from 'axe-core';
import type { Page } from 'playwright-core';

/** An accessibility violation a person would hit: its rule, impact, help text and the elements at fault. */
export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  /** One line per element: its CSS selector and the start of its HTML. */
  nodes: string[];
}

/** WCAG 2.0/2.1/2.2 levels A and AA, plus axe's best practices (only their serious ones are kept). */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

const SERIOUS_IMPACTS = new Set(['serious', 'critical']);

let axeSource: Promise<string> | undefined;

function readAxeSource(): Promise<string> {
  axeSource ??= readFile(fileURLToPath(new URL('axe.min.js', import.meta.resolve('axe-core'))), 'utf8');
  return axeSource;
}

/**
 * Runs axe-core on the page as it is now and returns its serious and critical violations; an empty list
 * is the pass mark of every page type.
 * @example
 * expect(await findSeriousViolations(page)).toEqual([]);
 */
export async function findSeriousViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate(() => 'axe' in window);
  if (!loaded) await page.addScriptTag({ content: await readAxeSource() });
  const violations = await page.evaluate(async (tags) => {
    const { axe } = window as unknown as { axe: { run(context: Document, options: RunOptions): Promise<AxeResults> } };
    const options: RunOptions = { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] };
    const results = await axe.run(document, options);
    return results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? 'unknown',
      help: violation.help,
      nodes: violation.nodes.map((node) => `${node.target.join(' ')}  ${node.html.slice(0, 120)}`),
    }));
  }, AXE_TAGS);
  return violations.filter((violation) => SERIOUS_IMPACTS.has(violation.impact));
}
