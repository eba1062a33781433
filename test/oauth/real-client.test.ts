// The whole flow as a real OAuth client sees it: oauth4webapi against a listening tokend (discovery,
// authorization code + PKCE, refresh rotation, introspection, revocation), on every dialect.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import * as oauth from 'oauth4webapi';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, type TestUser } from '../helpers/app.ts';
import type { Backend } from '../helpers/dialects.ts';
import { registerClient, type TestClient } from '../helpers/oauth.ts';
import { consentInBrowser } from '../helpers/fetch-browser.ts';

const insecure = { [oauth.allowInsecureRequests]: true };

async function listening(t: TestContext, dialect: Backend) {
  const h = await build(t, dialect);
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const address = h.app.server.address();
  assert.ok(address && typeof address === 'object');
  const origin = `http://127.0.0.1:${address.port}`;
  const issuer = new URL(origin);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
  return { h, origin, as };
}

async function bearerSelf(origin: string, accessToken: string) {
  const r = await fetch(`${origin}/api/v1/tokens/self`, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

async function runCodeFlow(
  origin: string,
  as: oauth.AuthorizationServer,
  registered: TestClient,
  clientAuth: oauth.ClientAuth,
  user: TestUser,
  scope: string,
) {
  const client: oauth.Client = { client_id: registered.id };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint as string);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: registered.redirectUri,
    response_type: 'code',
    scope,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();

  const callback = await consentInBrowser(origin, url, user);
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    clientAuth,
    params,
    registered.redirectUri,
    verifier,
    insecure,
  );
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  return { client, tokens };
}

for (const dialect of DIALECTS) {
  describe(`OAuth with a real client library [${dialect}]`, () => {
    it('discovers the server metadata (RFC 8414)', async (t) => {
      const { as, origin } = await listening(t, dialect);
      assert.equal(as.issuer, origin);
      assert.equal(as.token_endpoint, `${origin}/oauth/token`);
      assert.equal(as.revocation_endpoint, `${origin}/oauth/revoke`);
      assert.equal(as.introspection_endpoint, `${origin}/oauth/introspect`);
      assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(as.scopes_supported, ['read_confidential', 'write', 'bancho', 'openid', 'profile']);
    });

    it('runs the code flow with PKCE (Basic auth), reads and rotates, and detects refresh reuse', async (t) => {
      const { h, origin, as } = await listening(t, dialect);
      const owner = await h.createUser({ username: `dev_${dialect}` });
      const user = await h.createUser();
      const registered = await registerClient(h, {
        ownerId: owner.id,
        name: 'Score Tracker',
        avatar: 'https://tracker.example/icon.png',
        redirectUris: ['http://127.0.0.1:1/callback'],
      });
      const auth = oauth.ClientSecretBasic(registered.secret as string);
      const { client, tokens } = await runCodeFlow(
        origin,
        as,
        registered,
        auth,
        user,
        'read_confidential bancho',
      );
      assert.equal(tokens.token_type, 'bearer');
      assert.equal(tokens.scope, 'bancho read_confidential');
      assert.equal(tokens.expires_in, 3600);
      assert.ok(tokens.refresh_token);

      const self = await bearerSelf(origin, tokens.access_token);
      assert.equal(self.status, 200);
      assert.deepEqual(self.body.client, {
        id: registered.id,
        name: 'Score Tracker',
        owner_id: owner.id,
        avatar: 'https://tracker.example/icon.png',
      });
      assert.equal(self.body.scope, 'bancho read_confidential');
      assert.equal(self.body.privileges, 2 | 8192);
      assert.match(self.body.created as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.ok(Math.abs(Date.parse(self.body.created as string) - Date.now()) < 60_000);

      // Rotation: a new pair; the old refresh token is spent.
      const rotated = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token as string, insecure),
      );
      assert.notEqual(rotated.refresh_token, tokens.refresh_token);
      assert.notEqual(rotated.access_token, tokens.access_token);
      assert.equal((await bearerSelf(origin, rotated.access_token)).status, 200);

      // A narrower scope on refresh gives a narrower access token.
      const narrowed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, rotated.refresh_token as string, {
          ...insecure,
          additionalParameters: { scope: 'bancho' },
        }),
      );
      assert.equal(narrowed.scope, 'bancho');
      assert.equal((await bearerSelf(origin, narrowed.access_token)).body.privileges, 8192);

      // Presenting a rotated refresh token again revokes the whole family, the newest tokens too.
      const replay = await oauth.refreshTokenGrantRequest(
        as,
        client,
        auth,
        tokens.refresh_token as string,
        insecure,
      );
      await assert.rejects(oauth.processRefreshTokenResponse(as, client, replay), (err: unknown) => {
        assert.ok(err instanceof oauth.ResponseBodyError);
        assert.equal(err.error, 'invalid_grant');
        assert.equal(err.status, 400);
        return true;
      });
      assert.equal((await bearerSelf(origin, narrowed.access_token)).status, 404);
      const afterReplay = await oauth.refreshTokenGrantRequest(
        as,
        client,
        auth,
        narrowed.refresh_token as string,
        insecure,
      );
      await assert.rejects(oauth.processRefreshTokenResponse(as, client, afterReplay));
    });

    it('runs the flow for a public client (no secret, PKCE) and with client_secret_post', async (t) => {
      const { h, origin, as } = await listening(t, dialect);
      const owner = await h.createUser();
      const user = await h.createUser();
      const publicClient = await registerClient(h, {
        ownerId: owner.id,
        public: true,
        redirectUris: ['http://127.0.0.1:1/native'],
      });
      const viaNone = await runCodeFlow(origin, as, publicClient, oauth.None(), user, 'write');
      assert.equal((await bearerSelf(origin, viaNone.tokens.access_token)).body.privileges, 4);

      const confidential = await registerClient(h, {
        ownerId: owner.id,
        redirectUris: ['http://127.0.0.1:1/cb'],
      });
      const viaPost = await runCodeFlow(
        origin,
        as,
        confidential,
        oauth.ClientSecretPost(confidential.secret as string),
        user,
        '',
      );
      const self = await bearerSelf(origin, viaPost.tokens.access_token);
      assert.equal(self.status, 200);
      assert.equal(self.body.scope, '');
      assert.equal(self.body.privileges, 0);
    });

    it('introspects and revokes through the client library (RFC 7662, RFC 7009)', async (t) => {
      const { h, origin, as } = await listening(t, dialect);
      const owner = await h.createUser();
      const user = await h.createUser();
      const registered = await registerClient(h, {
        ownerId: owner.id,
        redirectUris: ['http://127.0.0.1:1/cb'],
      });
      const auth = oauth.ClientSecretBasic(registered.secret as string);
      const { client, tokens } = await runCodeFlow(origin, as, registered, auth, user, 'write');

      const active = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure),
      );
      assert.equal(active.active, true);
      assert.equal(active.client_id, registered.id);
      assert.equal(active.scope, 'write');
      assert.equal(active.sub, String(user.id));
      assert.equal(active.username, user.username);
      assert.equal(active.token_type, 'Bearer');
      assert.ok((active.exp as number) > Date.now() / 1000);

      await oauth.processRevocationResponse(
        await oauth.revocationRequest(as, client, auth, tokens.access_token, insecure),
      );
      const revoked = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, tokens.access_token, insecure),
      );
      assert.deepEqual(revoked, { active: false });
      assert.equal((await bearerSelf(origin, tokens.access_token)).status, 404);
    });
  });
}
