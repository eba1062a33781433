// The authorization-code flow clicked through in a real browser (headless Chromium via playwright-core):
// sign in, read the consent page (screenshot in test/artifacts/consent.png), Allow, exchange; then Deny.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { build, body } from '../helpers/app.ts';
import { ARTIFACTS, launchChromium, serveOnLoopback, skipWithoutChromium } from '../helpers/browser.ts';
import { exchangeCode, pkcePair, registerClient } from '../helpers/oauth.ts';

const AVATAR_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" rx="12" fill="#e0457b"/>' +
  '<circle cx="32" cy="32" r="18" fill="#fff"/><circle cx="32" cy="32" r="8" fill="#e0457b"/></svg>';

/** The third-party app's side: its icon and the redirect URI the browser lands on. */
async function startClientApp(): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/avatar.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(AVATAR_SVG);
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><title>App</title>done');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  return { server, origin: `http://127.0.0.1:${address.port}` };
}

describe('consent in a real browser [sqlite]', () => {
  it(
    'signs in, shows the consent page, Allow leads back with a code; Deny with access_denied',
    { skip: skipWithoutChromium, timeout: 90_000 },
    async (t) => {
      const h = await build(t, 'sqlite');
      const origin = await serveOnLoopback(h);

      const app = await startClientApp();
      t.after(() => new Promise<void>((resolve) => app.server.close(() => resolve())));

      const owner = await h.createUser({ username: 'Hikari Dev' });
      const user = await h.createUser({ username: 'player_one', password: 'correct horse' });
      const client = await registerClient(h, {
        ownerId: owner.id,
        name: 'Score Tracker',
        avatar: `${app.origin}/avatar.svg`,
        redirectUris: [`${app.origin}/callback`],
      });

      const browser = await launchChromium(t);
      const page = await browser.newPage({ viewport: { width: 520, height: 640 } });
      page.setDefaultTimeout(15_000);

      const pkce = pkcePair();
      const authorize = (scope: string, state: string) =>
        `${origin}/oauth/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: client.id,
          redirect_uri: client.redirectUri,
          scope,
          state,
          code_challenge: pkce.challenge,
          code_challenge_method: 'S256',
        })}`;

      // Not signed in: the authorization request leads to the sign-in form and back.
      await page.goto(authorize('read_confidential bancho', 'state-allow'));
      assert.equal(new URL(page.url()).pathname, '/login');
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill(user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => url.pathname === '/oauth/authorize');

      // The consent page names the client, its owner and avatar, and each scope in plain words.
      await page.getByRole('heading', { name: 'Authorize Score Tracker?' }).waitFor();
      const text = await page.locator('main').innerText();
      assert.match(text, /An app by Hikari Dev/);
      assert.match(text, /player_one/);
      assert.match(text, /Read your private account information/);
      assert.match(text, /Connect to the game server \(Bancho\) as you/);
      assert.doesNotMatch(text, /Make changes to your account/);
      const avatarWidth = await page
        .locator('.client img')
        .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth);
      assert.equal(avatarWidth, 64, 'the client avatar loaded');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}consent.png`, fullPage: true });

      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((url) => url.origin === app.origin);
      const back = new URL(page.url());
      assert.equal(back.pathname, '/callback');
      assert.equal(back.searchParams.get('state'), 'state-allow');
      assert.equal(back.searchParams.get('iss'), origin);
      const code = back.searchParams.get('code');
      assert.ok(code);

      const exchanged = await exchangeCode(h, client, code, pkce.verifier);
      assert.equal(exchanged.statusCode, 200, exchanged.body);
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `Bearer ${body(exchanged).access_token}` },
      });
      assert.equal(body(self).scope, 'bancho read_confidential');
      assert.equal(body(self).privileges, 2 | 8192);

      // A new scope asks again; Deny sends the browser back with access_denied and no code.
      await page.goto(authorize('write', 'state-deny'));
      await page.getByRole('heading', { name: 'Authorize Score Tracker?' }).waitFor();
      assert.match(await page.locator('main').innerText(), /Make changes to your account/);
      await page.getByRole('button', { name: 'Deny' }).click();
      await page.waitForURL((url) => url.origin === app.origin);
      const denied = new URL(page.url());
      assert.equal(denied.searchParams.get('error'), 'access_denied');
      assert.equal(denied.searchParams.get('state'), 'state-deny');
      assert.equal(denied.searchParams.get('code'), null);

      // The approved scopes are remembered: no consent page the second time.
      await page.goto(authorize('bancho', 'state-again'));
      await page.waitForURL((url) => url.origin === app.origin);
      assert.ok(new URL(page.url()).searchParams.get('code'));
    },
  );
});
