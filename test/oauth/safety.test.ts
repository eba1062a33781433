// Safety of the authorization server: escaping on the consent page, no secret in any log line,
// repeated parameters, and the removal of expired rows.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { loggerOptions } from '../../src/http/logging.ts';
import { deleteExpiredOAuthRows } from '../../src/oauth/repository.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import {
  REDIRECT_URI,
  authorizeUrl,
  backChannel,
  exchangeCode,
  obtainCode,
  pkcePair,
  registerClient,
} from '../helpers/oauth.ts';

describe('consent page escaping [sqlite]', () => {
  it('shows a hostile client name, owner name and avatar as text', async (t) => {
    const h = await build(t, 'sqlite');
    const owner = await h.createUser({ username: '<b>owner</b>' });
    const user = await h.createUser();
    const client = await registerClient(h, {
      ownerId: owner.id,
      name: '<script>alert(1)</script>',
      avatar: 'https://x.example/a.png?"onerror="alert(1)',
    });
    const browser = new InjectBrowser(h.app);
    await browser.signIn(user);
    const page = await browser.get(authorizeUrl({ client, challenge: pkcePair().challenge, state: '"><i>' }));
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /<script>|<b>owner|"onerror=|"><i>/);
    assert.match(page.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(page.body, /&lt;b&gt;owner&lt;\/b&gt;/);
    assert.match(page.body, /&quot;onerror=&quot;/);
    assert.match(page.headers['content-security-policy'] as string, /default-src 'none'/);
  });
});

for (const dialect of DIALECTS) {
  describe(`OAuth housekeeping and parameters [${dialect}]`, () => {
    it('writes no code, token, secret, password or cookie to the log', async (t) => {
      const lines: string[] = [];
      const stream = new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      });
      const h = await build(t, dialect, {}, { logger: { ...(loggerOptions('trace') as object), stream } });
      const owner = await h.createUser();
      const user = await h.createUser({ password: 'hunter2-secret-password' });
      const client = await registerClient(h, { ownerId: owner.id });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const pkce = pkcePair();
      const code = await obtainCode(browser, { client, challenge: pkce.challenge, scope: 'write' });
      const tokens = body(await exchangeCode(h, client, code, pkce.verifier)) as {
        access_token: string;
        refresh_token: string;
      };
      const refreshed = body(
        await backChannel(h, '/oauth/token', client, {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
        }),
      ) as { access_token: string; refresh_token: string };
      await backChannel(h, '/oauth/introspect', client, { token: refreshed.access_token });
      await backChannel(h, '/oauth/revoke', client, { token: refreshed.refresh_token });
      await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `Bearer ${refreshed.access_token}` },
      });
      const log = lines.join('');
      assert.ok(log.includes('/oauth/token'), 'requests were logged');
      const secrets: string[] = [
        code,
        pkce.verifier,
        tokens.access_token,
        tokens.refresh_token,
        refreshed.access_token,
        refreshed.refresh_token,
        client.secret as string,
        user.password,
        browser.cookies.get('rt') as string,
        browser.cookies.get('_csrf') as string,
      ];
      for (const secret of secrets) assert.equal(log.includes(secret), false, `a secret reached the log`);
    });

    it('refuses repeated parameters: a page for client_id, a redirect for the others', async (t) => {
      const h = await build(t, dialect);
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const url = authorizeUrl({ client, challenge: pkcePair().challenge, state: 'p' });
      const twiceClient = await browser.get(`${url}&client_id=${client.id}`);
      assert.equal(twiceClient.statusCode, 400);
      assert.equal(twiceClient.headers.location, undefined);
      const twiceScope = await browser.get(`${url}&scope=write&scope=bancho`);
      assert.equal(twiceScope.statusCode, 302);
      const back = new URL(twiceScope.headers.location as string);
      assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
      assert.equal(back.searchParams.get('error'), 'invalid_request');
      assert.equal(back.searchParams.get('state'), 'p');
      const wrongType = await browser.get(url.replace('response_type=code', 'response_type=token'));
      assert.equal(
        new URL(wrongType.headers.location as string).searchParams.get('error'),
        'unsupported_response_type',
      );
    });

    it('sweeps expired codes and tokens, keeping used refresh tokens until they expire', async (t) => {
      const h = await build(t, dialect);
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const pkce = pkcePair();
      const code = await obtainCode(browser, { client, challenge: pkce.challenge });
      const tokens = body(await exchangeCode(h, client, code, pkce.verifier)) as {
        access_token: string;
        refresh_token: string;
      };
      await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
      });
      const count = async () => ({
        codes: (await h.store.db.selectFrom('oauth_codes').select('code_hash').execute()).length,
        access: (await h.store.db.selectFrom('oauth_access_tokens').select('id').execute()).length,
        refresh: (await h.store.db.selectFrom('oauth_refresh_tokens').select('id').execute()).length,
      });
      const now = Math.floor(Date.now() / 1000);
      assert.equal(await deleteExpiredOAuthRows(h.store.db, now), 0);
      assert.deepEqual(await count(), { codes: 1, access: 2, refresh: 2 });
      // Past the code's 60 s and the access tokens' hour, before the refresh tokens' 30 days.
      assert.equal(await deleteExpiredOAuthRows(h.store.db, now + 3601), 3);
      assert.deepEqual(await count(), { codes: 0, access: 0, refresh: 2 });
      // The spent refresh token is still recognised as reused.
      const reuse = await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
      });
      assert.match(body(reuse).error_description as string, /already used/);
      assert.equal(await deleteExpiredOAuthRows(h.store.db, now + 31 * 86_400), 0);
    });
  });
}

describe('OAuth endpoints when the database fails [sqlite]', () => {
  it('answer server_error without internals: JSON at /oauth/token, a redirect from /oauth/authorize', async (t) => {
    const h = await build(t, 'sqlite');
    const owner = await h.createUser();
    const user = await h.createUser();
    const client = await registerClient(h, { ownerId: owner.id });
    const browser = new InjectBrowser(h.app);
    await browser.signIn(user);
    await sql`DROP TABLE oauth_refresh_tokens`.execute(h.store.db);
    await sql`DROP TABLE oauth_consents`.execute(h.store.db);

    const token = await backChannel(h, '/oauth/token', client, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
    });
    assert.equal(token.statusCode, 500);
    assert.equal(token.headers['cache-control'], 'no-store');
    assert.deepEqual(body(token), {
      error: 'server_error',
      error_description: 'An internal error occurred. Please try again later.',
    });

    const page = await browser.get(authorizeUrl({ client, challenge: pkcePair().challenge, state: 'f' }));
    assert.equal(page.statusCode, 302);
    const back = new URL(page.headers.location as string);
    assert.equal(back.searchParams.get('error'), 'server_error');
    assert.equal(back.searchParams.get('state'), 'f');
    assert.doesNotMatch(back.searchParams.get('error_description') ?? '', /oauth_consents|SQL/i);
  });
});
