import jsonld from 'jsonld';
import { afterAll, describe, expect, it } from 'vitest';
import { createCatalogIndex } from '../core/catalog-index.ts';
import { createRenderContext } from '../core/api/catalog/answer.ts';
import { renderStacCollection } from '../core/api/stac/documents.ts';
import { describeDatasetJsonLd, type JsonLdNode } from '../core/site/json-ld.ts';
import { readModel } from '../runtime/model-file.ts';
import { findVocabularyProblems, readSchemaOrgVocabulary, SCHEMA_ORG_CONTEXT } from './helpers/schema-org.ts';
import { get, sampleConfig, sampleServer } from './helpers/sample.ts';

const server = sampleServer();
afterAll(() => server.close());
const vocabulary = readSchemaOrgVocabulary();

/** Serves schema.org's context from the shipped copy: the tests run offline. */
type RemoteDocument = Awaited<ReturnType<NonNullable<jsonld.Options.DocLoader['documentLoader']>>>;
const documentLoader = async (url: string): Promise<RemoteDocument> => {
  if (!/^https?:\/\/schema\.org\/?$/.test(url)) throw new Error(`no network in tests: ${url}`);
  return { documentUrl: url, document: SCHEMA_ORG_CONTEXT as RemoteDocument['document'] };
};

/** The JSON-LD blocks of a page. */
function readJsonLd(html: string): JsonLdNode[] {
  return [...html.matchAll(/<script type="application\/ld\+json">(.*?)<\/script>/gs)].map((match) => JSON.parse(match[1]!) as JsonLdNode);
}

async function readPageJsonLd(path: string): Promise<JsonLdNode> {
  const response = await get(server, path);
  expect(response.status, path).toBe(200);
  const blocks = readJsonLd(await response.text());
  expect(blocks, path).toHaveLength(1);
  return blocks[0]!;
}

/** Google's documented requirements for a Dataset: required name and description, and the recommended properties geoshelf can fill. */
function googleDatasetProblems(node: JsonLdNode): string[] {
  const problems: string[] = [];
  if (typeof node.name !== 'string' || node.name === '') problems.push('name is required');
  const description = node.description;
  if (typeof description !== 'string' || description.length < 50 || description.length > 5000) problems.push('description must be 50 to 5000 characters');
  for (const recommended of ['url', 'identifier', 'license', 'creator', 'keywords', 'spatialCoverage', 'variableMeasured', 'distribution', 'isAccessibleForFree', 'includedInDataCatalog']) {
    if (node[recommended] === undefined) problems.push(`${recommended} is recommended`);
  }
  for (const download of (node.distribution as JsonLdNode[] | undefined) ?? []) {
    if (typeof download.contentUrl !== 'string' || typeof download.encodingFormat !== 'string') problems.push(`a DataDownload needs contentUrl and encodingFormat: ${JSON.stringify(download)}`);
  }
  return problems;
}

describe('schema.org markup of the pages', () => {
  const { model } = readModel(sampleConfig().distDir).file;
  const datasets = model.collections.flatMap((collection) => collection.datasets.map((dataset) => ({ collection, dataset })));

  it.each(datasets.map(({ collection, dataset }) => [`${collection.slug}/${dataset.slug}`]))('gives the page of %s a Dataset that expands as JSON-LD, uses the vocabulary and meets Google\'s list', async (slugs) => {
    const node = await readPageJsonLd(`/collections/${slugs.replace('/', '/datasets/')}/`);
    expect(node['@type']).toBe('Dataset');
    expect(findVocabularyProblems(node, vocabulary)).toEqual([]);
    expect(googleDatasetProblems(node)).toEqual([]);
    const expanded = await jsonld.expand(node as jsonld.JsonLdDocument, { documentLoader });
    const predicates = Object.keys(expanded[0]!).filter((key) => !key.startsWith('@'));
    expect(predicates.length).toBe(Object.keys(node).filter((key) => !key.startsWith('@')).length);
    for (const predicate of predicates) expect(predicate).toMatch(/^http:\/\/schema\.org\/[a-zA-Z]+$/);
  });

  it('describes the sample countries with their licence, producers, box, columns and downloads', async () => {
    const node = await readPageJsonLd('/collections/natural-earth/datasets/countries/');
    expect(node.license).toBe('https://spdx.org/licenses/ISC.html');
    expect(node.creator).toEqual([{ '@type': 'Organization', name: 'Natural Earth', url: 'https://www.naturalearthdata.com' }]);
    expect((node.spatialCoverage as { geo: { box: string } }).geo.box).toMatch(/^-90 -180 83\.\d+ 180$/);
    expect((node.variableMeasured as { name: string }[]).map((variable) => variable.name)).toContain('name');
    const downloads = node.distribution as { contentUrl: string; encodingFormat: string }[];
    expect(downloads.map((download) => download.encodingFormat)).toContain('application/vnd.apache.parquet');
    for (const download of downloads) expect((await get(server, new URL(download.contentUrl).pathname, { range: 'bytes=0-3' })).status, download.contentUrl).toBeLessThan(300);
  });

  it('puts a DataCatalog of every collection on the home page', async () => {
    const node = await readPageJsonLd('/');
    expect(node['@type']).toBe('DataCatalog');
    expect((node.hasPart as { name: string }[]).map((part) => part.name).sort()).toEqual(model.collections.map((collection) => collection.name).sort());
    expect(findVocabularyProblems(node, vocabulary)).toEqual([]);
  });

  it('catches what the vocabulary does not allow', () => {
    expect(findVocabularyProblems({ '@type': 'Dataset', name: 'x', colour: 'red' }, vocabulary)).toEqual(['$.colour: schema.org has no property colour']);
    expect(findVocabularyProblems({ '@type': 'Dataset', box: '0 0 1 1' }, vocabulary)).toEqual(['$.box: does not apply to Dataset']);
    expect(findVocabularyProblems({ '@type': 'Dataset', spatialCoverage: { '@type': 'Person', name: 'x' } }, vocabulary)).toHaveLength(1);
    expect(findVocabularyProblems({ '@type': 'Datset' }, vocabulary)).toEqual(['$: schema.org has no type Datset']);
  });

  it('adds a DOI as identifier and sameAs, and a temporal coverage as an ISO 8601 interval open at the end, to JSON-LD and STAC alike', () => {
    const index = createCatalogIndex(readModel(sampleConfig().distDir).file.model, { baseUrl: sampleConfig().baseUrl, storageBaseUrl: sampleConfig().storageBaseUrl });
    const collection = index.model.collections.find((candidate) => candidate.slug === 'geonames')!;
    const dataset = { ...collection.datasets[0]!, doi: '10.5281/zenodo.1234567', temporal_coverage: { start: '2020-01-01' } };
    const context = createRenderContext(index);
    const node = describeDatasetJsonLd(context, collection, dataset);
    expect(node.identifier).toEqual(['https://doi.org/10.5281/zenodo.1234567', `${sampleConfig().baseUrl}/api/datasets/${dataset.id}`]);
    expect(node.sameAs).toBe('https://doi.org/10.5281/zenodo.1234567');
    expect(node.temporalCoverage).toBe('2020-01-01/..');
    expect(findVocabularyProblems(node, vocabulary)).toEqual([]);
    const stac = renderStacCollection(context, collection, dataset, 'static') as Record<string, unknown> & { extent: { temporal: { interval: unknown[] } } };
    expect(stac['sci:doi']).toBe('10.5281/zenodo.1234567');
    expect(stac.extent.temporal.interval).toEqual([['2020-01-01T00:00:00Z', null]]);
  });
});
