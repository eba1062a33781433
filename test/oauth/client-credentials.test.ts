// The client credentials grant (RFC 6749 §4.4): a confidential application's own token, for no user. What
// it may do (read itself, introspection, revocation, self-delete) and everything it may not: reach any
// user's data on any API route or page, be refreshed, be had by a public client or with a wrong secret.
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, type Harness } from '../helpers/app.ts';
import { FORM, InjectBrowser, form } from '../helpers/inject-browser.ts';
import { backChannel, obtainTokens, registerClient, type TestClient } from '../helpers/oauth.ts';
import { ACCESS_TOKEN_TTL_S, issueAccessToken } from '../../src/oauth/issue.ts';
import { deleteExpiredOAuthRows } from '../../src/oauth/repository.ts';
import { deleteClient } from '../../src/oauth/clients.ts';
import { connectedApplications } from '../../src/oauth/applications.ts';
import type { Backend } from '../helpers/dialects.ts';

const now = () => Math.floor(Date.now() / 1000);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** grant_type=client_credentials with the client's id and secret in the form (client_secret_post). */
const askToken = (h: Harness, client: TestClient, extra: Record<string, string | undefined> = {}) =>
  backChannel(h, '/oauth/token', client, { grant_type: 'client_credentials', ...extra });

async function appToken(h: Harness, client: TestClient): Promise<string> {
  const r = await askToken(h, client);
  assert.equal(r.statusCode, 200, r.body);
  return (r.json() as { access_token: string }).access_token;
}

/** How many access tokens of no user the client holds. */
async function applicationTokens(h: Harness, clientId: string): Promise<number> {
  const row = await h.store.db
    .selectFrom('oauth_access_tokens')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('user_id', 'is', null)
    .where('client_id', '=', clientId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function setup(t: TestContext, dialect: Backend, env: Record<string, string> = {}) {
  const h = await build(t, dialect, env);
  const owner = await h.createUser();
  const client = await registerClient(h, {
    ownerId: owner.id,
    name: 'Robot',
    avatar: 'https://r.example/a.png',
  });
  return { h, owner, client };
}

/** The challenge's parameters, by name. */
function challengeOf(r: LightMyRequestResponse): Record<string, string> {
  const header = r.headers['www-authenticate'];
  assert.equal(typeof header, 'string', `no WWW-Authenticate on ${r.statusCode} ${r.body}`);
  assert.match(header as string, /^Bearer /);
  return Object.fromEntries(
    [...(header as string).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] as string, m[2] as string]),
  );
}

