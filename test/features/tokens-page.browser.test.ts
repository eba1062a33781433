// The token page in a real browser (headless Chromium via playwright-core): sign in, create a token with the
// keyboard only, copy its secret, revoke after the confirmation; and the same without JavaScript.
// Screenshots go to test/artifacts/tokens-*.png.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { build, body } from '../helpers/app.ts';
import { ARTIFACTS, launchChromium, serveOnLoopback, skipWithoutChromium } from '../helpers/browser.ts';
import { TokenPrivilege } from '../../src/privileges.ts';
import { nowSeconds } from '../../src/clock.ts';

/** Problems the page reports to the console (a CSP violation, a script error). */
function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    // Failed loads are reported below with their URL.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('response', (r) => {
    // The login page (not this one) leaves the browser to look for /favicon.ico.
    if (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico')
      problems.push(`${r.status()} ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return problems;
}

async function signIn(page: Page, origin: string, username: string, password: string) {
  await page.goto(`${origin}/tokens`);
  assert.match(page.url(), /\/login\?next=%2Ftokens$/);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByLabel('Password').press('Enter');
  await page.waitForURL(`${origin}/tokens`);
}

/** Presses Tab until the element matching `selector` has the focus (at most 40 times). */
async function tabTo(page: Page, selector: string): Promise<void> {
  for (let i = 0; i < 40; i++) {
    if (await page.evaluate(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) return;
    await page.keyboard.press('Tab');
  }
  assert.fail(`Tab never reached ${selector}`);
}

describe('token page in a real browser [sqlite]', () => {
  it(
    'creates a token with the keyboard only, copies its secret, and revokes a token',
    { skip: skipWithoutChromium, timeout: 90_000 },
    async (t) => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const h = await build(t, 'sqlite');
      const origin = await serveOnLoopback(h);
      const user = await h.createUser({ username: 'player_one', password: 'correct horse' });
      const old = await h.createToken(user.id, {
        description: 'score uploader',
        privileges: TokenPrivilege.ReadConfidential,
      });
      await h.store.db
        .updateTable('tokens')
        .set({ last_updated: nowSeconds() - 3 * 60 })
        .where('id', '=', old.id)
        .execute();

      const browser = await launchChromium(t);
      const context = await browser.newContext({ viewport: { width: 900, height: 760 } });
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const problems = watchConsole(page);

      await signIn(page, origin, 'player_one', 'correct horse');
      const row = page.getByRole('row', { name: /score uploader/ });
      await assert.doesNotReject(row.waitFor());
      assert.match(await row.innerText(), /ReadConfidential/);
      assert.match(await row.innerText(), /3 minutes ago/);
      // Every privilege is a labelled checkbox, and only those this user may give.
      for (const name of ['ReadConfidential', 'Write', 'Bancho'])
        assert.equal(await page.getByRole('checkbox', { name }).count(), 1, name);
      assert.equal(await page.getByRole('checkbox').count(), 3);
      await page.screenshot({ path: `${ARTIFACTS}tokens-list.png`, fullPage: true });

      // Keyboard only: description, the Write checkbox, an expiry, submit.
      await page.locator('body').focus();
      await tabTo(page, '#description');
      await page.keyboard.type('chat bot');
      await tabTo(page, 'input[value="Write"]');
      await page.keyboard.press('Space');
      await tabTo(page, 'input[value="Bancho"]');
      await page.keyboard.press('Space');
      await tabTo(page, '#expires_in');
      await page.keyboard.press('ArrowDown'); // "In 1 day"
      await tabTo(page, 'button[type=submit].primary');
      await page.keyboard.press('Enter');
      const secretField = page.locator('#new-token');
      await secretField.waitFor();
      const secret = await secretField.inputValue();
      assert.match(secret, /^[0-9a-f]{32}$/);

      // The copy button appears with JavaScript, and copies exactly the secret.
      const copy = page.getByRole('button', { name: 'Copy' });
      await copy.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);
      await page.screenshot({ path: `${ARTIFACTS}tokens-created.png`, fullPage: true });

      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': secret },
      });
      assert.equal(body(self).privileges, TokenPrivilege.Write | TokenPrivilege.Bancho);
      assert.equal(body(self).description, 'chat bot');

      // Revoke the old token: a confirmation first, then back to the list.
      await page.goto(`${origin}/tokens`);
      assert.equal(await page.locator('#new-token').count(), 0, 'the secret is never shown again');
      await page.getByRole('link', { name: 'Revoke score uploader' }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(`${origin}/tokens/${old.id}/revoke`);
      await page.getByRole('heading', { name: 'Revoke this token?' }).waitFor();
      await page.screenshot({ path: `${ARTIFACTS}tokens-revoke-confirm.png`, fullPage: true });
      await page.getByRole('button', { name: 'Revoke' }).click();
      await page.waitForURL(`${origin}/tokens?revoked=1`);
      await page.getByText('The token was revoked.').waitFor();
      assert.equal(await page.getByRole('row', { name: /score uploader/ }).count(), 0);
      await page.screenshot({ path: `${ARTIFACTS}tokens-revoked.png`, fullPage: true });
      const gone = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': old.secret },
      });
      assert.equal(gone.statusCode, 404);

      assert.deepEqual(problems, [], 'console errors (CSP violations, script errors)');
    },
  );

  it(
    'works without JavaScript: the secret is shown in a selectable field',
    { skip: skipWithoutChromium, timeout: 90_000 },
    async (t) => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const h = await build(t, 'sqlite');
      const origin = await serveOnLoopback(h);
      await h.createUser({ username: 'no_script', password: 'plain forms' });
      const browser = await launchChromium(t);
      const context = await browser.newContext({
        javaScriptEnabled: false,
        viewport: { width: 900, height: 700 },
      });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await signIn(page, origin, 'no_script', 'plain forms');
      await page.getByLabel('Description').fill('from a plain browser');
      await page.getByRole('checkbox', { name: 'ReadConfidential' }).check();
      await page.getByRole('button', { name: 'Create token' }).click();
      const secret = await page.locator('#new-token').inputValue();
      assert.match(secret, /^[0-9a-f]{32}$/);
      assert.equal(
        await page.getByRole('button', { name: 'Copy' }).isVisible(),
        false,
        'no dead copy button',
      );
      await page.screenshot({ path: `${ARTIFACTS}tokens-created-nojs.png`, fullPage: true });
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': secret },
      });
      assert.equal(body(self).privileges, TokenPrivilege.ReadConfidential);
      // The listed token can be revoked through the confirmation form, no script needed.
      await page.goto(`${origin}/tokens`);
      await page.getByRole('link', { name: 'Revoke from a plain browser' }).click();
      await page.getByRole('button', { name: 'Revoke' }).click();
      await page.getByText('The token was revoked.').waitFor();
      const gone = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': secret },
      });
      assert.equal(gone.statusCode, 404);
    },
  );
});

describe('API reference page in a real browser [sqlite]', () => {
  it(
    'renders every operation of the document under the security headers',
    { skip: skipWithoutChromium, timeout: 90_000 },
    async (t) => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const h = await build(t, 'sqlite');
      const origin = await serveOnLoopback(h);
      const browser = await launchChromium(t);
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      page.setDefaultTimeout(15_000);
      const problems = watchConsole(page);
      await page.goto(`${origin}/api/docs`);
      await page.locator('.opblock').first().waitFor();
      const doc = (await h.app.inject({ url: '/api/v1/openapi.json' })).json() as {
        paths: Record<string, object>;
      };
      const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
      assert.equal(await page.locator('.opblock').count(), operations);
      await page.screenshot({ path: `${ARTIFACTS}api-docs.png` });
      assert.deepEqual(problems, []);
    },
  );
});
