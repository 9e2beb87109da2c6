import { S3Client } from '@aws-sdk/client-s3';

/** The SDK's standard retry mode backs off exponentially with jitter; five attempts ride out a short outage. */
const MAX_ATTEMPTS = 5;

/**
 * An S3 client from the standard variables; a custom endpoint (MinIO, R2, s3rver) gets path-style addressing.
 * `endpoint` (a storage location's `endpoint_url`) takes the place of the variables' endpoint.
 */
export function createS3Client(env: NodeJS.ProcessEnv = process.env, endpointUrl?: string): S3Client {
  const endpoint = endpointUrl || env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  return new S3Client({
    region: env.AWS_REGION || 'us-east-1',
    maxAttempts: MAX_ATTEMPTS,
    retryMode: 'standard',
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    // Keys given in `env` are used as they are; otherwise the SDK's chain looks (this process's variables, a profile, a role).
    ...(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? { credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) } }
      : {}),
    // Checksums only where S3 requires them: the default adds CRC32 trailers that older S3-compatible stores reject.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** The S3 error's code (`NoSuchKey`, `AccessDenied`…) or the error's name. */
export function errorName(error: unknown): string | undefined {
  return (error as { name?: string; Code?: string })?.Code ?? (error as { name?: string })?.name;
}
