// Revocation (RFC 7009) and introspection (RFC 7662) at the HTTP level, on every dialect.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import { backChannel, exchangeCode, obtainCode, pkcePair, registerClient } from '../helpers/oauth.ts';
import type { Backend } from '../helpers/dialects.ts';

async function setup(t: TestContext, dialect: Backend) {
  const h = await build(t, dialect);
  const owner = await h.createUser();
  const user = await h.createUser();
  const client = await registerClient(h, { ownerId: owner.id });
  const other = await registerClient(h, { ownerId: owner.id, name: 'Other App' });
  const browser = new InjectBrowser(h.app);
  await browser.signIn(user);
  const issue = async (scope = 'write') => {
    const pkce = pkcePair();
    const code = await obtainCode(browser, { client, challenge: pkce.challenge, scope });
    const r = await exchangeCode(h, client, code, pkce.verifier);
    assert.equal(r.statusCode, 200, r.body);
    return body(r) as { access_token: string; refresh_token: string };
  };
  const self = (token: string) =>
    h.api({ method: 'GET', path: '/tokens/self', headers: { authorization: `Bearer ${token}` } });
  return { h, user, client, other, issue, self };
}

for (const dialect of DIALECTS) {
  describe(`OAuth revocation [${dialect}]`, () => {
    it('revokes an access token; revoking an unknown or already revoked token is still 200', async (t) => {
      const { h, client, issue, self } = await setup(t, dialect);
      const tokens = await issue();
      const r = await backChannel(h, '/oauth/revoke', client, { token: tokens.access_token });
      assert.equal(r.statusCode, 200);
      assert.equal(r.body, '');
      assert.equal(r.headers['cache-control'], 'no-store');
      assert.equal((await self(tokens.access_token)).statusCode, 404);
      for (const token of [tokens.access_token, 'never-issued'])
        assert.equal((await backChannel(h, '/oauth/revoke', client, { token })).statusCode, 200);
      // The refresh token of the same grant still works: revoking an access token revokes only it.
      const refreshed = await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
      });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
    });

    it('an expired access token not yet swept is no token: 200 to its client and to another, and it never acts again', async (t) => {
      const { h, client, other, issue, self } = await setup(t, dialect);
      const tokens = await issue();
      await h.store.db
        .updateTable('oauth_access_tokens')
        .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
        .execute();
      // Another client learns nothing of it: the same answer as for a string that was never a token.
      for (const who of [other, client])
        for (const hint of [undefined, 'access_token']) {
          const r = await backChannel(h, '/oauth/revoke', who, {
            token: tokens.access_token,
            token_type_hint: hint,
          });
          assert.equal(r.statusCode, 200, r.body);
          assert.equal(r.body, '');
        }
      assert.equal((await self(tokens.access_token)).statusCode, 404);
      const info = await backChannel(h, '/oauth/introspect', client, { token: tokens.access_token });
      assert.deepEqual(body(info), { active: false });
      // Its refresh token is a live credential of its own, and still refreshes.
      const refreshed = await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
      });
      assert.equal(refreshed.statusCode, 200, refreshed.body);
    });

    it('revoking a refresh token also revokes the access tokens of its grant (with or without a hint)', async (t) => {
      const { h, client, issue, self } = await setup(t, dialect);
      for (const hint of [undefined, 'refresh_token', 'access_token']) {
        const tokens = await issue();
        const r = await backChannel(h, '/oauth/revoke', client, {
          token: tokens.refresh_token,
          token_type_hint: hint,
        });
        assert.equal(r.statusCode, 200);
        assert.equal((await self(tokens.access_token)).statusCode, 404, `hint ${hint}`);
        const refreshed = await backChannel(h, '/oauth/token', client, {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
        });
        assert.equal(body(refreshed).error, 'invalid_grant');
      }
    });

    it('needs client authentication, and refuses to revoke another client’s token', async (t) => {
      const { h, client, other, issue, self } = await setup(t, dialect);
      const tokens = await issue();
      const anonymous = await h.app.inject({
        method: 'POST',
        url: '/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `token=${tokens.access_token}`,
      });
      assert.equal(anonymous.statusCode, 401);
      assert.equal(body(anonymous).error, 'invalid_client');
      const wrongSecret = await backChannel(
        h,
        '/oauth/revoke',
        { ...client, secret: 'x' },
        { token: tokens.access_token },
      );
      assert.equal(wrongSecret.statusCode, 401);
      const stranger = await backChannel(h, '/oauth/revoke', other, { token: tokens.access_token });
      assert.equal(stranger.statusCode, 400);
      assert.equal(body(stranger).error, 'invalid_request');
      assert.equal((await self(tokens.access_token)).statusCode, 200);
      const missing = await backChannel(h, '/oauth/revoke', client, {});
      assert.equal(body(missing).error, 'invalid_request');
    });
  });

  describe(`OAuth introspection [${dialect}]`, () => {
    it('describes an active access token and refresh token', async (t) => {
      const { h, user, client, issue } = await setup(t, dialect);
      const tokens = await issue('read_confidential write');
      const r = await backChannel(h, '/oauth/introspect', client, { token: tokens.access_token });
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['cache-control'], 'no-store');
      const info = body(r);
      assert.equal(info.active, true);
      assert.equal(info.scope, 'read_confidential write');
      assert.equal(info.client_id, client.id);
      assert.equal(info.sub, String(user.id));
      assert.equal(info.username, user.username);
      assert.equal(info.token_type, 'Bearer');
      assert.equal(info.privileges, 6);
      assert.equal((info.exp as number) - (info.iat as number), 3600);
      const refresh = body(
        await backChannel(h, '/oauth/introspect', client, { token: tokens.refresh_token }),
      );
      assert.equal(refresh.active, true);
      assert.equal(refresh.token_type, 'refresh_token');
    });

    it('answers {"active": false} for revoked, expired, unknown, rotated and other clients’ tokens', async (t) => {
      const { h, client, other, issue } = await setup(t, dialect);
      const inactive = async (token: string) => {
        const r = await backChannel(h, '/oauth/introspect', client, { token });
        assert.equal(r.statusCode, 200);
        assert.deepEqual(body(r), { active: false });
      };
      const revoked = await issue();
      await backChannel(h, '/oauth/revoke', client, { token: revoked.access_token });
      await inactive(revoked.access_token);

      const expired = await issue();
      await h.store.db
        .updateTable('oauth_access_tokens')
        .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
        .execute();
      await inactive(expired.access_token);
      await inactive('not-a-token');

      const rotated = await issue();
      await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: rotated.refresh_token,
      });
      await inactive(rotated.refresh_token);

      const fresh = await issue();
      const asStranger = await backChannel(h, '/oauth/introspect', other, { token: fresh.access_token });
      assert.deepEqual(body(asStranger), { active: false });
    });

    it('requires a confidential client', async (t) => {
      const { h, issue } = await setup(t, dialect);
      const owner = await h.createUser();
      const publicClient = await registerClient(h, { ownerId: owner.id, public: true });
      const tokens = await issue();
      const r = await backChannel(h, '/oauth/introspect', publicClient, { token: tokens.access_token });
      assert.equal(r.statusCode, 401);
      assert.equal(body(r).error, 'invalid_client');
    });
  });
}
