import jsonld from 'jsonld';
import { afterAll, describe, expect, it } from 'vitest';
import { datasetPath } from '../core/site/paths.ts';
import { readModel } from '../runtime/model-file.ts';
import { get, sampleConfig, sampleServer } from './helpers/sample.ts';

const server = sampleServer();
afterAll(() => server.close());

const DCAT = 'http://www.w3.org/ns/dcat#';
const DCT = 'http://purl.org/dc/terms/';
const FOAF = 'http://xmlns.com/foaf/0.1/';

type Expanded = Record<string, unknown[] | string | string[]>;

/** Every context is inline: a document that needs one from the network is wrong here. */
const documentLoader = async (url: string): Promise<never> => {
  throw new Error(`the DCAT documents must not need ${url}`);
};

/** Reads a DCAT document through the server and expands it: every node, with full IRIs. */
async function readExpanded(path: string): Promise<Expanded[]> {
  const response = await get(server, path);
  expect(response.status, path).toBe(200);
  expect(response.headers.get('content-type'), path).toBe('application/ld+json');
  return (await jsonld.expand(await response.json(), { documentLoader })) as Expanded[];
}

const ids = (values: unknown) => ((values ?? []) as { '@id': string }[]).map((value) => value['@id']);
const texts = (values: unknown) => ((values ?? []) as { '@value': unknown }[]).map((value) => value['@value']);

describe('the DCAT-AP catalog', () => {
  const config = sampleConfig();
  const { model } = readModel(config.distDir).file;

  it('is linked from /api, and with its collections catalogs every dataset with DCAT-AP mandatory properties and a download per stored file', async () => {
    const root = (await (await get(server, '/api')).json()) as { links: Record<string, string> };
    expect(root.links.dcat).toBe(`${config.baseUrl}/dcat.jsonld`);
    const [catalog] = await readExpanded('/dcat.jsonld');
    expect(catalog!['@type']).toEqual([`${DCAT}Catalog`]);
    for (const property of [`${DCT}title`, `${DCT}description`, `${DCT}publisher`]) expect(catalog![property], property).toBeDefined();

    const datasetPages = new Set<string>();
    const children = (catalog![`${DCAT}catalog`] ?? []) as Expanded[];
    expect(children).toHaveLength(model.collections.length);
    for (const child of children) {
      const iri = child['@id'] as string;
      const [collection] = await readExpanded(new URL(iri).pathname);
      expect(collection!['@id']).toBe(iri);
      expect(ids(collection![`${DCT}isPartOf`])).toEqual([catalog!['@id']]);
      for (const dataset of (collection![`${DCAT}dataset`] ?? []) as Expanded[]) {
        expect(dataset['@type']).toEqual([`${DCAT}Dataset`]);
        for (const property of [`${DCT}title`, `${DCT}description`]) expect(dataset[property], `${dataset['@id']} ${property}`).toBeDefined();
        const distributions = (dataset[`${DCAT}distribution`] ?? []) as Expanded[];
        expect(distributions.length, dataset['@id'] as string).toBeGreaterThan(0);
        for (const distribution of distributions) {
          expect(ids(distribution[`${DCAT}accessURL`])).toHaveLength(1);
          expect(ids(distribution[`${DCAT}downloadURL`])).toHaveLength(1);
        }
        datasetPages.add(dataset['@id'] as string);
      }
    }
    const expected = model.collections.flatMap((collection) => collection.datasets.map((dataset) => `${config.baseUrl}${datasetPath(collection.slug, dataset.slug)}`));
    expect([...datasetPages].sort()).toEqual(expected.sort());
  });

  it('gives a dataset its licence per distribution, its producer as creator, its box as WKT and each stored file its size and SHA-256', async () => {
    const [collection] = await readExpanded('/dcat/natural-earth.jsonld');
    const countries = ((collection![`${DCAT}dataset`] ?? []) as Expanded[]).find((dataset) => dataset['@id'] === `${config.baseUrl}/collections/natural-earth/datasets/countries/`)!;
    expect(((countries[`${DCT}creator`] ?? []) as Expanded[]).flatMap((agent) => texts(agent[`${FOAF}name`]))).toEqual(['Natural Earth']);
    const spatial = ((countries[`${DCT}spatial`] ?? []) as Expanded[])[0]!;
    expect(texts(spatial[`${DCAT}bbox`])[0]).toMatch(/^POLYGON\(\(-180 -90,180 -90,180 83\.\d+,-180 83\.\d+,-180 -90\)\)$/);
    const parquet = ((countries[`${DCAT}distribution`] ?? []) as Expanded[]).find((distribution) => ids(distribution[`${DCAT}downloadURL`])[0]!.endsWith('/countries-110m.parquet'))!;
    expect(ids(parquet[`${DCT}license`])).toEqual(['https://spdx.org/licenses/ISC.html']);
    expect(ids(parquet[`${DCAT}mediaType`])).toEqual(['https://www.iana.org/assignments/media-types/application/vnd.apache.parquet']);
    const download = await get(server, new URL(ids(parquet[`${DCAT}downloadURL`])[0]!).pathname);
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(texts(parquet[`${DCAT}byteSize`])).toEqual([String(bytes.length)]);
    const checksum = ((parquet['http://spdx.org/rdf/terms#checksum'] ?? []) as Expanded[])[0]!;
    const sha256 = Buffer.from(await crypto.subtle.digest('SHA-256', bytes)).toString('hex');
    expect(texts(checksum['http://spdx.org/rdf/terms#checksumValue'])).toEqual([sha256]);
  });

  it('pages the catalog as a Hydra paged collection: following hydra:nextPage from /dcat.jsonld reads every dataset once', async () => {
    const HYDRA = 'http://www.w3.org/ns/hydra/core#';
    const seen: string[] = [];
    const pages: string[] = [];
    let next: string | undefined = `${config.baseUrl}/dcat.jsonld`;
    while (next) {
      pages.push(next);
      const nodes = await readExpanded(new URL(next).pathname);
      const flat = (await jsonld.flatten(nodes as jsonld.JsonLdDocument, undefined, { documentLoader })) as unknown as { '@graph'?: Expanded[] } | Expanded[];
      const graph = Array.isArray(flat) ? flat : (flat['@graph'] ?? []);
      seen.push(...graph.filter((node) => (node['@type'] as string[] | undefined)?.includes(`${DCAT}Dataset`)).map((node) => node['@id'] as string));
      const page = graph.find((node) => (node['@type'] as string[] | undefined)?.includes(`${HYDRA}PagedCollection`) && node['@id'] === next)!;
      expect(ids(page[`${HYDRA}firstPage`])).toEqual([`${config.baseUrl}/dcat.jsonld`]);
      next = ids(page[`${HYDRA}nextPage`])[0];
      expect(pages.length).toBeLessThanOrEqual(model.collections.length + 1);
    }
    expect(pages).toHaveLength(model.collections.length + 1);
    const expected = model.collections.flatMap((collection) => collection.datasets.map((dataset) => `${config.baseUrl}${datasetPath(collection.slug, dataset.slug)}`));
    expect(seen.sort()).toEqual(expected.sort());
  });

  it('parses as RDF: every dataset is a dcat:Dataset triple', async () => {
    const response = await get(server, '/dcat/geonames.jsonld');
    const quads = (await jsonld.toRDF(await response.json(), { format: 'application/n-quads', documentLoader })) as unknown as string;
    const datasets = quads.split('\n').filter((line) => line.endsWith(`<http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <${DCAT}Dataset> .`));
    expect(datasets).toHaveLength(model.collections.find((collection) => collection.slug === 'geonames')!.datasets.length);
  });
});
