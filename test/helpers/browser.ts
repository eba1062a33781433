// Headless Chromium for the browser tests: playwright-core drives the system's Chromium against the app
// served on a loopback port.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import type { Harness } from './app.ts';
import { IN_CI } from './dialects.ts';

const CHROMIUM = '/usr/bin/chromium';

/** Where the browser tests put their screenshots. */
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

/**
 * Where the screenshots the documentation shows are kept (they are committed). Tests that write there use
 * fixed names, light colours and times that read the same on every run, so re-running changes no file.
 */
export const SCREENSHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));

/** The skip reason when Chromium is not installed, else false; with CI=true a missing Chromium fails. */
export const skipWithoutChromium = !existsSync(CHROMIUM) && !IN_CI ? `${CHROMIUM} is not installed` : false;

/** The file's headless Chromium, launched by its first browser test and closed after its last. */
let shared: Promise<Browser> | undefined;

after(async () => {
  if (shared !== undefined) await (await shared).close();
});

/**
 * A headless Chromium with its background traffic off: one per test file (a launch costs about a second
 * of CPU), each test's own pages in browser contexts of their own (cookies, storage and cache apart:
 * `newPage` and `newContext` each open one), closed after the test.
 */
export async function launchChromium(t: TestContext): Promise<Browser> {
  shared ??= chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: 30_000,
  });
  const browser = await shared;
  const before = new Set(browser.contexts());
  t.after(async () => {
    for (const context of browser.contexts()) if (!before.has(context)) await context.close();
  });
  return browser;
}

/** Serves the test's app on a free loopback port; returns its origin. */
export async function serveOnLoopback(h: Harness): Promise<string> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const address = h.app.server.address();
  assert.ok(address && typeof address === 'object');
  return `http://127.0.0.1:${address.port}`;
}
