import type { Browser, Page } from 'playwright-core';
import { startChromium } from './chromium.ts';

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
