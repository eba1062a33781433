// Bearer (OAuth) access tokens on the v1 API: GET /tokens/self reads, POST /tokens/self/delete deletes.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { issueAccessToken } from '../../src/oauth/issue.ts';
import type { Backend } from '../helpers/dialects.ts';
import { registerClient } from '../helpers/oauth.ts';

async function setup(t: TestContext, dialect: Backend) {
  const h = await build(t, dialect);
  const owner = await h.createUser({ username: `maker_${dialect}` });
  const user = await h.createUser();
  const client = await registerClient(h, {
    ownerId: owner.id,
    name: 'Mint',
    avatar: 'https://mint.example/a.png',
  });
  const mint = async (scope: string) =>
    (
      await issueAccessToken(
        h.store.db,
        { clientId: client.id, userId: user.id, scope, family: `family-${Math.random()}` },
        Math.floor(Date.now() / 1000),
      )
    ).access_token;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  return { h, owner, user, client, mint, bearer };
}

for (const dialect of DIALECTS) {
  describe(`bearer tokens on /v1/tokens/self [${dialect}]`, () => {
    it('reads the client, scope, effective privileges and creation time', async (t) => {
      const { h, owner, client, mint, bearer } = await setup(t, dialect);
      const before = Math.floor(Date.now() / 1000);
      const token = await mint('read_confidential write bancho');
      const r = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(token) });
      assert.equal(r.statusCode, 200, r.body);
      const b = body(r);
      assert.equal(b.code, 200);
      assert.deepEqual(b.client, {
        id: client.id,
        name: 'Mint',
        owner_id: owner.id,
        avatar: 'https://mint.example/a.png',
      });
      assert.equal(b.scope, 'read_confidential write bancho');
      assert.equal(b.privileges, 2 | 4 | 8192);
      const created = Date.parse(b.created as string) / 1000;
      assert.ok(created >= before && created <= before + 60, String(b.created));
      assert.equal(b.id, undefined);
    });

    it('limits privileges to the owner: 0 for a banned owner, back when unbanned', async (t) => {
      const { h, user, mint, bearer } = await setup(t, dialect);
      const token = await mint('write');
      await h.setUserPrivileges(user.id, 1); // lacks UserNormal: banned
      const banned = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(token) });
      assert.equal(body(banned).privileges, 0);
      await h.setUserPrivileges(user.id, 3);
      const back = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(token) });
      assert.equal(body(back).privileges, 4);
    });

    // Attack review: a banned owner's bearer token still listed the owner's API tokens (only the scope was
    // checked), while introspection already called it inactive.
    it("lists the owner's tokens only while the owner may hold read_confidential: not once banned", async (t) => {
      const { h, user, mint, bearer } = await setup(t, dialect);
      await h.createToken(user.id, { description: 'visible to the app' });
      const token = await mint('read_confidential');
      const list = () => h.api({ method: 'GET', path: '/tokens', headers: bearer(token) });
      const before = await list();
      assert.equal(before.statusCode, 200, before.body);
      assert.deepEqual(
        (body(before).tokens as Array<{ description: string }>).map((tk) => tk.description),
        ['visible to the app'],
      );
      await h.setUserPrivileges(user.id, 1); // lacks UserNormal: banned
      const banned = await list();
      assert.equal(banned.statusCode, 401, banned.body);
      assert.match(String(body(banned).message), /owner is banned/);
      assert.equal(body(banned).tokens, undefined);
      await h.setUserPrivileges(user.id, 3);
      assert.equal((await list()).statusCode, 200);
    });

    it('deletes the bearer token in use; it then identifies nothing', async (t) => {
      const { h, mint, bearer } = await setup(t, dialect);
      const token = await mint('write');
      const keep = await mint('write');
      const del = await h.api({ method: 'POST', path: '/tokens/self/delete', headers: bearer(token) });
      assert.equal(del.statusCode, 200, del.body);
      const after = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(token) });
      assert.equal(after.statusCode, 404);
      const again = await h.api({ method: 'POST', path: '/tokens/self/delete', headers: bearer(token) });
      assert.equal(again.statusCode, 400);
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(keep) })).statusCode,
        200,
      );
    });

    it('ignores an expired access token and the tokens of a deleted client', async (t) => {
      const { h, client, mint, bearer } = await setup(t, dialect);
      const expired = await mint('write');
      await h.store.db
        .updateTable('oauth_access_tokens')
        .set({ expires_at: Math.floor(Date.now() / 1000) })
        .execute();
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(expired) })).statusCode,
        404,
      );
      const live = await mint('write');
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(live) })).statusCode,
        200,
      );
      await h.store.db.deleteFrom('oauth_clients').where('id', '=', client.id).execute();
      assert.equal(
        (await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(live) })).statusCode,
        404,
      );
    });

    it('a regular token sent as Bearer still works (bearer tokens are looked up first)', async (t) => {
      const { h, user, bearer } = await setup(t, dialect);
      const regular = await h.createToken(user.id, { privileges: 4, description: 'plain' });
      const r = await h.api({ method: 'GET', path: '/tokens/self', headers: bearer(regular.secret) });
      assert.equal(r.statusCode, 200);
      assert.equal(body(r).description, 'plain');
    });
  });
}
