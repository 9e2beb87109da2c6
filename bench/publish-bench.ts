/**
 * `npm run bench -- publish`: `npm run publish` into a real S3 API (s3rver, with the real SDK), against a plain
 * upload loop of the same objects in the same run, and a one-edit publish of the 10k × 3 tree.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { objectsOfEntry, type PublishObject } from '../deploy/publish-plan.ts';
import { publish } from '../deploy/publish.ts';
import { readPublishedTree } from '../deploy/published-tree.ts';
import { buildCatalog } from '../generator/build.ts';
import { serializeManifest } from '../runtime/manifest.ts';
import type { Config } from '../runtime/config.ts';
import { startBucket, type TestBucket } from '../tests/helpers/bucket.ts';
import { benchConfig, median } from './build-bench.ts';
import { writeSyntheticCatalog } from './synthetic-catalog.ts';
import type { BenchContext } from './run.ts';

const CONCURRENCY = 8;
const MAX_AGE = 300;

/** The objects of a tree as publish stores them, put by a bare loop `CONCURRENCY` at a time: no diff, no manifest. */
async function plainUpload(bucket: TestBucket, config: Config, prefix: string): Promise<{ objects: number; ms: number }> {
  const { manifest } = await readPublishedTree(config.distDir, config.dataDir, config.cacheDir);
  const objects: PublishObject[] = Object.keys(manifest.files).flatMap((key) => objectsOfEntry(key, manifest.files[key]!, MAX_AGE));
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < objects.length) {
      const object = objects[next++]!;
      const body = await readFile(join(object.from === 'dist' ? config.distDir : config.dataDir, object.path));
      await bucket.client.send(new PutObjectCommand({
        Bucket: bucket.bucket, Key: `${prefix}/${object.key}`, Body: body, ContentType: object.contentType, CacheControl: object.cacheControl, Metadata: { sha256: object.sha256 },
        ...(object.contentEncoding ? { ContentEncoding: object.contentEncoding } : {}),
      }));
    }
  }));
  return { objects: objects.length, ms: performance.now() - started };
}

async function timedPublish(bucket: TestBucket, config: Config, prefix: string) {
  const summary = await publish({ distDir: config.distDir, dataDir: config.dataDir, cacheDir: config.cacheDir, target: `s3://${bucket.bucket}/${prefix}`, cacheMaxAge: MAX_AGE, concurrency: CONCURRENCY, env: bucket.env, log: () => undefined });
  return { objects: summary.uploaded + 1, ms: summary.seconds * 1000, summary };
}

/** Alternations of the two sides in a round: one 4-second sample of each swung by a third with the store's speed here. */
const PAIRS = 3;

/**
 * First publishes against the plain loop, in `rounds` rounds of `PAIRS` alternations each (a random side first in each
 * pair); a round's ratio is the two sides' objects per second over their pairs together. Met only if every round is.
 */
export async function compareFirstPublish(bench: BenchContext, bucket: TestBucket, config: Config, name: string, rounds: number): Promise<void> {
  const ratios: string[] = [];
  let met = true;
  // Untimed, one of each: the tree's files in the page cache and the store's folders made, for both sides alike.
  await timedPublish(bucket, config, `${name}-warm-publish`);
  await plainUpload(bucket, config, `${name}-warm-plain`);
  for (let round = 0; round < rounds; round++) {
    const totals = { publish: { objects: 0, ms: 0 }, plain: { objects: 0, ms: 0 } };
    const add = (side: keyof typeof totals) => (run: { objects: number; ms: number }) => {
      totals[side].objects += run.objects;
      totals[side].ms += run.ms;
    };
    for (let pair = 0; pair < PAIRS; pair++) {
      const sides = [
        () => timedPublish(bucket, config, `${name}-publish-${round}-${pair}`).then(add('publish')),
        () => plainUpload(bucket, config, `${name}-plain-${round}-${pair}`).then(add('plain')),
      ];
      for (const side of Math.random() < 0.5 ? sides : sides.reverse()) await side();
    }
    const rate = (side: { objects: number; ms: number }) => side.objects / (side.ms / 1000);
    const ratio = rate(totals.publish) / rate(totals.plain);
    met &&= ratio >= 0.8;
    ratios.push(`${ratio.toFixed(2)}× (${rate(totals.publish).toFixed(0)} / ${rate(totals.plain).toFixed(0)} objects/s)`);
  }
  bench.report(`${name}: first publish / plain upload loop, objects per second`, ratios.join('; '), `${rounds} round(s) of ${PAIRS} alternations; target ≥ 0.8× in every round: ${met ? 'met' : 'missed'}`);
}

/** Publish figures: first publishes of the sample and of a 200 × 3 tree, and one-edit publishes of the 10k × 3 tree. */
export async function benchPublish(bench: BenchContext): Promise<void> {
  bench.section('Publish to an S3 API (s3rver)');
  const bucket = await startBucket('bench-publish');
  try {
    await compareFirstPublish(bench, bucket, bench.kept('sample'), 'sample', 3);

    // A tree of many small documents, as the 10k one is, at a size s3rver takes in minutes.
    const catalogDir = join(bench.root, 'publish-200', 'catalog');
    await writeSyntheticCatalog({ dir: catalogDir, datasets: 200, filesPerDataset: 3, collections: 20, sampleCatalogDir: join(bench.repo, 'catalog-data') });
    const small = benchConfig(join(bench.root, 'publish-200'), catalogDir, join(bench.repo, 'catalog-data', 'data'));
    await buildCatalog({ config: small });
    await compareFirstPublish(bench, bucket, small, '200 × 3', 3);

    // The 10k tree's first publish would take about an hour each side at s3rver's speed here (150 small objects/s),
    // so the bucket starts from the published manifest alone: what a one-edit publish reads, diffs and writes.
    const synthetic = bench.kept('synthetic');
    const seeded = await readPublishedTree(synthetic.distDir, synthetic.dataDir);
    await bucket.client.send(new PutObjectCommand({ Bucket: bucket.bucket, Key: '10k/manifest.json', Body: serializeManifest(seeded.manifest), ContentType: 'application/json' }));
    const edited = join(synthetic.catalogDir, 'datasets', 'collection-3', 'dataset-4243.yaml');
    const record = await readFile(edited, 'utf8');
    const runs: { ms: number; objects: number; purge: number }[] = [];
    for (let round = 0; round < 3; round++) {
      await writeFile(edited, record.replace('description: >-\n', `description: >-\n  Published in round ${round}.\n`));
      await buildCatalog({ config: synthetic });
      const { ms, summary } = await timedPublish(bucket, synthetic, '10k');
      runs.push({ ms, objects: summary.uploaded, purge: summary.invalidations.length });
    }
    const met = runs.every((run) => run.ms <= 10_000 && run.objects < 100);
    bench.report('10k × 3: publish after editing one dataset', runs.map((run) => `${(run.ms / 1000).toFixed(2)} s, ${run.objects} objects, ${run.purge} URLs`).join('; '), `median ${(median(runs.map((run) => run.ms)) / 1000).toFixed(2)} s; target ≤ 10 s and < 100 objects in every round: ${met ? 'met' : 'missed'}`);
  } finally {
    await bucket.stop();
  }
}
