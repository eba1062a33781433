// Every page shares one theme and the icon, in a real browser (headless Chromium via playwright-core):
// sign-in, consent, the token page with a connected application, and the confirmation pages show links,
// buttons and focus rings in the same colours, and load the icon under their own policies.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { build } from '../helpers/app.ts';
import { launchChromium, serveOnLoopback, skipWithoutChromium } from '../helpers/browser.ts';
import { authorizeUrl, pkcePair, registerClient } from '../helpers/oauth.ts';

/** The theme's colours as the browser computes them. */
const ACCENT = 'rgb(36, 87, 214)';
const DANGER = 'rgb(179, 38, 30)';
const FOCUS_RING = 'rgb(245, 166, 35) solid 3px';

interface Look {
  page: string;
  card: string;
  text: string;
  font: string;
  link: string | null;
  primary: string | null;
  danger: string | null;
  icon: string | null;
  iconWidth: number;
}

/** The page's colours and fonts, and the width of its icon as loaded under the page's own policy. */
const LOOK = `(async () => {
  const style = (selector, property) => {
    const element = document.querySelector(selector);
    return element ? getComputedStyle(element).getPropertyValue(property) : null;
  };
  const icon = document.querySelector('link[rel=icon]');
  const image = new Image();
  image.src = icon ? icon.href : '';
  await image.decode().catch(() => undefined);
  return {
    page: style('body', 'background-color'),
    card: style('main', 'background-color'),
    text: style('body', 'color'),
    font: style('body', 'font-family'),
    link: style('main a[href], main button.link', 'color'),
    primary: style('button.primary', 'background-color'),
    danger: style('button.danger', 'background-color'),
    icon: icon ? icon.getAttribute('href') : null,
    iconWidth: image.naturalWidth,
  };
})()`;

/** The focus ring of the first element Tab reaches. */
async function focusRing(page: Page): Promise<string> {
  await page.locator('body').focus();
  await page.keyboard.press('Tab');
  return String(
    await page.evaluate(`(() => {
      const s = getComputedStyle(document.activeElement);
      return s.outlineColor + ' ' + s.outlineStyle + ' ' + s.outlineWidth;
    })()`),
  );
}

describe('the pages share one theme and the icon, in a real browser [sqlite]', () => {
  it(
    'sign-in, consent, token page and confirmations: same colours, focus rings and icon; no failed load',
    { skip: skipWithoutChromium, timeout: 90_000 },
    async (t) => {
      const h = await build(t, 'sqlite');
      const origin = await serveOnLoopback(h);
      const user = await h.createUser({ username: 'player_three', password: 'tr0ub4dor' });
      const maker = await h.createUser({ username: 'tracker_dev' });
      const client = await registerClient(h, { ownerId: maker.id, name: 'Score Tracker' });
      const token = await h.createToken(user.id, { description: 'uploader' });

      const browser = await launchChromium(t);
      const context = await browser.newContext({
        viewport: { width: 900, height: 800 },
        colorScheme: 'light',
      });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('response', (r) => {
        if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
      });
      await page.route('https://app.example/**', (route) =>
        route.fulfill({ status: 200, contentType: 'text/html', body: '<p>back at the app</p>' }),
      );

      const looks = new Map<string, Look>();
      const rings = new Map<string, string>();
      const visit = async (name: string) => {
        looks.set(name, (await page.evaluate(LOOK)) as Look);
        rings.set(name, await focusRing(page));
      };

      // Sign-in (reached from the consent request), then consent.
      const { challenge } = pkcePair();
      await page.goto(`${origin}${authorizeUrl({ client, challenge, scope: 'read_confidential' })}`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await visit('sign-in');
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill(user.password);
      await page.getByLabel('Password').press('Enter');
      await page.getByRole('heading', { name: 'Authorize Score Tracker?' }).waitFor();
      await visit('consent');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL(/^https:\/\/app\.example\//);

      // The token page, with the connected application, and its confirmation pages.
      await page.goto(`${origin}/tokens`);
      await page.getByRole('list', { name: 'Connected applications' }).waitFor();
      await visit('token page');
      await page.goto(`${origin}/tokens/${token.id}/revoke`);
      await page.getByRole('heading', { name: 'Revoke this token?' }).waitFor();
      await visit('revoke confirmation');
      await page.goto(`${origin}/tokens/sign-out-everywhere`);
      await page.getByRole('heading', { name: 'Sign out everywhere?' }).waitFor();
      await visit('sign-out-everywhere confirmation');
      await page.goto(`${origin}/login`);
      await page.getByRole('heading', { name: 'Signed in' }).waitFor();
      await visit('signed-in page');

      for (const [name, look] of looks) {
        assert.equal(look.icon, '/favicon.svg', `${name}: links the icon`);
        assert.equal(look.iconWidth, 32, `${name}: the icon loads under the page's policy`);
        assert.equal(look.page, 'rgb(244, 244, 247)', `${name}: page colour`);
        assert.equal(look.card, 'rgb(255, 255, 255)', `${name}: card colour`);
        assert.equal(look.text, 'rgb(29, 29, 36)', `${name}: text colour`);
        assert.equal(look.font, looks.get('sign-in')?.font, `${name}: font`);
        if (look.link !== null) assert.equal(look.link, ACCENT, `${name}: link colour`);
        if (look.primary !== null) assert.equal(look.primary, ACCENT, `${name}: primary button`);
        if (look.danger !== null) assert.equal(look.danger, DANGER, `${name}: danger button`);
        assert.equal(rings.get(name), FOCUS_RING, `${name}: focus ring`);
      }
      // Each kind of control was seen on some page.
      const seen = [...looks.values()];
      assert.ok(seen.some((look) => look.link !== null));
      assert.ok(seen.some((look) => look.primary !== null));
      assert.ok(seen.some((look) => look.danger !== null));

      // A browser that asks for /favicon.ico by itself gets the icon, not a 404. (In a page of its own:
      // with requests routed, as above, Playwright's Chromium never asks for a /favicon.ico.)
      const plain = await context.newPage();
      plain.on('response', (r) => {
        if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
      });
      await plain.goto(`${origin}/login`);
      const ico = await plain.evaluate(`(async () => {
        const image = new Image();
        image.src = '/favicon.ico';
        await image.decode();
        return image.naturalWidth;
      })()`);
      assert.equal(ico, 32);
      assert.deepEqual(problems, [], 'console errors (CSP violations) or failed loads');
    },
  );
});
