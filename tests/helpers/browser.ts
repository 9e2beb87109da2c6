import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sparticuz from '@sparticuz/chromium';
import { chromium, type Browser, type Page } from 'playwright-core';

const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.resolve('@sparticuz/chromium')));
const { version } = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string };

/** Where the Chromium of `@sparticuz/chromium` is unpacked, once per package version for every test run. */
const UNPACK_DIR = join(tmpdir(), `geoshelf-chromium-${version}`);

/**
 * Flags of the package we drop so the browser behaves as a person's would: `--disable-web-security` and
 * `--allow-running-insecure-content` would hide CORS and mixed-content mistakes; its `--enable-features`
 * gives SharedArrayBuffer without cross-origin isolation (and, like its `--disable-features`, replaces
 * Playwright's own feature list); `--single-process` kills the browser when a context closes; Playwright
 * sets headless mode itself. WebGL2 stays on: `--use-gl=angle --use-angle=swiftshader
 * --enable-unsafe-swiftshader` are kept.
 */
const DROPPED_ARGS = /^--(disable-web-security|allow-running-insecure-content|single-process|headless|(enable|disable)-features)\b/;

/**
 * Unpacks the browser into a private folder. The package itself writes into the shared temp folder and
 * takes any existing `chromium` there as complete, so parallel test files would race on a half-written
 * binary; unpacking into a staging folder and renaming it makes the folder appear whole or not at all.
 */
async function unpackChromium(): Promise<string> {
  const binary = join(UNPACK_DIR, 'chromium');
  if (existsSync(binary)) return binary;
  const staging = await mkdtemp(`${UNPACK_DIR}.partial-`);
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  // executablePath() reads tmpdir() before its first await, so the override can end at once.
  const unpacking = sparticuz.executablePath();
  if (previous === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previous;
  await unpacking.catch(async (error: unknown) => {
    await rm(staging, { recursive: true, force: true });
    throw error;
  });
  await rename(staging, UNPACK_DIR).catch(() => rm(staging, { recursive: true, force: true }));
  return binary;
}

/** Launches a fresh headless Chromium with WebGL2 (SwiftShader) and real CORS. */
async function startChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await unpackChromium(),
    args: sparticuz.args.filter((arg) => !DROPPED_ARGS.test(arg)),
    headless: true,
    timeout: 60_000,
  });
}

/** Playwright's first line plus the browser's own stderr (a missing shared library, say), which says why. */
function describeLaunchFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const browserLogs = message.split('Call log:')[0] ?? '';
  const stderr = browserLogs.split('\n').flatMap((line) => line.split('][err] ').slice(1));
  return [message.split('\n')[0], ...stderr.slice(0, 3)].join(' | ');
}

/** The first browser, launched while probing; handed to the first launchBrowser() so a file pays one launch. */
let probed: Browser | undefined;

async function probeBrowser(): Promise<string | undefined> {
  try {
    probed = await startChromium();
    return undefined;
  } catch (error) {
    const reason = `headless Chromium cannot start: ${describeLaunchFailure(error)}`;
    console.warn(`[browser tests skipped] ${reason}`);
    return reason;
  }
}

/**
 * Why browser tests cannot run here, or undefined when they can. Computed once per test file; use it as
 * `describe.skipIf(browserUnavailable)` so a missing browser shows as skipped with a logged reason.
 */
export const browserUnavailable: string | undefined = await probeBrowser();

/**
 * Launches headless Chromium from `@sparticuz/chromium` through playwright-core; one per test file,
 * launched in `beforeAll` and closed in `afterAll`.
 * @example
 * let browser: Browser;
 * beforeAll(async () => { browser = await launchBrowser(); });
 * afterAll(() => browser?.close());
 */
export async function launchBrowser(): Promise<Browser> {
  if (probed?.isConnected()) {
    const browser = probed;
    probed = undefined;
    return browser;
  }
  return startChromium();
}

/** One request a page made, filled in with its answer once it finishes. */
export interface RecordedRequest {
  url: string;
  method: string;
  /** The `Range` request header, when the request asked for bytes of a file. */
  range: string | undefined;
  /** HTTP status, undefined while pending or when the request failed. */
  status: number | undefined;
  /** Body bytes as transferred (compressed if the server compressed), undefined until finished. */
  bytes: number | undefined;
  /** The network error, when the request failed. */
  failure: string | undefined;
}

/** A live list of a page's requests; `settle()` waits until every finished request has its size. */
export interface RequestLog {
  requests: RecordedRequest[];
  settle(): Promise<RecordedRequest[]>;
}

/**
 * Records every request the page (and its workers) makes, as it is sent, so a test can check that
 * nothing left the local origins and which byte ranges were read.
 */
export function recordRequests(page: Page): RequestLog {
  const requests: RecordedRequest[] = [];
  const byRequest = new Map<object, RecordedRequest>();
  const pending = new Set<Promise<void>>();
  page.on('request', (request) => {
    const entry: RecordedRequest = {
      url: request.url(), method: request.method(), range: request.headers()['range'],
      status: undefined, bytes: undefined, failure: undefined,
    };
    byRequest.set(request, entry);
    requests.push(entry);
  });
  page.on('requestfinished', (request) => {
    const entry = byRequest.get(request);
    if (!entry) return;
    const done = (async () => {
      entry.status = (await request.response())?.status();
      entry.bytes = (await request.sizes()).responseBodySize;
    })().catch(() => undefined).finally(() => pending.delete(done));
    pending.add(done);
  });
  page.on('requestfailed', (request) => {
    const entry = byRequest.get(request);
    if (entry) entry.failure = request.failure()?.errorText ?? 'failed';
  });
  return {
    requests,
    async settle() {
      await Promise.all(pending);
      return requests;
    },
  };
}

/** Requests to anything but the given origins (data: and blob: URLs never leave the page). */
export function findForeignRequests(requests: RecordedRequest[], origins: string[]): RecordedRequest[] {
  return requests.filter(({ url }) => {
    if (url.startsWith('data:') || url.startsWith('blob:')) return false;
    return !origins.includes(new URL(url).origin);
  });
}

/** Collects the page's console errors and uncaught exceptions, as they happen, into one list of messages. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  return errors;
}
