// The authorization-code grant with PKCE over HTTP (inject), on every dialect: success, and each refusal.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { InjectBrowser, hiddenFieldsOf } from '../helpers/inject-browser.ts';
import {
  REDIRECT_URI,
  approve,
  authorizeUrl,
  exchangeCode,
  obtainCode,
  pkcePair,
  registerClient,
} from '../helpers/oauth.ts';
import { CODE_ATTEMPTS_MAX } from '../../src/oauth/issue.ts';

for (const dialect of DIALECTS) {
  describe(`OAuth authorization code [${dialect}]`, () => {
    async function setup(t: TestContext, options: { public?: boolean } = {}) {
      const h = await build(t, dialect);
      const owner = await h.createUser({ username: `owner_${dialect}` });
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id, public: options.public ?? false });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      return { h, owner, user, client, browser, pkce: pkcePair() };
    }

    it('sends an unsigned-in browser to /login and back, then issues tokens for the code', async (t) => {
      const h = await build(t, dialect);
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id });
      const { verifier, challenge } = pkcePair();
      const browser = new InjectBrowser(h.app);
      const params = { client, challenge, scope: 'read_confidential write', state: 'st-123' };

      const first = await browser.get(authorizeUrl(params));
      assert.equal(first.statusCode, 303);
      const loginUrl = new URL(first.headers.location as string, 'http://x');
      assert.equal(loginUrl.pathname, '/login');
      const next = new URL(loginUrl.searchParams.get('next') as string, 'http://x');
      const asked = new URL(authorizeUrl(params), 'http://x');
      assert.equal(next.pathname, '/oauth/authorize');
      assert.deepEqual([...next.searchParams].sort(), [...asked.searchParams].sort());

      await browser.signIn(user);
      const back = await approve(browser, params);
      assert.equal(`${back.origin}${back.pathname}`, REDIRECT_URI);
      assert.equal(back.searchParams.get('state'), 'st-123');
      assert.equal(back.searchParams.get('iss'), 'http://localhost');
      const code = back.searchParams.get('code') as string;

      const exchanged = await exchangeCode(h, client, code, verifier);
      assert.equal(exchanged.statusCode, 200, exchanged.body);
      assert.equal(exchanged.headers['cache-control'], 'no-store');
      const tokens = body(exchanged);
      assert.equal(tokens.token_type, 'Bearer');
      assert.equal(tokens.expires_in, 3600);
      assert.equal(tokens.scope, 'read_confidential write');
      assert.match(tokens.access_token as string, /^[A-Za-z0-9_-]{43}$/);
      assert.match(tokens.refresh_token as string, /^[A-Za-z0-9_-]{43}$/);

      // Only hashes are stored.
      const stored = await h.store.db.selectFrom('oauth_access_tokens').select('token_hash').execute();
      assert.equal(stored.length, 1);
      assert.notEqual(stored[0]?.token_hash, tokens.access_token);

      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(self.statusCode, 200, self.body);
      assert.equal(body(self).privileges, 2 | 4);
    });

    it('does not ask again when the same client and scopes were approved; asks for new scopes', async (t) => {
      const { client, browser, pkce } = await setup(t);
      await obtainCode(browser, { client, challenge: pkce.challenge, scope: 'write' });
      const again = await browser.get(
        authorizeUrl({ client, challenge: pkce.challenge, scope: 'write', state: 's' }),
      );
      assert.equal(again.statusCode, 302);
      const back = new URL(again.headers.location as string);
      assert.ok(back.searchParams.get('code'));
      assert.equal(back.searchParams.get('state'), 's');
      const wider = await browser.get(
        authorizeUrl({ client, challenge: pkce.challenge, scope: 'write bancho' }),
      );
      assert.equal(wider.statusCode, 200);
      assert.match(wider.body, /Connect to the game server/);
    });

    it('shows an error page, never a redirect, for an unregistered redirect URI or unknown client', async (t) => {
      const { client, browser, pkce } = await setup(t);
      for (const url of [
        authorizeUrl({ client, challenge: pkce.challenge, redirectUri: 'https://evil.example/callback' }),
        authorizeUrl({ client, challenge: pkce.challenge, redirectUri: `${REDIRECT_URI}/` }),
        authorizeUrl({ client: { ...client, id: 'nope' }, challenge: pkce.challenge }),
      ]) {
        const r = await browser.get(url);
        assert.equal(r.statusCode, 400, url);
        assert.equal(r.headers.location, undefined);
        assert.match(r.headers['content-type'] as string, /^text\/html/);
      }
    });

    it('refuses a code exchanged with another redirect URI', async (t) => {
      const { h, client, browser, pkce } = await setup(t);
      const code = await obtainCode(browser, { client, challenge: pkce.challenge });
      const r = await exchangeCode(h, client, code, pkce.verifier, {
        redirect_uri: 'https://app.example/other',
      });
      assert.equal(r.statusCode, 400);
      assert.equal(body(r).error, 'invalid_grant');
    });

    it('requires PKCE: a missing challenge or the plain method is redirected back with invalid_request', async (t) => {
      const { client, browser, pkce } = await setup(t);
      const noChallenge = await browser.get(
        `/oauth/authorize?response_type=code&client_id=${client.id}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&state=q`,
      );
      assert.equal(noChallenge.statusCode, 302);
      const a = new URL(noChallenge.headers.location as string);
      assert.equal(a.searchParams.get('error'), 'invalid_request');
      assert.equal(a.searchParams.get('state'), 'q');
      const plain = await browser.get(authorizeUrl({ client, challenge: pkce.verifier, method: 'plain' }));
      const b = new URL(plain.headers.location as string);
      assert.equal(b.searchParams.get('error'), 'invalid_request');
      assert.match(b.searchParams.get('error_description') ?? '', /plain/);
    });

    it('refuses a missing or wrong code_verifier', async (t) => {
      const { h, client, browser, pkce } = await setup(t);
      const code = await obtainCode(browser, { client, challenge: pkce.challenge });
      const missing = await exchangeCode(h, client, code, undefined);
      assert.equal(missing.statusCode, 400);
      assert.equal(body(missing).error, 'invalid_request');
      const wrong = await exchangeCode(h, client, code, pkcePair().verifier);
      assert.equal(wrong.statusCode, 400);
      assert.equal(body(wrong).error, 'invalid_grant');
      // Neither attempt consumed the code.
      const right = await exchangeCode(h, client, code, pkce.verifier);
      assert.equal(right.statusCode, 200, right.body);
    });

    it(`ends a code after ${CODE_ATTEMPTS_MAX} attempts with a wrong redirect_uri or code_verifier`, async (t) => {
      const { h, client, browser, pkce } = await setup(t, { public: true });
      const wrongOnce = (code: string, i: number) =>
        i % 2
          ? exchangeCode(h, client, code, pkcePair().verifier)
          : exchangeCode(h, client, code, pkce.verifier, { redirect_uri: 'https://app.example/other' });

      // One attempt short of the bound, the right proofs still exchange the code.
      const spared = await obtainCode(browser, { client, challenge: pkce.challenge });
      for (let i = 0; i < CODE_ATTEMPTS_MAX - 1; i++)
        assert.doesNotMatch(body(await wrongOnce(spared, i)).error_description as string, /too many/);
      const kept = await exchangeCode(h, client, spared, pkce.verifier);
      assert.equal(kept.statusCode, 200, kept.body);

      // At the bound, they no longer do: the code is ended, and says why.
      const burned = await obtainCode(browser, { client, challenge: pkce.challenge });
      for (let i = 0; i < CODE_ATTEMPTS_MAX; i++) {
        const r = await wrongOnce(burned, i);
        assert.equal(body(r).error, 'invalid_grant');
        assert.doesNotMatch(body(r).error_description as string, /too many/);
      }
      const late = await exchangeCode(h, client, burned, pkce.verifier);
      assert.equal(late.statusCode, 400, late.body);
      assert.deepEqual(body(late), {
        error: 'invalid_grant',
        error_description:
          'The authorization code was presented too many times with a wrong redirect_uri or code_verifier; it can no longer be exchanged.',
      });
    });

    it(`gives racing exchanges of one code no more than ${CODE_ATTEMPTS_MAX} attempts between them`, async (t) => {
      const { h, client, browser, pkce } = await setup(t, { public: true });
      const code = await obtainCode(browser, { client, challenge: pkce.challenge });
      const answers = await Promise.all(
        Array.from({ length: CODE_ATTEMPTS_MAX * 4 }, () =>
          exchangeCode(h, client, code, pkcePair().verifier),
        ),
      );
      const checked = answers.filter((r) =>
        /code_verifier does not match/.test(body(r).error_description as string),
      );
      const refused = answers.filter((r) => /too many times/.test(body(r).error_description as string));
      assert.equal(checked.length, CODE_ATTEMPTS_MAX);
      assert.equal(refused.length, answers.length - CODE_ATTEMPTS_MAX);
    });

    it('refuses a reused code and revokes the tokens it issued', async (t) => {
      const { h, client, browser, pkce } = await setup(t);
      const code = await obtainCode(browser, { client, challenge: pkce.challenge, scope: 'write' });
      const first = await exchangeCode(h, client, code, pkce.verifier);
      assert.equal(first.statusCode, 200);
      const { access_token, refresh_token } = body(first) as { access_token: string; refresh_token: string };
      const bearer = { authorization: `Bearer ${access_token}` };
      assert.equal((await h.api({ method: 'GET', path: '/tokens/self', headers: bearer })).statusCode, 200);

      const second = await exchangeCode(h, client, code, pkce.verifier);
      assert.equal(second.statusCode, 400);
      assert.equal(body(second).error, 'invalid_grant');
      assert.equal((await h.api({ method: 'GET', path: '/tokens/self', headers: bearer })).statusCode, 404);
      const refreshed = await h.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token,
          client_id: client.id,
          client_secret: client.secret as string,
        }).toString(),
      });
      assert.equal(body(refreshed).error, 'invalid_grant');
    });

    it('refuses an expired code', async (t) => {
      const { h, client, browser, pkce } = await setup(t);
      const code = await obtainCode(browser, { client, challenge: pkce.challenge });
      await h.store.db
        .updateTable('oauth_codes')
        .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
        .execute();
      const r = await exchangeCode(h, client, code, pkce.verifier);
      assert.equal(r.statusCode, 400);
      assert.deepEqual(body(r), {
        error: 'invalid_grant',
        error_description: 'The authorization code has expired.',
      });
    });

    it('refuses a wrong client secret (post and Basic) with invalid_client 401', async (t) => {
      const { h, client, browser, pkce } = await setup(t);
      const code = await obtainCode(browser, { client, challenge: pkce.challenge });
      const post = await exchangeCode(h, client, code, pkce.verifier, { client_secret: 'wrong' });
      assert.equal(post.statusCode, 401);
      assert.equal(body(post).error, 'invalid_client');
      assert.equal(post.headers['cache-control'], 'no-store');
      // The same exchange with the client authenticated by HTTP Basic instead of the form.
      const withBasic = (secret: string) =>
        h.app.inject({
          method: 'POST',
          url: '/oauth/token',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${Buffer.from(`${client.id}:${secret}`).toString('base64')}`,
          },
          payload: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            redirect_uri: client.redirectUri,
            code_verifier: pkce.verifier,
          }).toString(),
        });
      const basic = await withBasic('wrong');
      assert.equal(basic.statusCode, 401);
      assert.equal(body(basic).error, 'invalid_client');
      assert.match(basic.headers['www-authenticate'] as string, /^Basic/);
      const noSecret = await exchangeCode(h, client, code, pkce.verifier, { client_secret: undefined });
      assert.equal(body(noSecret).error, 'invalid_client');
      // HTTP Basic with the right secret works.
      const good = await withBasic(client.secret!);
      assert.equal(good.statusCode, 200, good.body);
    });

    it('lets a public client exchange with PKCE and client_id alone', async (t) => {
      const { h, client, browser, pkce } = await setup(t, { public: true });
      assert.equal(client.secret, undefined);
      const code = await obtainCode(browser, { client, challenge: pkce.challenge, scope: 'bancho' });
      const r = await exchangeCode(h, client, code, pkce.verifier);
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(body(r).scope, 'bancho');
    });

    it('redirects an unknown scope back with invalid_scope', async (t) => {
      const { client, browser, pkce } = await setup(t);
      const r = await browser.get(
        authorizeUrl({ client, challenge: pkce.challenge, scope: 'write admin', state: 'z' }),
      );
      assert.equal(r.statusCode, 302);
      const back = new URL(r.headers.location as string);
      assert.equal(back.searchParams.get('error'), 'invalid_scope');
      assert.equal(back.searchParams.get('state'), 'z');
      assert.equal(back.searchParams.get('code'), null);
    });

    it('redirects Deny back with access_denied and issues no code', async (t) => {
      const { h, client, browser, pkce } = await setup(t);
      const back = await approve(browser, { client, challenge: pkce.challenge, state: 'd' }, 'deny');
      assert.equal(back.searchParams.get('error'), 'access_denied');
      assert.equal(back.searchParams.get('state'), 'd');
      assert.equal(back.searchParams.get('code'), null);
      assert.equal((await h.store.db.selectFrom('oauth_codes').select('code_hash').execute()).length, 0);
    });

    it('refuses the consent form without its CSRF token', async (t) => {
      const { h, client, browser, pkce } = await setup(t);
      const page = await browser.get(authorizeUrl({ client, challenge: pkce.challenge }));
      const fields = hiddenFieldsOf(page.body);
      delete fields._csrf;
      const r = await browser.post('/oauth/authorize', { ...fields, decision: 'allow' });
      assert.equal(r.statusCode, 403);
      assert.equal(r.headers.location, undefined);
      const forged = await browser.post('/oauth/authorize', {
        ...fields,
        _csrf: 'forged',
        decision: 'allow',
      });
      assert.equal(forged.statusCode, 403);
      assert.equal((await h.store.db.selectFrom('oauth_codes').select('code_hash').execute()).length, 0);
    });

    it('answers an unsupported grant type and malformed requests in RFC 6749 §5.2 form', async (t) => {
      const { h, client } = await setup(t);
      const cases: Array<[Record<string, string>, string, number]> = [
        [{ grant_type: 'password' }, 'unsupported_grant_type', 400],
        [{}, 'invalid_request', 400],
        [{ grant_type: 'authorization_code' }, 'invalid_request', 400],
      ];
      for (const [fields, error, status] of cases) {
        const r = await h.app.inject({
          method: 'POST',
          url: '/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({
            client_id: client.id,
            client_secret: client.secret as string,
            ...fields,
          }).toString(),
        });
        assert.equal(r.statusCode, status, r.body);
        assert.equal(body(r).error, error);
        assert.equal(typeof body(r).error_description, 'string');
      }
      const json = await h.app.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: { grant_type: 'password' },
      });
      assert.equal(json.statusCode, 400);
      assert.equal(body(json).error, 'invalid_request');
      // The refusal names the body the endpoint takes: a form, not JSON.
      assert.match(String(body(json).error_description), /application\/x-www-form-urlencoded/);
      const text = await h.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'text/plain' },
        payload: 'grant_type=password',
      });
      assert.equal(text.statusCode, 400);
      assert.equal(body(text).error, 'invalid_request');
      assert.match(String(body(text).error_description), /application\/x-www-form-urlencoded/);
      const repeated = await h.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `client_id=${client.id}&client_secret=${client.secret}&grant_type=refresh_token&grant_type=refresh_token`,
      });
      assert.equal(body(repeated).error, 'invalid_request');
    });
  });
}
