// The token page in a real browser (headless Chromium via playwright-core): sign in, create a token with the
// keyboard only, copy its secret, revoke after the confirmation; the same without JavaScript; the page on
// a phone. Screenshots go to test/artifacts/tokens-*.png, and those the README shows to docs/screenshots/.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { build, body, type Harness } from '../helpers/app.ts';
import {
  ARTIFACTS,
  SCREENSHOTS,
  launchChromium,
  serveOnLoopback,
  skipWithoutChromium,
} from '../helpers/browser.ts';
import { TokenPrivilege } from '../../src/auth/privileges.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

/** Problems the page reports to the console (a CSP violation, a script error). */
function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    // Failed loads are reported below with their URL.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
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

const DAY = 86_400;

/** The tokens of the screenshots: fixed descriptions, and times that read the same on every run. */
async function screenshotTokens(h: Harness, userId: number): Promise<void> {
  const now = nowSeconds();
  const tokens = [
    {
      description: 'score uploader',
      privileges: TokenPrivilege.ReadConfidential,
      used: 3 * 3600,
      age: 40 * DAY,
    },
    {
      description:
        'Chat bot of the community server: announces new top plays and answers !rank and !recent in the lobby',
      privileges: TokenPrivilege.Write | TokenPrivilege.Bancho,
      used: 2 * DAY,
      age: 14 * DAY,
      expires: 30 * DAY,
    },
    {
      description: 'leaderboard-importer-on-the-staging-cluster-node-0042-nightly',
      privileges: TokenPrivilege.ReadConfidential | TokenPrivilege.Write,
      used: 40 * 60,
      age: 3 * DAY,
      expires: 7 * DAY,
    },
    // Never used: its last use is still its creation.
    { description: '', privileges: 0, used: 90 * DAY, age: 90 * DAY, expires: 365 * DAY },
  ];
  for (const token of tokens) {
    const { id } = await h.createToken(userId, token);
    await h.store.db
      .updateTable('tokens')
      .set({
        created_at: now - token.age,
        last_updated: now - token.used,
        expires_at: token.expires === undefined ? null : now + token.expires,
      })
      .where('id', '=', id)
      .execute();
  }
}

