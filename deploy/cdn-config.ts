/** `geoshelf cdn`'s options (read by cli/serve-commands.ts), checked, and the values they fill docs/cdn-nginx.conf with. */
import { fillPlaceholders } from '../scripts/nginx.ts';

/** A parsed command line, with the addresses the template needs. */
export interface CdnOptions {
  /** The bucket URL as given, without a trailing slash. */
  bucketUrl: string;
  /** The origin as scheme://host[:port]. */
  origin: string;
  /** The edge's URL from this machine, without a trailing slash: printed, and probed for readiness. */
  url: string;
  /** docs/cdn-nginx.conf's placeholders and their values. */
  values: Record<string, string>;
}

/** Characters a bucket prefix may hold: written unquoted into nginx's rewrites, nothing nginx reads as syntax. */
const SAFE_PREFIX = /^[A-Za-z0-9._~!*+,=:@/-]*$/;

/** Reads an http(s) URL from an option, with one-line errors that never repeat it (it might hold a secret). */
function parseHttpUrl(option: string, value: string | undefined, example: string): URL {
  if (!value) throw new Error(`--${option} is required, for example --${option} ${example}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`--${option} is not a URL; give one such as ${example}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--${option} must be an http or https URL, such as ${example}`);
  if (url.username || url.password) throw new Error(`--${option} must not hold credentials: nginx reads it anonymously`);
  if (url.search || url.hash) throw new Error(`--${option} must not have a query string or a fragment`);
  return url;
}

function decodeSafely(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

/** The template values that name a server: scheme, host:port for the upstream block, and the Host header. */
function describeServer(url: URL): { scheme: string; server: string; host: string } {
  const scheme = url.protocol.slice(0, -1);
  return { scheme, server: `${url.hostname}:${url.port || (scheme === 'https' ? '443' : '80')}`, host: url.host };
}

/** The options of `geoshelf cdn` as given. */
export interface CdnFlags {
  bucketUrl?: string;
  origin?: string;
  port: string;
  host: string;
}

/**
 * Checks --bucket-url, --origin, --port and --host; throws a one-line error for anything it cannot use.
 * @example resolveCdnOptions({ bucketUrl: 'http://127.0.0.1:9000/site/v1', origin: 'http://127.0.0.1:3000', port: '8088', host: '127.0.0.1' })
 */
export function resolveCdnOptions(values: CdnFlags): CdnOptions {
  const bucket = parseHttpUrl('bucket-url', values.bucketUrl, 'http://127.0.0.1:9000/site/v1');
  const origin = parseHttpUrl('origin', values.origin, 'http://127.0.0.1:3000');
  if (origin.pathname !== '/') throw new Error('--origin must be a server\'s address without a path, such as http://127.0.0.1:3000: the edge forwards paths as they come');
  const prefix = decodeSafely(bucket.pathname)?.replace(/\/+$/, '');
  if (prefix === undefined || !SAFE_PREFIX.test(prefix)) throw new Error('--bucket-url\'s path may hold only letters, digits, / and - . _ ~ ! * + , = : @');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error('--port must be a port number (1 to 65535)');
  const host = values.host;
  if (!/^[A-Za-z0-9.:-]+$/.test(host)) throw new Error('--host must be an IP address or a host name, such as 127.0.0.1 or 0.0.0.0');
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  const reachable = ['0.0.0.0', '::'].includes(host) ? '127.0.0.1' : hostInUrl;
  const b = describeServer(bucket);
  const o = describeServer(origin);
  return {
    bucketUrl: `${bucket.origin}${bucket.pathname.replace(/\/+$/, '')}`,
    origin: origin.origin,
    url: `http://${reachable}:${port}`,
    values: {
      listen: `${hostInUrl}:${port}`,
      bucket_scheme: b.scheme, bucket_server: b.server, bucket_host: b.host, bucket_prefix: prefix,
      origin_scheme: o.scheme, origin_server: o.server, origin_host: o.host,
    },
  };
}

/** Fills docs/cdn-nginx.conf with the values of a command line. */
export function renderCdnConf(template: string, options: CdnOptions): string {
  return fillPlaceholders(template, options.values, 'docs/cdn-nginx.conf');
}
