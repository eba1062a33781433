// The security log in a real browser (headless Chromium) on a 390 px phone and a 1280 px desktop: the
// token page shows each token's last use with its address (an IPv6 client by its /64, which must wrap
// rather than widen the page), links to the security log, whose events fit the screen, and whose filter
// works without JavaScript.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { build } from '../helpers/app.ts';
import { ARTIFACTS, launchChromium, serveOnLoopback, skipWithoutChromium } from '../helpers/browser.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1280, height: 900 },
] as const;

const AGENT = 'Mozilla/5.0 (X11; Linux x86_64) SecurityLogBrowserTest/1.0 with a long, long tail of words';

/** Whether the page scrolls sideways (it must not). */
const overflows = (page: Page): Promise<boolean> =>
  page.evaluate('document.documentElement.scrollWidth > window.innerWidth') as Promise<boolean>;

describe('the security log in a browser', () => {
  for (const size of WIDTHS) {
    it(
      `shows the last-used address on the token page and the events on the log (${size.name}, ${size.width} px)`,
      { skip: skipWithoutChromium, timeout: 90_000 },
      async (t) => {
        let now = nowSeconds();
        const h = await build(t, 'sqlite', {}, { clock: () => now });
        const alice = await h.createUser();
        const made = await h.api({
          method: 'POST',
          path: '/tokens',
          headers: { 'user-agent': AGENT },
          payload: { username: alice.username, password: alice.password, description: 'game client' },
        });
        assert.equal(made.statusCode, 200);
        await h.api({
          method: 'POST',
          path: '/tokens',
          headers: { 'user-agent': AGENT },
          payload: { username: alice.username, password: 'not it' },
        });
        now += 60;
        const used = await h.api({
          method: 'GET',
          path: '/tokens/self',
          remoteAddress: '2001:db8:abcd:1234:5:6:7:8',
          headers: { 'x-ripple-token': made.json().token as string },
        });
        assert.equal(used.statusCode, 200);
        await h.app.tokend.lastUsed.flush();

        const origin = await serveOnLoopback(h);
        const browser = await launchChromium(t);
        const context = await browser.newContext({
          javaScriptEnabled: false,
          viewport: { width: size.width, height: size.height },
          deviceScaleFactor: 1,
          colorScheme: 'light',
          isMobile: size.width < 500,
        });
        const page = await context.newPage();
        await page.goto(`${origin}/tokens`);
        await page.getByLabel('Username').fill(alice.username);
        await page.getByLabel('Password').fill(alice.password);
        await page.getByLabel('Password').press('Enter');
        await page.waitForURL(`${origin}/tokens`);

        const lastUsed = page.locator('td.last-used');
        assert.match((await lastUsed.innerText()).replace(/\s+/g, ' '), /from 2001:db8:abcd:1234::\/64/);
        const address = lastUsed.locator('code');
        assert.ok(await address.isVisible());
        const box = (await address.boundingBox())!;
        assert.ok(
          box.x >= 0 && box.x + box.width <= size.width,
          `the address is on screen: ${JSON.stringify(box)}`,
        );
        assert.equal(await overflows(page), false, 'the token page does not scroll sideways');
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: `${ARTIFACTS}security-last-used-${size.name}.png`, fullPage: true });

        await page.getByRole('link', { name: 'Security log' }).click();
        await page.waitForURL(`${origin}/security-log`);
        assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Security log');
        const rows = page.locator('table.events tbody tr');
        // Newest first: the sign-in just now, the failed attempt, the token made.
        assert.deepEqual(
          (await rows.locator('td[data-label="Event"]').allInnerTexts()).map((s) => s.trim()),
          ['Signed in', 'Sign-in failed', 'Token created'],
        );
        const failed = rows.nth(1);
        assert.match(await failed.innerText(), /password/);
        // The user agent as what it names (a system bowser knows, no browser it knows), never its text.
        assert.ok(
          await failed.getByText('a program on Linux').isVisible(),
          'the user agent is shown in words',
        );
        assert.doesNotMatch(await failed.innerText(), /SecurityLogBrowserTest/);
        assert.equal(await overflows(page), false, 'the log does not scroll sideways');
        await page.screenshot({ path: `${ARTIFACTS}security-log-${size.name}.png`, fullPage: true });

        // The filter, a plain GET form.
        await page.getByLabel('Show').selectOption('token.created');
        await page.getByRole('button', { name: 'Filter' }).click();
        await page.waitForURL(`${origin}/security-log?kind=token.created`);
        assert.deepEqual(
          (await rows.locator('td[data-label="Event"]').allInnerTexts()).map((s) => s.trim()),
          ['Token created'],
        );
        assert.equal(await page.getByLabel('Show').inputValue(), 'token.created');
        await page.getByRole('link', { name: 'Back to your tokens' }).click();
        await page.waitForURL(`${origin}/tokens`);
      },
    );
  }
});
