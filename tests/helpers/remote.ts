import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestBucket } from './bucket.ts';
import type { Config } from '../../runtime/config.ts';
import { makeTempCatalog, makeTempDir, ROOT } from './catalog.ts';

/** The sample's largest GeoParquet file, and a smaller one to put in its place. */
export const CITIES = join(ROOT, 'catalog-data/data/geonames/cities/3.1.0/cities-1000.parquet');
export const CAPITALS = join(ROOT, 'catalog-data/data/geonames/national-capitals/3.1.0/national-capitals.parquet');
/** The bucket remote sources live in. */
export const BUCKET = 'remote-data';

/** A file record with one GeoParquet source at `path` in `location` (the data folder's `sample-data` by default). */
export const fileRecord = (slug: string, location: string | undefined, path: string) => [
  `  - slug: ${slug}`, `    name: ${slug}`, '    formats:', '      - format: geoparquet', '        sources:', '          - version: 1',
  `            storage_location: ${location ?? 'sample-data'}`, `            path: ${path}`,
];

/**
 * A catalog whose locations are the bucket through S3 (`bucket-data`) and over HTTP (`bucket-http`), and on
 * request a store that is down (`nowhere`) and another HTTP server (`other-http`); the cities file is in its
 * data folder too, as `places/cities.parquet`.
 */
export async function remoteCatalog(bucket: TestBucket, files: string[][], options: { closedPort?: number; httpOrigin?: string } = {}) {
  const { closedPort, httpOrigin } = options;
  const locations = [
    '- slug: bucket-data', '  name: Data in a bucket', '  backend_type: s3', `  base_url: https://data.example.org/${BUCKET}`, `  bucket: ${BUCKET}`, `  endpoint_url: ${bucket.endpoint}`,
    '- slug: bucket-http', '  name: The same bucket over HTTP', '  backend_type: http', `  base_url: ${bucket.endpoint}/${BUCKET}`,
    ...(closedPort ? ['- slug: nowhere', '  name: A store that is down', '  backend_type: s3', '  base_url: https://nowhere.example.org', '  bucket: gone', `  endpoint_url: http://127.0.0.1:${closedPort}`] : []),
    ...(httpOrigin ? ['- slug: other-http', '  name: Another HTTP server', '  backend_type: http', `  base_url: ${httpOrigin}`] : []),
  ];
  return makeTempCatalog({
    'formats.yaml': '- slug: geoparquet\n  format_type: geoparquet\n  name: GeoParquet\n  mime_type: application/vnd.apache.parquet\n',
    'storage-locations.yaml': `${await readFile(join(ROOT, 'catalog-data/storage-locations.yaml'), 'utf8')}\n${locations.join('\n')}\n`,
    'datasets/places.yaml': ['slug: places', 'collection: maps', 'name: Places', 'files:', ...files.flat(), ''].join('\n'),
  }, { 'places/cities.parquet': CITIES });
}


/**
 * Puts the bucket's credentials in this process's AWS variables, as a user's shell gives them to the build and
 * the server (the endpoint stays the storage location's own), and answers a function that puts back what was.
 */
export function useBucketCredentials(bucket: TestBucket): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(bucket.env)) {
    if (name === 'AWS_ENDPOINT_URL') continue;
    saved[name] = process.env[name];
    process.env[name] = value;
  }
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

/**
 * A catalog's records with its `sample-data` storage location moved into a bucket, as a steward moves theirs:
 * the same records, that location read through S3 (`bucket` in `store`), and an empty data folder.
 */
export async function sampleInBucket(store: TestBucket, local: Config, bucket: string): Promise<Config> {
  const root = await makeTempDir();
  const catalogDir = join(root, 'catalog');
  const data = join(local.catalogDir, 'data');
  await cp(local.catalogDir, catalogDir, { recursive: true, filter: (path) => path !== data && !path.startsWith(`${data}/`) });
  const locations = await readFile(join(catalogDir, 'storage-locations.yaml'), 'utf8');
  const moved = locations.replace('backend_type: http', 'backend_type: s3')
    .replace('base_url: "{storage_base_url}"', `base_url: https://data.example.org/${bucket}\n  bucket: ${bucket}\n  endpoint_url: ${store.endpoint}`);
  if (moved === locations) throw new Error('the catalog has no sample-data location to move');
  await writeFile(join(catalogDir, 'storage-locations.yaml'), moved);
  const dataDir = join(root, 'data');
  await mkdir(dataDir);
  return { ...local, catalogDir, dataDir, distDir: join(root, 'dist'), cacheDir: join(root, 'cache') };
}
