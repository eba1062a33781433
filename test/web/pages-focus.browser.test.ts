// The pages in a real browser (headless Chromium via playwright-core) on a 390 px phone and a 1280 px
// desktop: where the focus goes (sign-in, its errors, a new secret, the token form's errors, each shown in
// view beside its field, with and without JavaScript), the whole new secret in view, a reload
// that shows it no more, a custom expiry date, regenerating a token, an application whose avatar does not
// load, revoking its access after a confirmation, signing out, and the HTML 404 page.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { ACTIVE, build, type Harness } from '../helpers/app.ts';
import { ARTIFACTS, launchChromium, serveOnLoopback, skipWithoutChromium } from '../helpers/browser.ts';
import { authorizeUrl, exchangeCode, obtainCode, pkcePair, registerClient } from '../helpers/oauth.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { UserPrivilege } from '../../src/auth/privileges.ts';

const WIDTHS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1280, height: 900 },
] as const;

async function contextAt(
  browser: Browser,
  size: (typeof WIDTHS)[number],
  javaScriptEnabled = true,
): Promise<BrowserContext> {
  return browser.newContext({
    javaScriptEnabled,
    viewport: { width: size.width, height: size.height },
    deviceScaleFactor: 1,
    colorScheme: 'light',
    isMobile: size.width < 500,
    hasTouch: size.width < 500,
  });
}

