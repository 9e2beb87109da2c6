import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sparticuz from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';

const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.resolve('@sparticuz/chromium')));
const { version } = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string };

/**
 * Where the Chromium of `@sparticuz/chromium` is unpacked, once per package version for every test run: in the
 * system's temporary folder, not the run's (tests/setup/global-setup.ts).
 */
const UNPACK_DIR = join(process.env.GEOSHELF_SHARED_TMPDIR ?? tmpdir(), `geoshelf-chromium-${version}`);

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

/** Launches a fresh headless Chromium with WebGL2 (SwiftShader) and real CORS; tests and benches share it. */
export async function startChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await unpackChromium(),
    args: sparticuz.args.filter((arg) => !DROPPED_ARGS.test(arg)),
    headless: true,
    timeout: 60_000,
  });
}
