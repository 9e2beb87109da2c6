import { isSpdxLicense } from '../../schemas/about.ts';
import type { About } from '../../schemas/about.ts';

/** What a citation of one version of a file names. */
export interface CitationFacts extends Pick<About, 'license' | 'doi' | 'providers' | 'citation'> {
  /** The dataset and file, as the title. */
  title: string;
  version: string;
  /** When the version was stored: a timestamp without timezone, UTC. */
  released: string;
  /** The file's page. */
  url: string;
}

/**
 * A CITATION.cff (Citation File Format 1.2.0) text for one version of a file: its producers as authors (the catalog
 * itself when the record names none), the version and its date, the licence (SPDX) or its URL, the DOI and the page.
 * The record's own citation text is kept as the message.
 * @example renderCitationCff({ title: 'Countries: 1:110m', version: '2.0.2', released: '2026-11-22T08:30:00', url }) // 'cff-version: 1.2.0\n…'
 */
export function renderCitationCff(facts: CitationFacts): string {
  const producers = (facts.providers ?? []).filter((provider) => provider.roles?.includes('producer'));
  const authors = (producers.length > 0 ? producers : (facts.providers ?? [])).map((provider) => provider.name);
  const lines = [
    'cff-version: 1.2.0',
    `message: ${quote(facts.citation ?? 'If you use this data, please cite it as below.')}`,
    'type: dataset',
    `title: ${quote(facts.title)}`,
    'authors:',
    ...(authors.length > 0 ? authors : ['geoshelf']).map((name) => `  - name: ${quote(name)}`),
    `version: ${quote(facts.version)}`,
    `date-released: ${quote(facts.released.slice(0, 10))}`,
    ...(facts.license ? [isSpdxLicense(facts.license) ? `license: ${quote(facts.license)}` : `license-url: ${quote(facts.license)}`] : []),
    ...(facts.doi ? [`doi: ${quote(facts.doi)}`] : []),
    `url: ${quote(facts.url)}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** A YAML double-quoted scalar: JSON's string escapes are YAML's. */
function quote(text: string): string {
  return JSON.stringify(text);
}