/** Problems the page reports: script errors, CSP violations, failed loads other than `allowed`. */
function watch(page: Page, allowed: (url: string) => boolean = () => false): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('requestfailed', (r) => {
    if (!allowed(r.url())) problems.push(`failed ${r.url()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !allowed(r.url())) problems.push(`${r.status()} ${r.url()}`);
  });
  return problems;
}

const focusedId = (page: Page): Promise<string> =>
  page.evaluate('document.activeElement?.id ?? ""') as Promise<string>;

async function signIn(page: Page, origin: string, username: string, password: string) {
  await page.goto(`${origin}/tokens`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByLabel('Password').press('Enter');
  await page.waitForURL(`${origin}/tokens`);
}

const publicTokens = async (h: Harness, userId: number) =>
  h.store.db
    .selectFrom('tokens')
    .select(['id', 'description', 'expires_at'])
    .where('user_id', '=', userId)
    .where('private', '=', 0)
    .orderBy('id')
    .execute();

/** The colour of one pixel of an element as drawn, read by decoding its screenshot in a blank page. */
async function pixelOf(element: Locator, context: BrowserContext, x: number, y: number): Promise<number[]> {
  const png = (await element.screenshot({ animations: 'disabled' })).toString('base64');
  const blank = await context.newPage();
  try {
    return (await blank.evaluate(
      `(async () => {
        const bytes = Uint8Array.from(atob(${JSON.stringify(png)}), (c) => c.charCodeAt(0));
        const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
        const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
        const draw = canvas.getContext('2d');
        draw.drawImage(bitmap, 0, 0);
        return Array.from(draw.getImageData(${x}, ${y}, 1, 1).data.slice(0, 3));
      })()`,
    )) as number[];
  } finally {
    await blank.close();
  }
}

/**
 * Where the focus landed after a refused form: the focused field's id, the text of what describes it
 * (aria-describedby), and whether the field and the first thing describing it (the error) are both
 * wholly inside the window, as they are drawn.
 */
async function focusAndError(page: Page, viewportHeight: number) {
  const focused = page.locator(':focus');
  // a checkbox by its value (they have no id)
  const id = (await focused.getAttribute('id')) ?? (await focused.getAttribute('value')) ?? '';
  const describedBy = ((await focused.getAttribute('aria-describedby')) ?? '').split(' ').filter(Boolean);
  const inView = async (locator: Locator) => {
    const box = await locator.boundingBox();
    return box !== null && box.y >= 0 && box.y + box.height <= viewportHeight && box.height > 0;
  };
  const first = describedBy[0];
  const message = first === undefined ? page.locator('#no-description') : page.locator(`#${first}`);
  return {
    id,
    description: first === undefined ? '' : ((await message.textContent()) ?? '').trim(),
    fieldInView: await inView(focused),
    messageInView: first !== undefined && (await inView(message)),
  };
}

const PLACEHOLDER = [107, 114, 128]; // #6b7280
const ACCENT = [36, 87, 214]; // the icon's background, #2457d6

for (const size of WIDTHS) {
  describe(`pages at ${size.width} px (${size.name}) in a real browser [sqlite]`, () => {
    it(
      'sign-in focuses the username, then the field in error; signing out says so',
      { skip: skipWithoutChromium, timeout: 90_000 },
      async (t) => {
        const h = await build(t, 'sqlite');
        const origin = await serveOnLoopback(h);
        await h.createUser({ username: 'focus_user', password: 'right one' });
        const browser = await launchChromium(t);
        const page = await (await contextAt(browser, size)).newPage();
        page.setDefaultTimeout(15_000);
        // The refused sign-ins are answered 403 and 422, as they should be.
        const problems = watch(page, (url) => url === `${origin}/login`);

        await page.goto(`${origin}/login`);
        assert.equal(await focusedId(page), 'username', 'the username has the focus');
        // The page names the service, not only the tab's title.
        assert.ok(await page.locator('main').getByText('tokend', { exact: true }).isVisible());
        // Typing straight away fills the username.
        await page.keyboard.type('focus_user');
        await page.getByLabel('Password').fill('wrong one');
        await page.getByLabel('Password').press('Enter');
        await page.getByRole('alert').waitFor();
        assert.equal(await focusedId(page), 'password', 'after a wrong password, the password field');
        assert.equal(await page.getByLabel('Username').inputValue(), 'focus_user', 'the username is kept');
        await page.getByLabel('Username').fill('');
        await page.getByLabel('Password').fill('x');
        // An empty username: the browser's own check stops the form; without it the server's answer focuses it.
        await page.evaluate('document.querySelector("form[action=\\"/login\\"]").noValidate = true');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').filter({ hasText: 'Enter your username' }).waitFor();
        assert.equal(await focusedId(page), 'username');

        await page.getByLabel('Username').fill('focus_user');
        await page.getByLabel('Password').fill('right one');
        await page.getByRole('button', { name: 'Sign in' }).click();
        // Opened directly, the sign-in lands on the token page, which has the sign-out button.
        await page.waitForURL(`${origin}/tokens`);
        await page.getByRole('button', { name: 'Sign out', exact: true }).click();
        await page.waitForURL(`${origin}/login?signed_out=1`);
        await page.getByRole('status').filter({ hasText: 'You have signed out.' }).waitFor();
        assert.equal(await focusedId(page), 'username');
        assert.deepEqual(problems, []);
      },
    );

    it(
      'a new token: its whole secret in view and focused; a reload shows it no more and makes no other',
      { skip: skipWithoutChromium, timeout: 90_000 },
      async (t) => {
        mkdirSync(ARTIFACTS, { recursive: true });
        const h = await build(t, 'sqlite');
        const origin = await serveOnLoopback(h);
        const user = await h.createUser({ username: 'secret_user', password: 'right one' });
        const browser = await launchChromium(t);
        const page = await (await contextAt(browser, size)).newPage();
        page.setDefaultTimeout(15_000);
        const problems = watch(page);
        await signIn(page, origin, 'secret_user', 'right one');

        await page.getByLabel('Description').fill('a bot with a rather long description to fill the row');
        await page.getByRole('checkbox', { name: 'Write' }).check();
        await page.getByRole('button', { name: 'Create token' }).click();
        await page.waitForURL(/\/tokens\?created=\d+$/);
        const field = page.locator('#new-token');
        const secret = await field.inputValue();
        assert.match(secret, /^[0-9a-f]{32}$/);
        assert.equal(await focusedId(page), 'new-token', 'the new secret has the focus');
        // The whole secret shows: the field's text fits inside it, and the field inside the window.
        const fit = (await field.evaluate((element) => {
          const input = element as unknown as { scrollWidth: number; clientWidth: number };
          return { scroll: input.scrollWidth, client: input.clientWidth };
        })) as { scroll: number; client: number };
        assert.ok(fit.scroll <= fit.client, `the secret needs ${fit.scroll} px in a ${fit.client} px field`);
        const box = await field.boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= size.width, JSON.stringify(box));
        const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
        assert.ok(scrollWidth <= size.width, `the page is ${scrollWidth} px wide`);
        await page.screenshot({ path: `${ARTIFACTS}tokens-new-secret-${size.width}.png`, fullPage: true });
        // The green box's heading has as much room above it as below it (within a few pixels).
        const room = (await page.evaluate(`(() => {
          const box = document.querySelector('section.created').getBoundingClientRect();
          const heading = document.getElementById('created-title');
          const next = heading.nextElementSibling.getBoundingClientRect();
          const own = heading.getBoundingClientRect();
          return { above: own.top - box.top, below: next.top - own.bottom };
        })()`)) as { above: number; below: number };
        assert.ok(Math.abs(room.above - room.below) <= 4, JSON.stringify(room));

        await page.reload();
        await page.getByRole('status').filter({ hasText: 'shown once already' }).waitFor();
        assert.equal(await page.locator('#new-token').count(), 0);
        assert.equal((await page.content()).includes(secret), false);
        assert.equal((await publicTokens(h, user.id)).length, 1, 'the reload made no second token');
        assert.deepEqual(problems, []);
      },
    );

    for (const javaScript of [true, false])
      it(
        `the token form's errors show beside the field that gets the focus, in view (JavaScript ${javaScript ? 'on' : 'off'})`,
        { skip: skipWithoutChromium, timeout: 90_000 },
        async (t) => {
          mkdirSync(ARTIFACTS, { recursive: true });
          const h = await build(t, 'sqlite');
          const origin = await serveOnLoopback(h);
          // A chat moderator, who may give tokens the Blog privilege while the role lasts.
          const user = await h.createUser({
            username: 'errors_user',
            password: 'right one',
            privileges: ACTIVE | UserPrivilege.AdminChatMod,
          });
          // Enough tokens that the form sits far below the top of the page.
          for (let i = 0; i < 8; i++) await h.createToken(user.id, { description: `token number ${i}` });
          const browser = await launchChromium(t);
          const page = await (await contextAt(browser, size, javaScript)).newPage();
          page.setDefaultTimeout(15_000);
          // The refused forms are answered 400 and 403, as they should be.
          const problems = watch(page, (url) => url === `${origin}/tokens`);
          await signIn(page, origin, 'errors_user', 'right one');
          const create = page.getByRole('button', { name: 'Create token' });
          const refused = async (message: RegExp, field: string, shot: string) => {
            await page.getByRole('alert').filter({ hasText: message }).waitFor();
            const seen = await focusAndError(page, size.height);
            assert.equal(seen.id, field, `${shot}: the field in error has the focus`);
            assert.match(seen.description, message, `${shot}: the field is described by the message`);
            assert.ok(seen.fieldInView, `${shot}: the focused field is in view`);
            assert.ok(seen.messageInView, `${shot}: the message is in view beside it`);
            await page.screenshot({ path: `${ARTIFACTS}tokens-error-${shot}-${size.width}.png` });
          };

          // "On a date…" with no date.
          await page.getByLabel('Expires', { exact: true }).selectOption('custom');
          await create.click();
          await refused(/Choose the date the token expires on/, 'expires_on', 'date');

          // A description with a control character (a paste can bring one).
          await page.getByLabel('Expires', { exact: true }).selectOption({ label: 'Never' });
          await page.getByLabel('Description').fill('bell \u0007 inside');
          await create.click();
          await refused(/may not contain control characters/, 'description', 'description');

          // A privilege the account lost after the page was shown.
          await page.getByLabel('Description').fill('posts');
          await page.getByRole('checkbox', { name: 'Blog' }).check();
          await h.setUserPrivileges(user.id, ACTIVE);
          await create.click();
          await refused(/cannot give a token these privileges: Blog/, 'ReadConfidential', 'privileges');

          // Sudo mode lapsed: the password field.
          await h.store.db
            .updateTable('tokens')
            .set({ password_at: nowSeconds() - 3600 })
            .where('user_id', '=', user.id)
            .where('session', '=', 1)
            .execute();
          await page.goto(`${origin}/tokens`);
          await page.getByLabel('Description').fill('needs the password');
          await page.getByLabel('Confirm with your password').fill('wrong one');
          await create.click();
          await refused(/not right/, 'confirm_password', 'password');
          assert.deepEqual(problems, []);
        },
      );

    it(
      'a custom expiry date and regenerating a token',
      { skip: skipWithoutChromium, timeout: 90_000 },
      async (t) => {
        const h = await build(t, 'sqlite');
        const origin = await serveOnLoopback(h);
        const user = await h.createUser({ username: 'dates_user', password: 'right one' });
        const browser = await launchChromium(t);
        const page = await (await contextAt(browser, size)).newPage();
        page.setDefaultTimeout(15_000);
        const problems = watch(page);
        await signIn(page, origin, 'dates_user', 'right one');

        // The date field shows once "On a date…" is chosen (no script: the stylesheet decides).
        const date = page.getByLabel(/^Expiry date/);
        assert.equal(await date.isVisible(), false);
        await page.getByLabel('Expires', { exact: true }).selectOption('custom');
        assert.equal(await date.isVisible(), true);
        // What the date means sits under the field, not squeezed beside it.
        const dateBox = await date.boundingBox();
        const hintBox = await page
          .getByText('The token works until the end of that day (UTC).')
          .boundingBox();
        assert.ok(
          dateBox && hintBox && hintBox.y >= dateBox.y + dateBox.height,
          JSON.stringify([dateBox, hintBox]),
        );
        await date.fill('2031-03-15');
        await page.getByLabel('Description').fill('until spring');
        await page.getByRole('button', { name: 'Create token' }).click();
        await page.waitForURL(/\/tokens\?created=\d+$/);
        const [made] = await publicTokens(h, user.id);
        assert.equal(Number(made?.expires_at), Date.parse('2031-03-16T00:00:00Z') / 1000);

        await page.getByRole('link', { name: 'Regenerate until spring' }).click();
        await page.getByRole('heading', { name: 'Regenerate this token?' }).waitFor();
        await page.getByRole('button', { name: 'Regenerate token' }).click();
        await page.waitForURL(/\/tokens\?created=\d+$/);
        assert.equal(await focusedId(page), 'new-token');
        const rows = await publicTokens(h, user.id);
        assert.equal(rows.length, 1);
        assert.ok(rows[0] && made && rows[0].id > made.id, 'a new id');
        assert.equal(rows[0]?.description, 'until spring');
        assert.equal(Number(rows[0]?.expires_at), Number(made?.expires_at), 'the same expiry');
        assert.deepEqual(problems, []);
      },
    );

    it(
      'an application whose avatar fails shows a neutral placeholder; its access is revoked after a confirmation',
      { skip: skipWithoutChromium, timeout: 90_000 },
      async (t) => {
        mkdirSync(ARTIFACTS, { recursive: true });
        const h = await build(t, 'sqlite');
        const origin = await serveOnLoopback(h);
        const user = await h.createUser({ username: 'apps_user', password: 'right one' });
        const maker = await h.createUser();
        // One avatar that never loads (nothing listens on port 9), one that does (the server's icon).
        const broken = await registerClient(h, {
          ownerId: maker.id,
          name: 'Broken Picture',
          avatar: 'http://127.0.0.1:9/avatar.png',
        });
        const fine = await registerClient(h, {
          ownerId: maker.id,
          name: 'Fine Picture',
          avatar: `${origin}/favicon.svg`,
        });
        const inject = new InjectBrowser(h.app);
        await inject.signIn(user);
        const { verifier, challenge } = pkcePair();
        const access = (
          await exchangeCode(
            h,
            broken,
            await obtainCode(inject, { client: broken, challenge, scope: 'write' }),
            verifier,
          )
        ).json().access_token as string;
        const second = pkcePair();
        await exchangeCode(
          h,
          fine,
          await obtainCode(inject, { client: fine, challenge: second.challenge }),
          second.verifier,
        );

        const browser = await launchChromium(t);
        const context = await contextAt(browser, size);
        const page = await context.newPage();
        page.setDefaultTimeout(15_000);
        const problems = watch(page, (url) => url.startsWith('http://127.0.0.1:9/'));
        await signIn(page, origin, 'apps_user', 'right one');
        const apps = page.getByRole('list', { name: 'Connected applications' });
        const brokenItem = apps.getByRole('listitem').filter({ hasText: 'Broken Picture' });
        const fineItem = apps.getByRole('listitem').filter({ hasText: 'Fine Picture' });
        await fineItem
          .locator('img')
          .evaluate((img) => (img as unknown as { decode(): Promise<void> }).decode());
        await page.waitForFunction('Array.from(document.images).every((img) => img.complete)', undefined, {
          timeout: 15_000,
        });
        const brokenImage = brokenItem.locator('img.avatar');
        // Where a broken image would draw its icon (top left) and in the middle: the placeholder's grey.
        assert.deepEqual(await pixelOf(brokenImage, context, 8, 8), PLACEHOLDER);
        assert.deepEqual(await pixelOf(brokenImage, context, 4, 20), PLACEHOLDER);
        assert.deepEqual(await pixelOf(brokenImage, context, 34, 34), PLACEHOLDER);
        assert.deepEqual(
          await pixelOf(fineItem.locator('img.avatar'), context, 20, 6),
          ACCENT,
          'a loaded avatar shows itself',
        );
        await page.screenshot({
          path: `${ARTIFACTS}apps-avatar-placeholder-${size.width}.png`,
          fullPage: true,
        });

        // The consent page draws the same placeholder (a scope not approved yet asks again).
        await page.goto(
          `${origin}${authorizeUrl({ client: broken, challenge, scope: 'read_confidential' })}`,
        );
        await page.getByRole('heading', { name: 'Authorize Broken Picture?' }).waitFor();
        await page.waitForFunction('Array.from(document.images).every((img) => img.complete)');
        assert.deepEqual(await pixelOf(page.locator('main img.avatar'), context, 10, 10), PLACEHOLDER);
        assert.deepEqual(await pixelOf(page.locator('main img.avatar'), context, 54, 54), PLACEHOLDER);
        await page.goto(`${origin}/tokens`);

        // Revoking asks first; Cancel leaves it connected.
        await brokenItem.getByRole('link', { name: 'Revoke access of Broken Picture…' }).click();
        await page.getByRole('heading', { name: 'Revoke access of Broken Picture?' }).waitFor();
        assert.deepEqual(await pixelOf(page.locator('main img.avatar'), context, 8, 8), PLACEHOLDER);
        const bearer = () =>
          h.api({ method: 'GET', path: '/tokens/self', headers: { authorization: `Bearer ${access}` } });
        assert.equal((await bearer()).statusCode, 200, 'the confirmation revokes nothing');
        await page.getByRole('link', { name: 'Cancel' }).click();
        await page.waitForURL(`${origin}/tokens`);
        assert.equal((await bearer()).statusCode, 200);
        await brokenItem.getByRole('link', { name: 'Revoke access of Broken Picture…' }).click();
        await page.getByRole('button', { name: 'Revoke access' }).click();
        await page.waitForURL(`${origin}/tokens?disconnected=1`);
        assert.equal((await bearer()).statusCode, 404);
        assert.equal(await apps.getByRole('listitem').count(), 1);
        assert.deepEqual(problems, []);
      },
    );

    it(
      'an unknown address shows a page with a way back, not JSON',
      { skip: skipWithoutChromium, timeout: 90_000 },
      async (t) => {
        const h = await build(t, 'sqlite');
        const origin = await serveOnLoopback(h);
        const browser = await launchChromium(t);
        const page = await (await contextAt(browser, size)).newPage();
        page.setDefaultTimeout(15_000);
        const answer = await page.goto(`${origin}/no/such/page`);
        assert.equal(answer?.status(), 404);
        await page.getByRole('heading', { name: 'Page not found' }).waitFor();
        const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
        assert.ok(scrollWidth <= size.width);
        await page.getByRole('link', { name: 'Go to your API tokens' }).click();
        await page.waitForURL(`${origin}/login?next=%2Ftokens`);
        // Under /api a browser still gets the API's JSON.
        const api = await page.goto(`${origin}/api/v1/no-such-endpoint`);
        assert.equal(api?.status(), 404);
        assert.equal(api?.headers()['x-real-404'], 'yes');
        assert.deepEqual(await api?.json(), { code: 404, message: 'No such endpoint.' });
      },
    );
  });
}
