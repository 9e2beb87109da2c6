/**
 * Runs s3rver for tests, in a process of its own: it lists past 1,000 keys with continuation tokens sealed by DES,
 * which Node's OpenSSL 3 offers only with `--openssl-legacy-provider`. Prints `{"port":…}` once it listens.
 * @example node --openssl-legacy-provider tests/helpers/s3rver-process.ts <folder> <bucket>
 */
import S3rver from 's3rver';

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: directory!, configureBuckets: [{ name: bucket!, configs: [] }] });
const { port } = await server.run();
console.log(JSON.stringify({ port }));
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
