// "Your applications" in a real browser (headless Chromium via playwright-core), at 1280 px and on a
// 390 px phone: registering without JavaScript (the secret shown once as text), the copy button with
// JavaScript, and no page wider than the phone, even with a long name and long redirect URIs.
// Screenshots go to test/artifacts/applications-*.png.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { build, type Harness, type TestUser } from '../helpers/app.ts';
import { ARTIFACTS, launchChromium, serveOnLoopback, skipWithoutChromium } from '../helpers/browser.ts';

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/** Problems the page reports to the console (a CSP violation, a script error) or a failed load. */
function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().includes('avatar.example')) problems.push(`${r.status()} ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return problems;
}

async function openAs(
  browser: Browser,
  origin: string,
  user: TestUser,
  viewport: (typeof VIEWPORTS)[number],
  javaScriptEnabled: boolean,
) {
  const phone = viewport.width < 500;
  const context = await browser.newContext({
    viewport: { width: viewport.width, height: viewport.height },
    javaScriptEnabled,
    isMobile: phone,
    hasTouch: phone,
  });
  if (javaScriptEnabled) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${origin}/applications`);
  assert.match(page.url(), /\/login\?next=%2Fapplications$/);
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${origin}/applications`);
  return page;
}

/** The page is no wider than the window: nothing scrolls sideways. */
async function assertNoOverflow(page: Page, what: string) {
  const { scroll, inner } = (await page.evaluate(
    '({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })',
  )) as { scroll: number; inner: number };
  assert.ok(scroll <= inner, `${what}: ${scroll} px wide in a ${inner} px window`);
}

async function registerThrough(page: Page, name: string) {
  await page.getByRole('link', { name: 'Register an application' }).click();
  await page.getByLabel('Name').fill(name);
  await page
    .getByLabel('Redirect URIs')
    .fill(
      'https://a-rather-long-host-name.tracker.example/oauth/callback/with/a/long/path?and=a&query=string\n' +
        'http://127.0.0.1:48123/callback',
    );
  await page.getByLabel('Avatar URL').fill('https://avatar.example/icon.png');
  await page.getByRole('button', { name: 'Register' }).click();
  const field = page.locator('#client-secret');
  await field.waitFor();
  return field.inputValue();
}

const secretWorks = async (h: Harness, clientId: string, secret: string) => {
  const r = await h.app.inject({
    method: 'POST',
    url: '/oauth/introspect',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    },
    payload: 'token=nothing',
  });
  return r.statusCode === 200;
};

describe('your applications in a real browser [sqlite]', () => {
  for (const viewport of VIEWPORTS) {
    it(
      `registers without JavaScript, the secret shown once, at ${viewport.width} px`,
      { skip: skipWithoutChromium, timeout: 90_000 },
      async (t) => {
        mkdirSync(ARTIFACTS, { recursive: true });
        const h = await build(t, 'sqlite');
        const origin = await serveOnLoopback(h);
        const user = await h.createUser();
        const browser = await launchChromium(t);
        const page = await openAs(browser, origin, user, viewport, false);
        const problems = watchConsole(page);

        const name = `Score Tracker with a long name that has to wrap ${'x'.repeat(60)}`;
        const secret = await registerThrough(page, name);
        assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
        // Without JavaScript the copy button stays hidden; the secret is selectable text.
        assert.equal(await page.getByRole('button', { name: 'Copy' }).isVisible(), false);
        await assertNoOverflow(page, 'the new application');
        await page.screenshot({
          path: `${ARTIFACTS}applications-created-${viewport.name}.png`,
          fullPage: true,
        });
        const row = await h.store.db
          .selectFrom('oauth_clients')
          .select('id')
          .where('owner_id', '=', user.id)
          .executeTakeFirstOrThrow();
        assert.ok(await secretWorks(h, row.id, secret));

        // Shown once: its page, reloaded, shows no secret.
        await page.getByRole('link', { name: 'Back to your applications' }).click();
        await assertNoOverflow(page, 'the list');
        await page.screenshot({ path: `${ARTIFACTS}applications-list-${viewport.name}.png`, fullPage: true });
        await page.getByRole('link', { name }).click();
        await page.waitForURL(`${origin}/applications/${row.id}`);
        assert.equal(await page.locator('#client-secret').count(), 0);
        assert.ok(!(await page.content()).includes(secret));
        await assertNoOverflow(page, "the application's page");

        // A change, and a new secret with every token ended, still without JavaScript.
        await page.getByLabel('Name').fill('Renamed');
        await page.getByRole('button', { name: 'Save changes' }).click();
        await page.getByText('Your changes are saved.').waitFor();
        await page.getByRole('link', { name: 'New client secret…' }).click();
        await assertNoOverflow(page, 'the new secret confirmation');
        await page.getByRole('checkbox').check();
        await page.getByRole('button', { name: 'Make a new secret' }).click();
        const next = await page.locator('#client-secret').inputValue();
        assert.notEqual(next, secret);
        assert.equal(await secretWorks(h, row.id, secret), false);
        assert.ok(await secretWorks(h, row.id, next));

        // Deleted after its confirmation.
        await page.getByRole('link', { name: 'Delete application…' }).click();
        await assertNoOverflow(page, 'the delete confirmation');
        await page.getByRole('button', { name: 'Delete application' }).click();
        await page.getByText('The application was deleted').waitFor();
        assert.deepEqual(problems, []);
      },
    );

    it(
      `copies the new secret with the copy button, with JavaScript, at ${viewport.width} px`,
      { skip: skipWithoutChromium, timeout: 90_000 },
      async (t) => {
        const h = await build(t, 'sqlite');
        const origin = await serveOnLoopback(h);
        const user = await h.createUser();
        const browser = await launchChromium(t);
        const page = await openAs(browser, origin, user, viewport, true);
        const problems = watchConsole(page);
        const secret = await registerThrough(page, 'Copy Me');
        const copy = page.getByRole('button', { name: 'Copy' });
        assert.equal(await copy.isVisible(), true);
        await copy.click();
        await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
        assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);
        await assertNoOverflow(page, 'the new application');
        assert.deepEqual(problems, []);
      },
    );
  }
});