for (const dialect of DIALECTS) {
  describe(`client credentials grant [${dialect}]`, () => {
    it('gives a confidential client a token of its own: Bearer, an hour, no refresh token, no scope', async (t) => {
      const { h, client } = await setup(t, dialect);
      for (const how of ['post', 'basic'] as const) {
        const r =
          how === 'post'
            ? await askToken(h, client)
            : await h.app.inject({
                method: 'POST',
                url: '/oauth/token',
                headers: {
                  ...FORM,
                  authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
                },
                payload: form({ grant_type: 'client_credentials' }),
              });
        assert.equal(r.statusCode, 200, r.body);
        assert.equal(r.headers['cache-control'], 'no-store');
        const b = r.json() as Record<string, unknown>;
        assert.deepEqual(Object.keys(b).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
        assert.equal(b.token_type, 'Bearer');
        assert.equal(b.expires_in, ACCESS_TOKEN_TTL_S);
        assert.equal(b.scope, '');
        assert.equal(b.refresh_token, undefined);
      }
      assert.equal(await applicationTokens(h, client.id), 2);
    });

    it('reads itself: client, scope, privileges 0, created, and no user', async (t) => {
      const { h, owner, client } = await setup(t, dialect);
      const before = now();
      const token = await appToken(h, client);
      const r = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(token) });
      assert.equal(r.statusCode, 200, r.body);
      const b = body(r);
      assert.deepEqual(b.client, {
        id: client.id,
        name: 'Robot',
        owner_id: owner.id,
        avatar: 'https://r.example/a.png',
      });
      assert.equal(b.client_id, client.id);
      assert.equal(b.scope, '');
      assert.equal(b.privileges, 0);
      const created = Date.parse(String(b.created)) / 1000;
      assert.ok(created >= before && created <= now() + 1, String(b.created));
      assert.equal(b.expires_at, created + ACCESS_TOKEN_TTL_S);
      assert.equal(b.user_id, undefined);
      assert.equal(b.username, undefined);
      assert.equal(r.headers['www-authenticate'], undefined);
      // /ping: it acts for nobody.
      const ping = body(await h.api({ method: 'GET', path: '/ping', headers: bearer(token) }));
      assert.equal(ping.user_id, 0);
      assert.equal(ping.privileges, 0);
      assert.equal(ping.user_privileges, 0);
    });

    it("reaches no user's data on any API route: a 401 naming why, insufficient_scope", async (t) => {
      const { h, owner, client } = await setup(t, dialect);
      // The owner has tokens an app acting for the owner could see or end; and a user id 0 row never exists.
      const ownerToken = await h.createToken(owner.id, { description: 'owner', privileges: 4 });
      const token = await appToken(h, client);
      const refused = [
        { method: 'GET', path: '/tokens' },
        { method: 'GET', path: `/tokens?id=${ownerToken.id}` },
        { method: 'DELETE', path: `/tokens/${ownerToken.id}` },
        { method: 'POST', path: `/tokens/${ownerToken.id}/delete` },
        { method: 'POST', path: '/tokens/fix_privileges' },
        { method: 'POST', path: '/tokens/fix_privileges?id=self' },
        { method: 'POST', path: `/tokens/fix_privileges?id=${owner.id}` },
      ] as const;
      for (const { method, path } of refused) {
        const r = await h.api({ method, path, headers: bearer(token) });
        assert.equal(r.statusCode, 401, `${method} ${path}: ${r.body}`);
        assert.match(String(body(r).message), /acts for no user/, `${method} ${path}`);
        assert.equal(body(r).tokens, undefined);
        const c = challengeOf(r);
        assert.equal(c.error, 'insufficient_scope', `${method} ${path}`);
        assert.equal(c.scope, undefined, 'no scope would do');
      }
      // The owner's token is still there and still works.
      const own = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': ownerToken.secret },
      });
      assert.equal(own.statusCode, 200, own.body);
      // Presented in any other way than as a bearer token it is no credential at all.
      for (const headers of [{ 'x-ripple-token': token }, {}]) {
        const url = Object.keys(headers).length ? '/tokens/self' : `/tokens/self?token=${token}`;
        const r = await h.api({ method: 'GET', path: url, headers });
        assert.equal(r.statusCode, 404, r.body);
      }
    });

    it('opens no page: the token page and the consent page ask to sign in', async (t) => {
      const { h, client } = await setup(t, dialect);
      const token = await appToken(h, client);
      for (const url of ['/tokens', '/tokens/sign-out-everywhere']) {
        const r = await h.app.inject({
          method: 'GET',
          url,
          headers: { ...bearer(token), accept: 'text/html' },
        });
        assert.ok([302, 303].includes(r.statusCode), `${url}: ${r.statusCode}`);
        assert.match(String(r.headers.location), /\/login/, url);
      }
      const authorize = await h.app.inject({
        method: 'GET',
        url: `/oauth/authorize?response_type=code&client_id=${client.id}&redirect_uri=${encodeURIComponent(client.redirectUri)}&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`,
        headers: bearer(token),
      });
      assert.ok([302, 303].includes(authorize.statusCode), `${authorize.statusCode} ${authorize.body}`);
      assert.match(String(authorize.headers.location), /\/login/);
    });

    it('cannot be refreshed: it has no refresh token, and the access token is no refresh token', async (t) => {
      const { h, client } = await setup(t, dialect);
      const token = await appToken(h, client);
      const r = await backChannel(h, '/oauth/token', client, {
        grant_type: 'refresh_token',
        refresh_token: token,
      });
      assert.equal(r.statusCode, 400, r.body);
      assert.equal((r.json() as { error: string }).error, 'invalid_grant');
      const self = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(token) });
      assert.equal(self.statusCode, 200, 'the failed refresh ended nothing');
    });

    it('is refused to a public client (unauthorized_client), and with a wrong or missing secret (invalid_client)', async (t) => {
      const { h, owner, client } = await setup(t, dialect);
      const publicClient = await registerClient(h, { ownerId: owner.id, public: true, name: 'Phone' });
      const asPublic = await askToken(h, publicClient);
      assert.equal(asPublic.statusCode, 400, asPublic.body);
      assert.equal((asPublic.json() as { error: string }).error, 'unauthorized_client');
      assert.match((asPublic.json() as { error_description: string }).error_description, /confidential/);

      const wrong = await askToken(h, { ...client, secret: `${client.secret}x` });
      assert.equal(wrong.statusCode, 401, wrong.body);
      assert.equal((wrong.json() as { error: string }).error, 'invalid_client');
      assert.match(String(wrong.headers['www-authenticate']), /^Basic /);
      const none = await askToken(h, { ...client, secret: undefined });
      assert.equal(none.statusCode, 401, none.body);
      assert.equal((none.json() as { error: string }).error, 'invalid_client');
      // Another application's secret does not open this one.
      const other = await registerClient(h, { ownerId: owner.id, name: 'Other' });
      const swapped = await askToken(h, { ...client, secret: other.secret });
      assert.equal(swapped.statusCode, 401, swapped.body);
      assert.equal(await applicationTokens(h, client.id), 0);
      assert.equal(await applicationTokens(h, publicClient.id), 0);
    });

    it('asks for no scope: any scope of this server acts for a user (invalid_scope)', async (t) => {
      const { h, client } = await setup(t, dialect);
      for (const scope of ['read_confidential', 'write', 'bancho', 'write bancho']) {
        const r = await askToken(h, client, { scope });
        assert.equal(r.statusCode, 400, r.body);
        const b = r.json() as { error: string; error_description: string };
        assert.equal(b.error, 'invalid_scope');
        assert.match(b.error_description, /acts for no user/);
      }
      const unknown = await askToken(h, client, { scope: 'admin' });
      assert.equal((unknown.json() as { error: string }).error, 'invalid_scope');
      assert.match(
        (unknown.json() as { error_description: string }).error_description,
        /Unknown scope "admin"/,
      );
      assert.equal(await applicationTokens(h, client.id), 0);
    });

    it('is active to introspection without a user: no sub, no username, privileges 0; inactive to others', async (t) => {
      const { h, owner, client } = await setup(t, dialect);
      const token = await appToken(h, client);
      const r = await backChannel(h, '/oauth/introspect', client, { token });
      assert.equal(r.statusCode, 200, r.body);
      const b = r.json() as Record<string, unknown>;
      assert.equal(b.active, true);
      assert.equal(b.client_id, client.id);
      assert.equal(b.token_type, 'Bearer');
      assert.equal(b.scope, '');
      assert.equal(b.privileges, 0);
      assert.equal(Number(b.exp) - Number(b.iat), ACCESS_TOKEN_TTL_S);
      assert.equal('sub' in b, false);
      assert.equal('username' in b, false);
      const other = await registerClient(h, { ownerId: owner.id, name: 'Other' });
      const asOther = await backChannel(h, '/oauth/introspect', other, { token });
      assert.deepEqual(asOther.json(), { active: false });
    });

    it('is revoked at /oauth/revoke (then invalid_token) and deletes itself at /tokens/self', async (t) => {
      const { h, client } = await setup(t, dialect);
      const token = await appToken(h, client);
      const revoked = await backChannel(h, '/oauth/revoke', client, { token });
      assert.equal(revoked.statusCode, 200, revoked.body);
      const after = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(token) });
      assert.equal(after.statusCode, 404, after.body);
      assert.equal(challengeOf(after).error, 'invalid_token');
      assert.deepEqual((await backChannel(h, '/oauth/introspect', client, { token })).json(), {
        active: false,
      });

      const second = await appToken(h, client);
      const bye = await h.api({ method: 'DELETE', path: '/tokens/self', headers: bearer(second) });
      assert.equal(bye.statusCode, 200, bye.body);
      assert.equal(await applicationTokens(h, client.id), 0);
    });

    it('keeps at most OAUTH_GRANTS_PER_CLIENT_MAX live tokens per application: the oldest ends', async (t) => {
      const { h, client } = await setup(t, dialect, { OAUTH_GRANTS_PER_CLIENT_MAX: '2' });
      const tokens = [];
      for (let i = 0; i < 4; i++) tokens.push(await appToken(h, client));
      assert.equal(await applicationTokens(h, client.id), 2);
      const status = async (token: string) =>
        (await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(token) })).statusCode;
      assert.deepEqual(await Promise.all(tokens.map(status)), [404, 404, 200, 200]);
    });

    it("leaves a user's grants of the same application alone, and they leave its own tokens alone", async (t) => {
      const { h, owner, client } = await setup(t, dialect, { OAUTH_GRANTS_PER_CLIENT_MAX: '1' });
      const user = await h.createUser();
      const browser = new InjectBrowser(h.app);
      await browser.signIn(user);
      const own = await appToken(h, client);
      const userTokens = await obtainTokens(h, browser, client);
      const another = await appToken(h, client);
      const self = (token: string) => h.api({ method: 'GET', path: '/tokens/self', headers: bearer(token) });
      assert.equal((await self(own)).statusCode, 404, 'the bound of one ended the older own token');
      assert.equal((await self(another)).statusCode, 200);
      const asUser = body(await self(userTokens.access_token));
      assert.equal(asUser.user_id, user.id);
      // The user's connected applications list the app for the grant; the owner's do not list it for its own token.
      const connected = async (userId: number) =>
        (await connectedApplications(h.store.db, userId, now(), 100)).applications.map((a) => a.clientId);
      assert.deepEqual(await connected(user.id), [client.id]);
      assert.deepEqual(await connected(owner.id), []);
    });

    it('is counted by the per-application rate limit: 429 slow_down with Retry-After', async (t) => {
      const { h, client } = await setup(t, dialect, { OAUTH_TOKEN_RATE_LIMIT: '2' });
      // A wrong secret never gets as far as the count, so no one else can spend the application's budget.
      for (let i = 0; i < 3; i++)
        assert.equal((await askToken(h, { ...client, secret: 'not-the-secret' })).statusCode, 401);
      await appToken(h, client);
      await appToken(h, client);
      const third = await askToken(h, client);
      assert.equal(third.statusCode, 429, third.body);
      assert.equal((third.json() as { error: string }).error, 'slow_down');
      assert.ok(Number(third.headers['retry-after']) >= 1);
      assert.equal(await applicationTokens(h, client.id), 2);
    });

    it("is refused while the application's owner is banned, and its tokens are inactive", async (t) => {
      const { h, owner, client } = await setup(t, dialect);
      const token = await appToken(h, client);
      await h.setUserPrivileges(owner.id, 1);
      const refused = await askToken(h, client);
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal((refused.json() as { error: string }).error, 'unauthorized_client');
      assert.deepEqual((await backChannel(h, '/oauth/introspect', client, { token })).json(), {
        active: false,
      });
      await h.setUserPrivileges(owner.id, 3);
      assert.equal((await backChannel(h, '/oauth/introspect', client, { token })).json().active, true);
    });

    it('ends with its application, and expired ones are swept', async (t) => {
      const { h, client } = await setup(t, dialect);
      const token = await appToken(h, client);
      const old = await issueAccessToken(
        h.store.db,
        { clientId: client.id, userId: null, scope: '', family: 'f'.repeat(64) },
        now() - 2 * ACCESS_TOKEN_TTL_S,
      );
      const expired = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(old.access_token) });
      assert.equal(expired.statusCode, 404, expired.body);
      assert.equal(challengeOf(expired).error, 'invalid_token');
      assert.ok((await deleteExpiredOAuthRows(h.store.db, now())) >= 1);
      assert.equal(await applicationTokens(h, client.id), 1);
      assert.ok(await deleteClient(h.store.db, client.id, actOutsideRequest('cli', now())));
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(token) })).statusCode,
        404,
      );
      assert.equal(await applicationTokens(h, client.id), 0);
    });

    it('is advertised in the authorization server metadata', async (t) => {
      const { h } = await setup(t, dialect);
      const r = await h.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
      assert.ok(
        (r.json() as { grant_types_supported: string[] }).grant_types_supported.includes(
          'client_credentials',
        ),
      );
    });
  });
}
