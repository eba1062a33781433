// RFC 6750 §3 answers on every API route that reads a credential: a presented bearer value that matches
// nothing (unknown, expired, revoked) gets `WWW-Authenticate: Bearer error="invalid_token"` on the answer the
// route gives without a credential (the spec's codes unchanged); a bearer token refused for what it may do
// gets error="insufficient_scope", naming the scope when one would do. API tokens never get the header.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, sharedHarness, type Harness } from '../helpers/app.ts';
import { backChannel, registerClient, type TestClient } from '../helpers/oauth.ts';
import { ACCESS_TOKEN_TTL_S, issueAccessToken } from '../../src/oauth/issue.ts';
import { randomBytes } from 'node:crypto';

const now = () => Math.floor(Date.now() / 1000);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Every route under {base_url}/v1 that reads a credential. */
const ROUTES = [
  { method: 'GET', path: '/tokens' },
  { method: 'GET', path: '/tokens?id=1' },
  { method: 'GET', path: '/tokens/self' },
  { method: 'POST', path: '/tokens/self/delete' },
  { method: 'DELETE', path: '/tokens/self' },
  { method: 'DELETE', path: '/tokens/1' },
  { method: 'POST', path: '/tokens/1/delete' },
  { method: 'POST', path: '/tokens/fix_privileges' },
  { method: 'GET', path: '/ping' },
] as const;

function challengeOf(r: LightMyRequestResponse): Record<string, string> {
  const header = r.headers['www-authenticate'];
  assert.equal(typeof header, 'string', `no WWW-Authenticate on ${r.statusCode} ${r.body}`);
  assert.match(header as string, /^Bearer realm="tokend", error="/);
  return Object.fromEntries(
    [...(header as string).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] as string, m[2] as string]),
  );
}

async function fixtures(h: Harness) {
  const user = await h.createUser();
  const client = await registerClient(h, { ownerId: user.id });
  const mint = async (scope: string, at = now()) =>
    (
      await issueAccessToken(
        h.store.db,
        { clientId: client.id, userId: user.id, scope, family: randomBytes(32).toString('hex') },
        at,
      )
    ).access_token;
  return { user, client, mint };
}

async function revoked(h: Harness, client: TestClient, token: string): Promise<string> {
  const r = await backChannel(h, '/oauth/revoke', client, { token });
  assert.equal(r.statusCode, 200, r.body);
  return token;
}

for (const dialect of DIALECTS) {
  describe(`WWW-Authenticate on the API [${dialect}]`, () => {
    const harness = sharedHarness(dialect);

    it('an unknown, expired or revoked bearer token: invalid_token, on the answer without a credential', async () => {
      const h = harness();
      const { client, mint } = await fixtures(h);
      const presented = {
        unknown: randomBytes(32).toString('base64url'),
        expired: await mint('read_confidential', now() - 2 * ACCESS_TOKEN_TTL_S),
        revoked: await revoked(h, client, await mint('read_confidential')),
        'too long': 'x'.repeat(300),
      };
      for (const { method, path } of ROUTES) {
        const without = await h.api({ method, path });
        assert.equal(
          without.headers['www-authenticate'],
          undefined,
          `${method} ${path} without a credential`,
        );
        for (const [what, token] of Object.entries(presented)) {
          const r = await h.api({ method, path, headers: bearer(token) });
          const where = `${what} at ${method} ${path}`;
          assert.equal(r.statusCode, without.statusCode, where);
          assert.deepEqual(body(r), body(without), where);
          const c = challengeOf(r);
          assert.equal(c.error, 'invalid_token', where);
          assert.equal(c.realm, 'tokend');
          assert.match(c.error_description ?? '', /unknown, expired or revoked/);
        }
      }
    });

    it('a bearer token without the scope an operation needs: insufficient_scope naming it', async () => {
      const h = harness();
      const { mint } = await fixtures(h);
      const scopeless = await mint('');
      const list = await h.api({ method: 'GET', path: '/tokens', headers: bearer(scopeless) });
      assert.equal(list.statusCode, 401, list.body);
      assert.match(String(body(list).message), /lacks the scope read_confidential/);
      assert.deepEqual(
        { error: challengeOf(list).error, scope: challengeOf(list).scope },
        { error: 'insufficient_scope', scope: 'read_confidential' },
      );
      // Operations no scope allows: insufficient_scope, with no scope to ask for.
      for (const [method, path] of [
        ['DELETE', '/tokens/1'],
        ['POST', '/tokens/1/delete'],
        ['POST', '/tokens/fix_privileges'],
      ] as const) {
        const token = await mint('read_confidential write bancho');
        const r = await h.api({ method, path, headers: bearer(token) });
        assert.equal(r.statusCode, 401, `${method} ${path}: ${r.body}`);
        const c = challengeOf(r);
        assert.equal(c.error, 'insufficient_scope', `${method} ${path}`);
        assert.equal(c.scope, undefined, `${method} ${path}`);
      }
      // What any bearer token may do carries no challenge.
      for (const [method, path] of [
        ['GET', '/tokens/self'],
        ['GET', '/ping'],
        ['DELETE', '/tokens/self'],
      ] as const) {
        const r = await h.api({ method, path, headers: bearer(await mint('')) });
        assert.equal(r.statusCode, 200, `${method} ${path}: ${r.body}`);
        assert.equal(r.headers['www-authenticate'], undefined, `${method} ${path}`);
      }
    });

    it("a banned owner's bearer token refused a listing: invalid_token (introspection calls it inactive)", async () => {
      const h = harness();
      const { user, mint } = await fixtures(h);
      const token = await mint('read_confidential');
      await h.setUserPrivileges(user.id, 1);
      const r = await h.api({ method: 'GET', path: '/tokens', headers: bearer(token) });
      assert.equal(r.statusCode, 401, r.body);
      assert.equal(challengeOf(r).error, 'invalid_token');
      assert.match(challengeOf(r).error_description ?? '', /banned/);
    });

    it('API tokens never get the header, however they are sent and whatever is refused', async () => {
      const h = harness();
      const { user } = await fixtures(h);
      const token = await h.createToken(user.id, { privileges: 0 });
      for (const headers of [{ 'x-ripple-token': token.secret }, bearer(token.secret)]) {
        const self = await h.api({ method: 'GET', path: '/tokens/self', headers });
        assert.equal(self.statusCode, 200, self.body);
        const refused = await h.api({ method: 'DELETE', path: '/tokens/1', headers });
        assert.equal(refused.statusCode, 401, refused.body);
        for (const r of [self, refused]) assert.equal(r.headers['www-authenticate'], undefined);
      }
      const unknown = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': randomBytes(16).toString('hex') },
      });
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.headers['www-authenticate'], undefined);
    });
  });
}
