// OpenID Connect on the code flow, over HTTP (inject), on every dialect: discovery, the id_token a relying
// party verifies with jose against the JWKS (issuer, audience, signature, nonce), userinfo, the scopes,
// prompt and max_age; and the attacks on it: forged id_tokens (another key, alg none, changed claims), a
// nonce replayed into another sign-in, a code exchanged twice.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, build, type Harness } from '../helpers/app.ts';
import { InjectBrowser, csrfOf } from '../helpers/inject-browser.ts';
import {
  approve,
  authorizeUrl,
  exchangeCode,
  obtainCode,
  pkcePair,
  refreshTokens,
  registerClient,
  verifyIdToken,
  type TestClient,
} from '../helpers/oauth.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { ID_TOKEN_TTL_S } from '../../src/oauth/signing-keys.ts';

const ISSUER = 'http://localhost';

/** An authorization URL with OpenID Connect's parameters added. */
function oidcUrl(client: TestClient, challenge: string, extra: Record<string, string>): string {
  const url = new URL(authorizeUrl({ client, challenge, scope: extra.scope ?? 'openid' }), ISSUER);
  for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v);
  return `${url.pathname}${url.search}`;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const dialect of DIALECTS) {
  describe(`OpenID Connect [${dialect}]`, () => {
    async function setup(t: TestContext, clock?: () => number) {
      const h = await build(t, dialect, {}, clock ? { clock } : {});
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id });
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      return { h, user, client, browser };
    }

    /** The code flow with `extra` parameters: the token response (its id_token). */
    async function signIn(
      h: Harness,
      browser: InjectBrowser,
      client: TestClient,
      extra: Record<string, string>,
    ) {
      const { verifier, challenge } = pkcePair();
      const first = await browser.get(oidcUrl(client, challenge, extra));
      let back: URL;
      if (first.statusCode === 302) back = new URL(first.headers.location as string);
      else {
        assert.equal(first.statusCode, 200, first.body);
        const answer = await browser.post('/oauth/authorize', {
          ...Object.fromEntries(
            [...first.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [
              m[1] as string,
              (m[2] as string).replace(/&amp;/g, '&'),
            ]),
          ),
          decision: 'allow',
        });
        assert.equal(answer.statusCode, 303, answer.body);
        back = new URL(answer.headers.location as string);
      }
      const code = back.searchParams.get('code');
      assert.ok(code, back.toString());
      const exchanged = await exchangeCode(h, client, code, verifier);
      assert.equal(exchanged.statusCode, 200, exchanged.body);
      return body(exchanged) as Record<string, string>;
    }

    it('publishes the discovery document (every field Discovery 1.0 §3 requires) at both addresses', async (t) => {
      const h = await build(t, dialect);
      const oidc = await h.app.inject({ url: '/.well-known/openid-configuration' });
      const rfc8414 = await h.app.inject({ url: '/.well-known/oauth-authorization-server' });
      assert.equal(oidc.statusCode, 200);
      const doc = body(oidc);
      assert.deepEqual(doc, body(rfc8414));
      for (const field of [
        'issuer',
        'authorization_endpoint',
        'token_endpoint',
        'jwks_uri',
        'response_types_supported',
        'subject_types_supported',
        'id_token_signing_alg_values_supported',
      ])
        assert.ok(doc[field] !== undefined, field);
      assert.equal(doc.issuer, ISSUER);
      assert.equal(doc.userinfo_endpoint, `${ISSUER}/oauth/userinfo`);
      assert.equal(doc.jwks_uri, `${ISSUER}/oauth/jwks`);
      assert.equal(doc.device_authorization_endpoint, `${ISSUER}/oauth/device_authorization`);
      assert.deepEqual(doc.subject_types_supported, ['public']);
      assert.deepEqual(doc.id_token_signing_alg_values_supported, ['RS256']);
      assert.ok((doc.scopes_supported as string[]).includes('openid'));
      assert.ok((doc.claims_supported as string[]).includes('preferred_username'));
      assert.ok(
        (doc.grant_types_supported as string[]).includes('urn:ietf:params:oauth:grant-type:device_code'),
      );
      assert.equal(doc.request_uri_parameter_supported, false);
      const jwks = await h.app.inject({ url: '/oauth/jwks' });
      assert.equal(jwks.statusCode, 200);
      assert.match(String(jwks.headers['cache-control']), /max-age=300/);
      const keys = (jwks.json() as { keys: Array<Record<string, unknown>> }).keys;
      assert.equal(keys.length, 1);
      assert.equal(keys[0]?.kty, 'RSA');
      assert.equal(keys[0]?.alg, 'RS256');
      assert.equal(keys[0]?.d, undefined, 'no private part is published');
    });

    it('issues an id_token a relying party verifies with jose (issuer, audience, signature, nonce), and userinfo names the user', async (t) => {
      const { h, user, client, browser } = await setup(t);
      const signedInAt = nowSeconds();
      const tokens = await signIn(h, browser, client, {
        scope: 'openid profile email',
        nonce: 'n-0S6_WzA2Mj',
      });
      // email: tokend has no data for it, so it is granted fewer than asked (RFC 6749 §3.3).
      assert.equal(tokens.scope, 'openid profile');
      assert.ok(tokens.id_token);
      const claims = await verifyIdToken(h, tokens.id_token as string, {
        issuer: ISSUER,
        audience: client.id,
        nonce: 'n-0S6_WzA2Mj',
      });
      assert.equal(claims.sub, String(user.id));
      assert.equal(claims.preferred_username, user.username);
      assert.equal(claims.aud, client.id);
      assert.ok(Math.abs((claims.auth_time as number) - signedInAt) <= 5, 'auth_time is the sign-in');
      assert.equal((claims.exp as number) - (claims.iat as number), ID_TOKEN_TTL_S);
      const half = createHash('sha256')
        .update(tokens.access_token as string)
        .digest()
        .subarray(0, 16);
      assert.equal(claims.at_hash, half.toString('base64url'));
      assert.equal(claims.email, undefined);

      for (const request of [
        { method: 'GET' as const, url: '/oauth/userinfo', headers: bearer(tokens.access_token as string) },
        {
          method: 'POST' as const,
          url: '/oauth/userinfo',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `access_token=${encodeURIComponent(tokens.access_token as string)}`,
        },
      ]) {
        const info = await h.app.inject(request);
        assert.equal(info.statusCode, 200, info.body);
        assert.deepEqual(info.json(), { sub: String(user.id), preferred_username: user.username });
        assert.equal(info.headers['cache-control'], 'no-store');
      }

      // A refresh's id_token (OpenID Connect Core §12.2): the same user, the first sign-in's auth_time, no nonce.
      const refreshed = body(await refreshTokens(h, client, tokens.refresh_token as string));
      const again = await verifyIdToken(h, refreshed.id_token as string, {
        issuer: ISSUER,
        audience: client.id,
      });
      assert.equal(again.sub, claims.sub);
      assert.equal(again.auth_time, claims.auth_time);
      assert.equal(again.nonce, undefined);
    });

    it('says only what the scopes grant: openid alone is sub alone; no openid, no id_token and no userinfo', async (t) => {
      const { h, user, client, browser } = await setup(t);
      const bare = await signIn(h, browser, client, { scope: 'openid' });
      const claims = await verifyIdToken(h, bare.id_token as string, { issuer: ISSUER, audience: client.id });
      assert.equal(claims.preferred_username, undefined);
      const info = await h.app.inject({
        url: '/oauth/userinfo',
        headers: bearer(bare.access_token as string),
      });
      assert.deepEqual(info.json(), { sub: String(user.id) });

      const plain = await signIn(h, browser, client, { scope: 'read_confidential' });
      assert.equal(plain.id_token, undefined);
      const refused = await h.app.inject({
        url: '/oauth/userinfo',
        headers: bearer(plain.access_token as string),
      });
      assert.equal(refused.statusCode, 403);
      assert.match(String(refused.headers['www-authenticate']), /error="insufficient_scope", scope="openid"/);

      const unknown = await h.app.inject({ url: '/oauth/userinfo', headers: bearer('not-a-token') });
      assert.equal(unknown.statusCode, 401);
      assert.match(String(unknown.headers['www-authenticate']), /error="invalid_token"/);
      const none = await h.app.inject({ url: '/oauth/userinfo' });
      assert.equal(none.statusCode, 401);
      assert.equal(none.headers['www-authenticate'], 'Bearer realm="tokend"');

      // A banned user's token names no one.
      await h.setUserPrivileges(user.id, 0);
      const banned = await h.app.inject({
        url: '/oauth/userinfo',
        headers: bearer(bare.access_token as string),
      });
      assert.equal(banned.statusCode, 401);
      assert.match(String(banned.headers['www-authenticate']), /error="invalid_token"/);
    });

    it('prompt=none answers the client, never with a page: login_required, consent_required, or a code', async (t) => {
      const h = await build(t, dialect);
      const owner = await h.createUser();
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: owner.id });
      const { challenge } = pkcePair();
      const url = oidcUrl(client, challenge, { prompt: 'none', state: 's1' });
      const browser = new InjectBrowser(h.app);
      const out = await browser.get(url);
      assert.equal(out.statusCode, 302);
      const outUrl = new URL(out.headers.location as string);
      assert.equal(outUrl.searchParams.get('error'), 'login_required');
      assert.equal(outUrl.searchParams.get('state'), 's1');

      await browser.signIn(user);
      const unapproved = new URL((await browser.get(url)).headers.location as string);
      assert.equal(unapproved.searchParams.get('error'), 'consent_required');

      await approve(browser, { client, challenge, scope: 'openid' });
      const silent = await browser.get(url);
      assert.equal(silent.statusCode, 302);
      assert.ok(new URL(silent.headers.location as string).searchParams.get('code'));

      const mixed = new URL(
        (await browser.get(oidcUrl(client, challenge, { prompt: 'none login' }))).headers.location as string,
      );
      assert.equal(mixed.searchParams.get('error'), 'invalid_request');
      const byReference = new URL(
        (await browser.get(oidcUrl(client, challenge, { request_uri: 'https://evil.example/r' }))).headers
          .location as string,
      );
      assert.equal(byReference.searchParams.get('error'), 'request_uri_not_supported');

      // Attack: asked silently, a banned account answers as any account that approved nothing, to an
      // application it approved or not: the ban is not told to an application the user did not send.
      await h.setUserPrivileges(user.id, 0);
      const other = await registerClient(h, { ownerId: owner.id });
      for (const app of [client, other]) {
        const answer = new URL(
          (await browser.get(oidcUrl(app, challenge, { prompt: 'none' }))).headers.location as string,
        );
        assert.equal(answer.searchParams.get('error'), 'consent_required');
        assert.equal(
          answer.searchParams.get('error_description'),
          unapproved.searchParams.get('error_description'),
        );
      }
    });

    it('attack: id_token_hint naming another user than the one signed in is never answered for: login_required, or sign in again', async (t) => {
      const { h, user, client, browser } = await setup(t);
      const aliceToken = (await signIn(h, browser, client, {})).id_token as string;
      // The hinted user, signed in: answered silently.
      const { challenge } = pkcePair();
      const same = await browser.get(
        oidcUrl(client, challenge, { prompt: 'none', id_token_hint: aliceToken }),
      );
      assert.ok(
        new URL(same.headers.location as string).searchParams.get('code'),
        'a code for the hinted user',
      );

      const mallory = await h.createUser();
      const other = new InjectBrowser(h.app);
      await other.signIn(mallory);
      await approve(other, { client, challenge, scope: 'openid' });
      const silent = new URL(
        (await other.get(oidcUrl(client, challenge, { prompt: 'none', id_token_hint: aliceToken }))).headers
          .location as string,
      );
      assert.equal(silent.searchParams.get('error'), 'login_required');
      assert.equal(silent.searchParams.get('code'), null);
      const asked = await other.get(oidcUrl(client, challenge, { id_token_hint: aliceToken }));
      assert.equal(asked.statusCode, 303);
      assert.equal(new URL(asked.headers.location as string, ISSUER).pathname, '/login');

      // Not an id_token of this server for this application: refused, whoever is signed in.
      const elsewhere = await registerClient(h, { ownerId: user.id });
      const forged = `${aliceToken.slice(0, -4)}AAAA`;
      for (const [app, hint] of [
        [client, 'garbage'],
        [client, forged],
        [elsewhere, aliceToken],
      ] as const) {
        const answer = new URL(
          (await browser.get(oidcUrl(app, challenge, { prompt: 'none', id_token_hint: hint }))).headers
            .location as string,
        );
        assert.equal(answer.searchParams.get('error'), 'invalid_request', hint.slice(0, 20));
      }
    });

    it('prompt=login signs in again even with a session: auth_time is the new sign-in, the old session ends', async (t) => {
      let now = nowSeconds();
      const { h, user, client, browser } = await setup(t, () => now);
      await approve(browser, { client, challenge: pkcePair().challenge, scope: 'openid' });
      const oldSession = browser.cookies.get('rt');
      now += 600;
      const { verifier, challenge } = pkcePair();
      const asked = await browser.get(oidcUrl(client, challenge, { prompt: 'login', nonce: 'abc' }));
      assert.equal(asked.statusCode, 303);
      const login = new URL(asked.headers.location as string, ISSUER);
      assert.equal(login.pathname, '/login');
      assert.equal(login.searchParams.get('again'), '1');
      const next = new URL(login.searchParams.get('next') as string, ISSUER);
      assert.equal(next.searchParams.get('prompt'), null, 'the return does not ask again');
      assert.equal(next.searchParams.get('auth_after'), String(now));

      // The sign-in form, even though the browser has a session.
      const page = await browser.get(`${login.pathname}${login.search}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /asks you to sign in again/);
      now += 5;
      const signed = await browser.post('/login', {
        _csrf: csrfOf(page.body),
        next: `${next.pathname}${next.search}`,
        username: user.username,
        password: user.password,
      });
      assert.equal(signed.statusCode, 303);
      assert.notEqual(browser.cookies.get('rt'), oldSession);
      const back = await browser.get(signed.headers.location as string);
      assert.equal(back.statusCode, 302, back.body);
      const code = new URL(back.headers.location as string).searchParams.get('code') as string;
      const tokens = body(await exchangeCode(h, client, code, verifier));
      const claims = await verifyIdToken(h, tokens.id_token as string, {
        issuer: ISSUER,
        audience: client.id,
        nonce: 'abc',
        currentDate: new Date(now * 1000),
      });
      assert.equal(claims.auth_time, now);
      // The replaced session is gone: its cookie signs no one in.
      const stale = new InjectBrowser(h.app);
      stale.cookies.set('rt', oldSession as string);
      assert.equal((await stale.get('/tokens')).statusCode, 303);
    });

    it('max_age: a sign-in older than it is asked again; a recent one is not', async (t) => {
      let now = nowSeconds();
      const { client, browser } = await setup(t, () => now);
      await approve(browser, { client, challenge: pkcePair().challenge, scope: 'openid' });
      now += 120;
      const recent = await browser.get(oidcUrl(client, pkcePair().challenge, { max_age: '3600' }));
      assert.equal(recent.statusCode, 302);
      assert.ok(new URL(recent.headers.location as string).searchParams.get('code'));
      const old = await browser.get(oidcUrl(client, pkcePair().challenge, { max_age: '60' }));
      assert.equal(old.statusCode, 303);
      assert.match(old.headers.location as string, /^\/login\?next=.*&again=1$/);
      const silent = await browser.get(
        oidcUrl(client, pkcePair().challenge, { max_age: '60', prompt: 'none' }),
      );
      assert.equal(new URL(silent.headers.location as string).searchParams.get('error'), 'login_required');
      const bad = await browser.get(oidcUrl(client, pkcePair().challenge, { max_age: '-1' }));
      assert.equal(new URL(bad.headers.location as string).searchParams.get('error'), 'invalid_request');
    });

    it('attack: forged id_tokens (another key, alg none, changed claims) fail the relying party check', async (t) => {
      const { h, client, browser } = await setup(t);
      const tokens = await signIn(h, browser, client, { scope: 'openid profile', nonce: 'n1' });
      const real = tokens.id_token as string;
      const [header, payload, signature] = real.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
      const expected = { issuer: ISSUER, audience: client.id, nonce: 'n1' };

      // Claims changed (another user), the signature kept.
      const changed = Buffer.from(JSON.stringify({ ...claims, sub: '1' })).toString('base64url');
      await assert.rejects(verifyIdToken(h, `${header}.${changed}.${signature}`, expected));
      // alg none, no signature.
      const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      await assert.rejects(verifyIdToken(h, `${none}.${payload}.`, expected));
      // Signed by a key of the attacker's, with tokend's kid.
      const { SignJWT } = await import('jose');
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const kid = (JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string }).kid;
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey);
      await assert.rejects(verifyIdToken(h, forged, expected));
      // HS256 "signed" with the public key as the secret (the old algorithm-confusion trick).
      const publicJwk = (
        (await h.app.inject({ url: '/oauth/jwks' })).json() as { keys: Array<{ n: string }> }
      ).keys[0]!;
      const confused = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', kid })
        .sign(new TextEncoder().encode(publicJwk.n));
      await assert.rejects(verifyIdToken(h, confused, expected));
      // Another audience (a token tokend issued to another application).
      await assert.rejects(verifyIdToken(h, real, { ...expected, audience: 'another-client' }));
      // The genuine one passes.
      await verifyIdToken(h, real, expected);
    });

    it('attack: a nonce is bound to its code: a replayed id_token fails another sign-in, a code is exchanged once', async (t) => {
      const { h, client, browser } = await setup(t);
      const first = await signIn(h, browser, client, { scope: 'openid', nonce: 'first-nonce' });
      // The attacker replays the first id_token into a sign-in that expects another nonce.
      await assert.rejects(
        verifyIdToken(h, first.id_token as string, {
          issuer: ISSUER,
          audience: client.id,
          nonce: 'second-nonce',
        }),
        /nonce mismatch/,
      );
      // Each code carries its own request's nonce, and no other.
      const second = await signIn(h, browser, client, { scope: 'openid', nonce: 'second-nonce' });
      await verifyIdToken(h, second.id_token as string, {
        issuer: ISSUER,
        audience: client.id,
        nonce: 'second-nonce',
      });
      // Exchanging a code again (to get a second id_token with its nonce) fails and ends the grant.
      const { verifier, challenge } = pkcePair();
      const code = await obtainCode(browser, { client, challenge, scope: 'openid' });
      assert.equal((await exchangeCode(h, client, code, verifier)).statusCode, 200);
      const replay = await exchangeCode(h, client, code, verifier);
      assert.equal(replay.statusCode, 400);
      assert.equal(body(replay).error, 'invalid_grant');
      // A nonce too long for the code is refused, not cut.
      const long = await browser.get(oidcUrl(client, challenge, { nonce: 'x'.repeat(256) }));
      assert.equal(new URL(long.headers.location as string).searchParams.get('error'), 'invalid_request');
    });

    it('attack: odd inputs: a token twice, a token in the query, a NUL in the nonce, a sign-in time to come', async (t) => {
      let now = nowSeconds();
      const { h, client, browser } = await setup(t, () => now);
      const tokens = await signIn(h, browser, client, { scope: 'openid' });
      const twice = await h.app.inject({
        method: 'POST',
        url: '/oauth/userinfo',
        headers: {
          ...bearer(tokens.access_token as string),
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: `access_token=${encodeURIComponent(tokens.access_token as string)}`,
      });
      assert.equal(twice.statusCode, 400);
      const inQuery = await h.app.inject({ url: `/oauth/userinfo?access_token=${tokens.access_token}` });
      assert.equal(inQuery.statusCode, 401, 'a token in the URL is not read (it would reach logs)');
      const { challenge } = pkcePair();
      const nul = await browser.get(oidcUrl(client, challenge, { nonce: 'a\u0000b' }));
      assert.equal(new URL(nul.headers.location as string).searchParams.get('error'), 'invalid_request');
      // auth_after in the future counts as now: one sign-in meets it, no loop.
      now += 10;
      const future = await browser.get(oidcUrl(client, challenge, { auth_after: String(now + 86_400) }));
      assert.equal(future.statusCode, 303);
      const next = new URL(
        new URL(future.headers.location as string, ISSUER).searchParams.get('next') as string,
        ISSUER,
      );
      assert.equal(next.searchParams.get('auth_after'), String(now));
    });
  });
}
