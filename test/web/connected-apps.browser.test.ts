// Connected applications and sign-out everywhere in a real browser (headless Chromium via playwright-core):
// approve an application through the consent page, see it on the token page, revoke its access after a
// confirmation; then sign out everywhere after the confirmation and the password, and read that it was
// done on the sign-in page. Screenshots go to test/artifacts/apps-*.png.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { build } from '../helpers/app.ts';
import { ARTIFACTS, launchChromium, serveOnLoopback, skipWithoutChromium } from '../helpers/browser.ts';
import { authorizeUrl, exchangeCode, pkcePair, registerClient } from '../helpers/oauth.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

describe('connected applications in a real browser [sqlite]', () => {
  it(
    'approves an app, shows it on the token page, revokes it; then signs out everywhere',
    { skip: skipWithoutChromium, timeout: 90_000 },
    async (t) => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const h = await build(t, 'sqlite');
      const origin = await serveOnLoopback(h);
      const user = await h.createUser({ username: 'player_two', password: 'battery staple' });
      const maker = await h.createUser({ username: 'tracker_dev' });
      const client = await registerClient(h, { ownerId: maker.id, name: 'Score Tracker' });
      const api = await h.createToken(user.id, { description: 'uploader' });

      const browser = await launchChromium(t);
      const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      // The application's own site is not on this machine: answer its callback here.
      let callback: URL | undefined;
      await page.route('https://app.example/**', async (route) => {
        callback = new URL(route.request().url());
        await route.fulfill({ status: 200, contentType: 'text/html', body: '<p>back at the app</p>' });
      });

      const { verifier, challenge } = pkcePair();
      await page.goto(`${origin}${authorizeUrl({ client, challenge, scope: 'read_confidential write' })}`);
      assert.match(page.url(), /\/login\?next=/);
      await page.getByLabel('Username').fill('player_two');
      await page.getByLabel('Password').fill('battery staple');
      await page.getByLabel('Password').press('Enter');
      await page.getByRole('heading', { name: 'Authorize Score Tracker?' }).waitFor();
      assert.match(await page.locator('main').innerText(), /list your API tokens/);
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL(/^https:\/\/app\.example\//);
      const code = callback?.searchParams.get('code');
      assert.ok(code, 'the app received a code');
      const exchanged = await exchangeCode(h, client, code, verifier);
      assert.equal(exchanged.statusCode, 200, exchanged.body);
      const access = (exchanged.json() as { access_token: string }).access_token;
      const bearerSelf = () =>
        h.api({ method: 'GET', path: '/tokens/self', headers: { authorization: `Bearer ${access}` } });
      assert.equal((await bearerSelf()).statusCode, 200);

      await page.goto(`${origin}/tokens`);
      const apps = page.getByRole('list', { name: 'Connected applications' });
      const item = apps.getByRole('listitem').filter({ hasText: 'Score Tracker' });
      await item.waitFor();
      const text = await item.innerText();
      assert.match(text, /read private information and list your tokens, make changes/);
      assert.match(text, /Approved just now/);
      assert.match(text, /Last used just now/);
      await page.screenshot({ path: `${ARTIFACTS}apps-connected.png`, fullPage: true });

      // Revoking asks first, as revoking a token does.
      await item.getByRole('link', { name: 'Revoke access of Score Tracker…' }).click();
      await page.getByRole('heading', { name: 'Revoke access of Score Tracker?' }).waitFor();
      assert.equal((await bearerSelf()).statusCode, 200, 'the confirmation alone revokes nothing');
      await page.screenshot({ path: `${ARTIFACTS}apps-revoke-confirm.png`, fullPage: true });
      await page.getByRole('button', { name: 'Revoke access' }).click();
      await page.waitForURL(`${origin}/tokens?disconnected=1`);
      assert.match(await page.getByRole('status').innerText(), /disconnected/);
      assert.equal(await apps.count(), 0, 'no application is listed');
      assert.equal((await bearerSelf()).statusCode, 404, 'the bearer token stopped working');

      // Sign out everywhere, after sudo mode has lapsed: confirmation and password.
      await h.store.db
        .updateTable('tokens')
        .set({ password_at: nowSeconds() - 3600 })
        .where('session', '=', 1)
        .execute();
      await page.getByRole('link', { name: 'Sign out everywhere…' }).click();
      await page.getByRole('heading', { name: 'Sign out everywhere?' }).waitFor();
      await page.getByLabel('Yes, end all of them').check();
      await page.getByLabel('Confirm with your password').fill('battery staple');
      await page.screenshot({ path: `${ARTIFACTS}apps-sign-out-everywhere.png`, fullPage: true });
      await page.getByRole('button', { name: 'Sign out everywhere' }).click();
      await page.waitForURL(`${origin}/login?signed_out=everywhere`);
      await page.getByRole('status').filter({ hasText: 'You have signed out everywhere' }).waitFor();
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': api.secret },
      });
      assert.equal(self.statusCode, 404, 'the API token was revoked');
      await page.goto(`${origin}/tokens`);
      assert.match(page.url(), /\/login\?next=%2Ftokens$/, 'this browser is signed out');
      assert.deepEqual(problems, []);
    },
  );
});