/** A browser context of the given width, light colours and no animations, signed in on the token page. */
async function tokenPageAt(
  browser: Browser,
  origin: string,
  viewport: { width: number; height: number },
  user: { username: string; password: string },
): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({
    viewport,
    deviceScaleFactor: 1,
    colorScheme: 'light',
    reducedMotion: 'reduce',
    isMobile: viewport.width < 500,
    hasTouch: viewport.width < 500,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems = watchConsole(page);
  await signIn(page, origin, user.username, user.password);
  return { page, problems };
}

describe('token page layout in a real browser [sqlite]', () => {
  it(
    'fits a 390 px phone: no sideways scrolling, every row shows its expiry and Revoke; screenshots',
    { skip: skipWithoutChromium, timeout: 90_000 },
    async (t) => {
      mkdirSync(SCREENSHOTS, { recursive: true });
      // The public address the page's example names: the same in every run, whatever port the test gets.
      const h = await build(t, 'sqlite', { PUBLIC_URL: 'https://tokens.example' });
      const origin = await serveOnLoopback(h);
      const user = await h.createUser({ username: 'alice', password: 'correct horse' });
      await screenshotTokens(h, user.id);
      const browser = await launchChromium(t);

      // The desktop page, for the README.
      const desktop = await tokenPageAt(browser, origin, { width: 1024, height: 768 }, user);
      await desktop.page.getByRole('row', { name: /score uploader/ }).waitFor();
      assert.match(
        await desktop.page.getByRole('row', { name: /Chat bot/ }).innerText(),
        /2 days ago\s+in 1 month/,
      );
      // The icon every page links loads under the page's policy.
      const iconWidth = await desktop.page.evaluate(`(async () => {
        const image = new Image();
        image.src = document.querySelector('link[rel=icon]').href;
        await image.decode();
        return image.naturalWidth;
      })()`);
      assert.equal(iconWidth, 32);
      await desktop.page.screenshot({ path: `${SCREENSHOTS}tokens-page.png`, fullPage: true });
      // Either side of the width where the table turns into cards, nothing runs off the side either.
      for (const width of [1280, 961, 960, 721, 560]) {
        await desktop.page.setViewportSize({ width, height: 768 });
        const scrollWidth = await desktop.page.evaluate('document.documentElement.scrollWidth');
        assert.ok(Number(scrollWidth) <= width, `the page is ${String(scrollWidth)} px wide at ${width} px`);
      }
      assert.deepEqual(desktop.problems, [], 'console errors or failed loads on the desktop page');

      const { page, problems } = await tokenPageAt(browser, origin, { width: 390, height: 844 }, user);
      await page.getByRole('row', { name: /score uploader/ }).waitFor();
      const widths = (await page.evaluate(
        '({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })',
      )) as { scroll: number; inner: number };
      assert.equal(widths.inner, 390);
      assert.ok(widths.scroll <= widths.inner, `the page is ${widths.scroll} px wide in a 390 px window`);

      const rows = page.locator('table.tokens tbody tr');
      assert.equal(await rows.count(), 4);
      for (let i = 0; i < 4; i++) {
        const row = rows.nth(i);
        const expires = row.locator('td.expires');
        const revoke = row.getByRole('link', { name: /^Revoke/ });
        assert.match(await expires.innerText(), /^(never|in 1 (week|month|year))$/);
        for (const [name, control] of [
          ['Expires', expires],
          ['Revoke', revoke],
        ] as const) {
          await control.evaluate((element) =>
            (element as unknown as { scrollIntoView(o: object): void }).scrollIntoView({ block: 'center' }),
          );
          assert.ok(await control.isVisible(), `row ${i}: ${name} is visible`);
          const box = await control.boundingBox();
          assert.ok(box && box.width > 0 && box.height > 0, `row ${i}: ${name} has a box`);
          assert.ok(
            box.x >= 0 && box.x + box.width <= 390 && box.y >= 0 && box.y + box.height <= 844,
            `row ${i}: ${name} at ${JSON.stringify(box)} is outside the 390×844 viewport`,
          );
        }
        // A long description wraps inside its card instead of widening it.
        const description = row.locator('td.description');
        type Box = { scrollWidth: number; clientWidth: number };
        const overflow = await description.evaluate((cell) => {
          const box = cell as unknown as Box;
          return box.scrollWidth - box.clientWidth;
        });
        assert.ok(overflow <= 0, `row ${i}: the description overflows by ${overflow} px`);
      }
      // The form's fields and the sign-out-everywhere button fit too.
      for (const control of [
        page.getByLabel('Description'),
        page.getByRole('button', { name: 'Create token' }),
        page.getByRole('link', { name: 'Sign out everywhere…' }),
      ]) {
        const box = await control.boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 390, JSON.stringify(box));
      }
      await page.evaluate('window.scrollTo(0, 0)');
      await page.screenshot({ path: `${SCREENSHOTS}tokens-page-phone.png`, fullPage: true });
      assert.deepEqual(problems, [], 'console errors or failed loads on the phone page');
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
      const loaded = page.waitForRequest(`${origin}/api/v1/openapi.json`);
      await page.goto(`${origin}/api/docs`);
      await loaded;
      await page.locator('.opblock').first().waitFor();
      const doc = (await h.app.inject({ url: '/api/v1/openapi.json' })).json() as {
        paths: Record<string, object>;
      };
      const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
      assert.equal(await page.locator('.opblock').count(), operations);
      // Titled for tokend; the top bar names the document's own address, which the page loaded.
      assert.equal(await page.title(), 'API reference · tokend');
      assert.match(await page.locator('.topbar select').innerText(), /\/api\/v1\/openapi\.json/);
      assert.equal(
        await page
          .locator('.info .title')
          .first()
          .innerText()
          .then((s) => s.split('\n')[0]),
        'tokend',
      );
      // Every section has operations; none is left in "default"; the sign-in pages have their own.
      const sections = page.locator('.opblock-tag-section');
      const names: string[] = [];
      for (let i = 0; i < (await sections.count()); i++) {
        const section = sections.nth(i);
        const name = String(await section.locator('.opblock-tag').getAttribute('data-tag'));
        names.push(name);
        assert.ok((await section.locator('.opblock').count()) > 0, `section ${name} is empty`);
      }
      assert.deepEqual(names, ['tokens', 'users', 'oauth', 'web pages', 'operations']);
      const webPages = page.locator('.opblock-tag-section', { has: page.locator('[data-tag="web pages"]') });
      assert.deepEqual(
        (await webPages.locator('.opblock-summary-path').allInnerTexts()).map((s) => s.trim()).sort(),
        ['/login', '/login', '/logout'],
      );
      // It links back to the token page.
      const back = page.locator('.info .description').getByRole('link', { name: 'your token page' });
      assert.equal(await back.getAttribute('href'), '/tokens');
      await page.screenshot({ path: `${ARTIFACTS}api-docs.png`, fullPage: true });
      assert.deepEqual(problems, []);
    },
  );
});
