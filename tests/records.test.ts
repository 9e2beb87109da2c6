import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../generator/build.ts';
import { BuildError } from '../generator/errors.ts';
import { readRecordFiles } from '../generator/load/read-records.ts';
import { parseRecords } from '../generator/parse/parse-records.ts';
import { makeTempCatalog, makeTempDir, makeTestConfig, ROOT, snapshotTree } from './helpers/catalog.ts';

async function buildError(config: Parameters<typeof buildCatalog>[0]['config']): Promise<BuildError> {
  const error = await buildCatalog({ config }).then(() => undefined, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(BuildError);
  return error as BuildError;
}

describe('a broken catalog', () => {
  it('fails with all five problems listed, each with file and line, and leaves dist/ unchanged', async () => {
    const config = await makeTestConfig();
    await buildCatalog({ config });
    const before = await snapshotTree(config.distDir);
    const broken = await makeTestConfig({ catalog: join(ROOT, 'tests/fixtures/broken-catalog') });
    const error = await buildError({ ...broken, distDir: config.distDir });
    const lines = error.issues.map((issue) => `${issue.code} ${issue.source}:${issue.line} ${issue.path}`);
    expect(lines).toEqual(expect.arrayContaining([
      'RecordSyntax collections/broken.yaml:2 ',
      'DuplicateSlug collections/world.yaml:1 slug',
      'DanglingReference datasets/dangling.yaml:2 collection',
      'RecordInvalid datasets/no-slug.yaml:1 slug',
      'RecordInvalid formats.yaml:6 [1].format_type',
    ]));
    expect(error.issues).toHaveLength(5);
    expect(error.issues.find((issue) => issue.code === 'DuplicateSlug')?.message).toContain('collections/world-again.yaml:1');
    expect(error.issues.find((issue) => issue.path === '[1].format_type')?.message).toMatch(/geoparquet.*geojson/);
    const after = await snapshotTree(config.distDir);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, file] of after) expect(file.bytes.equals(before.get(path)!.bytes), path).toBe(true);
  });
});

