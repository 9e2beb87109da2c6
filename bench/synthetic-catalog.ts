import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Options of the synthetic catalog. */
export interface SyntheticCatalogOptions {
  dir: string;
  datasets: number;
  filesPerDataset: number;
  collections: number;
  /** The sample catalog folder, whose formats and storage locations are reused. */
  sampleCatalogDir: string;
  seed?: number;
}

/** The words synthetic names and descriptions are drawn from. */
export const WORDS = [
  'river', 'basin', 'coast', 'parcel', 'road', 'rail', 'forest', 'soil', 'flood', 'zone', 'census', 'tract', 'school',
  'district', 'harbour', 'airport', 'land', 'cover', 'elevation', 'contour', 'building', 'footprint', 'wetland', 'lake',
  'glacier', 'municipal', 'boundary', 'protected', 'area', 'habitat', 'transit', 'stop', 'power', 'line', 'pipeline',
  'well', 'mine', 'quarry', 'vineyard', 'orchard', 'crop', 'field', 'survey', 'station', 'weather', 'noise', 'air',
  'quality', 'population', 'grid', 'hexagon', 'village', 'city', 'region', 'province', 'county', 'state', 'nation',
];
const CATEGORIES = [
  'boundaries', 'administrative', 'transport', 'hydrography', 'environment', 'land-use', 'demographics', 'elevation',
  'infrastructure', 'agriculture', 'geology', 'climate', 'health', 'education', 'energy', 'buildings', 'imagery-derived',
  'hazards', 'ecology', 'cadastre', 'utilities', 'tourism', 'marine', 'forestry', 'mining', 'water', 'air', 'noise',
  'population', 'statistics-ready',
];
const INVENTORIES = ['National Mapping Agency', 'Statistics Office', 'Environment Agency', 'Open Data Portal', 'Research Consortium'];
const DATA_FILES = [
  'natural-earth/countries/2.0.2/countries-110m.parquet',
  'geonames/megacities/3.1.0/megacities.parquet',
  'us-census/us-boundaries/3.0.1/states.parquet',
];

/** A small seeded random generator (mulberry32), so the synthetic catalog is the same on every run. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Writes a deterministic synthetic catalog: `datasets` dataset records spread over `collections`, each with
 * `filesPerDataset` files whose GeoParquet sources point at real sample data files. Not committed; benches
 * generate it into a temporary folder.
 */
export async function writeSyntheticCatalog(options: SyntheticCatalogOptions): Promise<void> {
  const random = createRandom(options.seed ?? 7);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const phrase = (count: number) => Array.from({ length: count }, () => pick(WORDS)).join(' ');
  await mkdir(join(options.dir, 'collections'), { recursive: true });
  await cp(join(options.sampleCatalogDir, 'formats.yaml'), join(options.dir, 'formats.yaml'));
  await cp(join(options.sampleCatalogDir, 'storage-locations.yaml'), join(options.dir, 'storage-locations.yaml'));
  for (let c = 0; c < options.collections; c++) {
    // A licence and a producer, as a steward's collection would give them: the pages, STAC, DCAT and the dumps carry them.
    const about = `license: CC-BY-4.0\nproviders:\n  - name: Agency ${c}\n    roles: [producer, licensor]\n    url: https://agency-${c}.example.org\n`;
    await writeFile(join(options.dir, 'collections', `collection-${c}.yaml`), `slug: collection-${c}\nname: Collection ${c} ${phrase(2)}\ndescription: >-\n  Synthetic collection ${c}: ${phrase(20)}.\n${about}`);
  }
  for (let d = 0; d < options.datasets; d++) {
    const collection = d % options.collections;
    const folder = join(options.dir, 'datasets', `collection-${collection}`);
    if (d < options.collections) await mkdir(folder, { recursive: true });
    const categories = [...new Set([pick(CATEGORIES), pick(CATEGORIES), pick(CATEGORIES)])];
    const files = Array.from({ length: options.filesPerDataset }, (_, f) => [
      `  - slug: layer-${f}`,
      `    name: Layer ${f} ${phrase(2)}`,
      `    description: ${phrase(12)}.`,
      '    formats:',
      '      - format: geoparquet',
      '        sources:',
      `          - version: "${2020 + (f % 3)}.1"`,
      `            path: ${DATA_FILES[(d + f) % DATA_FILES.length]}`,
    ].join('\n'));
    const record = [
      `slug: dataset-${d}`,
      `collection: collection-${collection}`,
      `name: ${phrase(3)} ${d}`,
      'description: >-',
      `  ${phrase(40)}.`,
      'tags:',
      `  inventory: ${pick(INVENTORIES)}`,
      `  categories: [${categories.join(', ')}]`,
      'files:',
      ...files,
      '',
    ].join('\n');
    await writeFile(join(folder, `dataset-${d}.yaml`), record);
  }
}