describe('record validation', () => {
  async function problemsOf(files: Record<string, string>) {
    const config = await makeTestConfig();
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(config.catalogDir, path, '..'), { recursive: true });
      await writeFile(join(config.catalogDir, path), text);
    }
    return (await buildError(config)).issues.map((issue) => `${issue.code} ${issue.source}:${issue.line} ${issue.path}: ${issue.message}`);
  }

  it('names each bad licence, DOI, provider role and coverage with its line, in one build', async () => {
    const problems = await problemsOf({
      'collections/about.yaml': [
        'slug: about', 'name: About', 'license: CC-BY-4', 'doi: https://doi.org/10.5281/zenodo.1',
        'providers:', '  - name: Someone', '    roles: [author]', '',
      ].join('\n'),
      'datasets/about/when.yaml': [
        'slug: when', 'collection: about', 'name: When', 'temporal_coverage:', '  start: "2021-01-01"', '  end: "2020-12-31"', 'files:', '  - slug: t', '    name: T', '    formats:',
        '      - format: geoparquet', '        sources:', '          - version: 1', '            path: geonames/megacities/3.1.0/megacities.parquet', '',
      ].join('\n'),
    });
    expect(problems).toEqual(expect.arrayContaining([
      expect.stringMatching(/^RecordInvalid collections\/about\.yaml:3 license: must be an SPDX licence identifier/),
      expect.stringMatching(/^RecordInvalid collections\/about\.yaml:4 doi: must be a DOI such as 10\.5281\/zenodo\.1234567, without https:\/\/doi\.org\//),
      expect.stringMatching(/^RecordInvalid collections\/about\.yaml:7 providers\[0\]\.roles\[0\]: .*licensor/),
      expect.stringMatching(/^RecordInvalid datasets\/about\/when\.yaml:\d+ temporal_coverage: start must not be after end/),
    ]));
  });

  it('points at the line of a misspelt field', async () => {
    const problems = await problemsOf({ 'collections/extra.yaml': 'slug: extra\nname: Extra\ndescripton: typo\n' });
    expect(problems).toEqual(['RecordInvalid collections/extra.yaml:3 descripton: unknown field (did you mean "description"?)']);
  });

  it('suggests the field or slug a misspelt one most likely meant, and only when one is close', async () => {
    const problems = await problemsOf({
      'collections/extra.yaml': 'slug: extra\nname: Extra\nzzz: far from every field\n',
      'datasets/geonames/typo.yaml': [
        'slug: typo', 'collection: geonams', 'name: Typo', 'files:', '  - slug: t', '    name: T', '    formats:',
        '      - format: geoparquet', '        sources:', '          - version: 1', '            path: geonames/megacities/3.1.0/megacities.parquet', '',
      ].join('\n'),
    });
    expect(problems).toEqual([
      'RecordInvalid collections/extra.yaml:3 zzz: unknown field (check its spelling)',
      'DanglingReference datasets/geonames/typo.yaml:2 collection: collection "geonams" does not exist (no record under collections/ has that slug) (did you mean "geonames"?)',
    ]);
  });

  it('reports record problems and data problems of one catalog in one pass, and writes nothing', async () => {
    const junk = join(await makeTempDir(), 'notes.parquet');
    await writeFile(junk, 'a text file with a .parquet name\n');
    const { config } = await makeTempCatalog({
      'formats.yaml': '- slug: geoparquet\n  format_type: geoparquet\n  name: GeoParquet\n',
      'collections/notes.yaml': 'slug: notes\nname: Notes\ntitel: misspelt\n',
      'datasets/notes.yaml': ['slug: notes', 'collection: maps', 'name: Notes', 'files:', '  - slug: notes', '    name: Notes', '    formats:', '      - format: geoparquet', '        sources:', '          - version: 1', '            path: notes.parquet', ''].join('\n'),
    }, { 'notes.parquet': junk });
    const problems = (await buildError(config)).issues.map((issue) => `${issue.code} ${issue.source}:${issue.line} ${issue.path}`);
    expect(problems).toEqual([
      'RecordInvalid collections/notes.yaml:3 titel',
      'UnreadableDataFile datasets/notes.yaml:11 files[0].formats[0].sources[0].path',
    ]);
    await expect(stat(config.distDir)).rejects.toThrow(/ENOENT/);
  });

  it('lets sources leave out the storage location while the catalog has one, or one for the data folder, and names the choices otherwise', async () => {
    const one = '- slug: our-files\n  name: Our files\n  backend_type: http\n  base_url: "{storage_base_url}"\n';
    const record = ['slug: megacities', 'collection: maps', 'name: Megacities', 'files:', '  - slug: megacities', '    name: Megacities', '    formats:', '      - format: geoparquet', '        sources:', '          - version: 1', '            path: megacities.parquet', ''].join('\n');
    const formats = '- slug: geoparquet\n  format_type: geoparquet\n  name: GeoParquet\n';
    const data = { 'megacities.parquet': join(ROOT, 'catalog-data/data/geonames/megacities/3.1.0/megacities.parquet') };
    const single = await makeTempCatalog({ 'storage-locations.yaml': one, 'formats.yaml': formats, 'datasets/megacities.yaml': record }, data);
    await buildCatalog({ config: single.config });
    const file = JSON.parse(await readFile(join(single.config.distDir, 'api/collections/maps/datasets/megacities/files/megacities/index.json'), 'utf8'));
    expect(file.file.formats[0].sources[0].storage_location.slug).toBe('our-files');
    expect(file.file.formats[0].sources[0].source_metadata.feature_count).toBeGreaterThan(10);

    // A bucket added beside the data folder: the sources that name no location are still in the data folder.
    const archive = '- slug: archive\n  name: Archive\n  backend_type: http\n  base_url: https://archive.example.org\n';
    const withBucket = await makeTempCatalog({ 'storage-locations.yaml': `${one}${archive}`, 'formats.yaml': formats, 'datasets/megacities.yaml': record }, data);
    await buildCatalog({ config: withBucket.config });
    const again = JSON.parse(await readFile(join(withBucket.config.distDir, 'api/collections/maps/datasets/megacities/files/megacities/index.json'), 'utf8'));
    expect(again.file.formats[0].sources[0].storage_location.slug).toBe('our-files');

    const mirror = '- slug: mirror\n  name: Mirror\n  backend_type: http\n  base_url: "{storage_base_url}/mirror"\n';
    const two = await makeTempCatalog({ 'storage-locations.yaml': `${one}${archive}${mirror}`, 'formats.yaml': formats, 'datasets/megacities.yaml': record }, data);
    const problems = (await buildError(two.config)).issues.map((issue) => `${issue.code} ${issue.source}:${issue.line} ${issue.path}: ${issue.message}`);
    expect(problems).toEqual(['NoStorageLocation datasets/megacities.yaml:10 files[0].formats[0].sources[0]: no storage_location, and storage-locations.yaml defines 3: our-files, archive, mirror']);
  });

  it('reports a missing data file at the line of its path', async () => {
    const problems = await problemsOf({
      'datasets/geonames/ghost.yaml': [
        'slug: ghost', 'collection: geonames', 'name: Ghost', 'files:', '  - slug: ghost', '    name: Ghost', '    formats:',
        '      - format: geoparquet', '        sources:', '          - version: 1', '            path: geonames/ghost.parquet', '',
      ].join('\n'),
    });
    const { dataDir } = await makeTestConfig();
    expect(problems).toEqual([`MissingDataFile datasets/geonames/ghost.yaml:11 files[0].formats[0].sources[0].path: no file "geonames/ghost.parquet" in the data folder ${dataDir} (GEOSHELF_DATA_DIR)`]);
  });

  it('refuses source paths that lead out of the data folder, each at its line, and reads none of them', async () => {
    const paths = ['../package.json', '/etc/passwd', 'geonames/../../README.md', './geonames/megacities/3.1.0/megacities.parquet', 'geonames\\..\\x.parquet'];
    const problems = await problemsOf({
      'datasets/geonames/escape.yaml': [
        'slug: escape', 'collection: geonames', 'name: Escape', 'files:',
        ...paths.flatMap((path, index) => [`  - slug: f${index}`, `    name: F${index}`, '    formats:', '      - format: geoparquet', '        sources:', '          - version: 1', `            path: ${JSON.stringify(path)}`]),
        '',
      ].join('\n'),
    });
    expect(problems).toEqual(paths.map((path, index) => `PathOutsideStorage datasets/geonames/escape.yaml:${11 + index * 7} files[${index}].formats[0].sources[0].path: "${path}" leads out of its storage location; give a path inside it, without "..", "." or empty segments, a leading "/" or "\\"`));
  });

  it('rejects a dataset slug that collides with the tags route', async () => {
    const problems = await problemsOf({
      'datasets/geonames/tags.yaml': [
        'slug: tags', 'collection: geonames', 'name: Tags', 'files:', '  - slug: t', '    name: T', '    formats:',
        '      - format: geoparquet', '        sources:', '          - version: 1', '            path: geonames/megacities/3.1.0/megacities.parquet', '',
      ].join('\n'),
    });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^ReservedSlug datasets\/geonames\/tags.yaml:1 slug/);
  });

  it('rejects a collection slug that collides with the STAC API', async () => {
    const problems = await problemsOf({ 'collections/api.yaml': 'slug: api\nname: API\n' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^ReservedSlug collections\/api.yaml:1 slug: "api" is reserved: \/stac\/api is the STAC API/);
  });

  it('rejects a column description for a column the data does not have, at its line', async () => {
    const config = await makeTestConfig();
    const path = join(config.catalogDir, 'datasets/geonames/megacities.yaml');
    await writeFile(path, (await readFile(path, 'utf8')).replace('      population: >-', '      populaton: >-'));
    const issues = (await buildError(config)).issues;
    expect(issues.map((issue) => `${issue.code} ${issue.source}:${issue.line}`)).toEqual(['UnknownColumn datasets/geonames/megacities.yaml:43']);
    expect(issues[0]!.message).toContain('no column "populaton" (did you mean "population"?)');
  });

  it('warns about data columns that have no description', async () => {
    const config = await makeTestConfig();
    const path = join(config.catalogDir, 'datasets/geonames/megacities.yaml');
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace(/      population: >-\n(        .*\n)+/, ''));
    const result = await buildCatalog({ config });
    expect(result.warnings).toEqual(['1 column of 1 file has no description: datasets/geonames/megacities.yaml file "megacities" (population)']);
  });

  it('warns once about every undescribed column, with a count, and never about the geometry or its bbox covering', async () => {
    const capitals = join(ROOT, 'catalog-data/data/geonames/cities/3.1.0/cities-100000.parquet');
    const file = (slug: string) => [`  - slug: ${slug}`, `    name: ${slug}`, '    formats:', '      - format: geoparquet', '        sources:', '          - version: 1', `            path: ${slug}.parquet`];
    const { config } = await makeTempCatalog({
      'formats.yaml': '- slug: geoparquet\n  format_type: geoparquet\n  name: GeoParquet\n',
      'datasets/capitals.yaml': ['slug: capitals', 'collection: maps', 'name: Capitals', 'files:', ...file('a'), ...file('b'), ''].join('\n'),
    }, { 'a.parquet': capitals, 'b.parquet': capitals });
    const result = await buildCatalog({ config });
    const columns = ['city_id', 'name', 'alt_country', 'country', 'feature_code', 'admin_code', 'population', 'municipality'];
    expect(result.warnings).toEqual([`16 columns of 2 files have no description: ${['a', 'b'].map((slug) => `datasets/capitals.yaml file "${slug}" (${columns.join(', ')})`).join('; ')}`]);
  });

  it('reads JSON records with line numbers too', async () => {
    const problems = await problemsOf({ 'collections/json.json': '{\n  "slug": "Not A Slug",\n  "name": "JSON"\n}\n' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^RecordInvalid collections\/json.json:2 slug: must be lower-case/);
  });
});

describe('the sample catalog records', () => {
  it('parse without a single problem', async () => {
    const { issues } = parseRecords(await readRecordFiles(join(ROOT, 'catalog-data')));
    expect(issues).toEqual([]);
  });
});
