// Migration 0017_client_credentials: oauth_access_tokens.user_id becomes nullable (an application's own
// token, src/oauth/grants/client-credentials.ts). Down and up again on a database with tokens: the users'
// tokens stay with their ids, no id is handed out twice (SQLite's table is made again), the foreign keys
// still hold, and the lookup still finds the tokens.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, migrationTarget, type Harness } from '../helpers/app.ts';
import { registerClient } from '../helpers/oauth.ts';
import { MIGRATIONS } from '../../src/store/migrations/index.ts';
import { issueAccessToken } from '../../src/oauth/issue.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

const migration = MIGRATIONS.find(([name]) => name === '0017_client_credentials')![1];

const ids = async (h: Harness) =>
  (await h.store.db.selectFrom('oauth_access_tokens').select('id').orderBy('id').execute()).map((r) => r.id);

for (const dialect of DIALECTS) {
  describe(`migration 0017_client_credentials [${dialect}]`, () => {
    it('keeps the users’ tokens and their ids down and up, and takes a token of no user only when up', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const client = await registerClient(h, { ownerId: user.id });
      const mint = (userId: number | null, family: string) =>
        issueAccessToken(
          h.store.db,
          { clientId: client.id, userId, scope: '', family: family.repeat(64) },
          nowSeconds(),
        );
      const kept = await mint(user.id, 'a');
      await mint(user.id, 'b');
      await mint(null, 'c');
      await mint(user.id, 'd');
      await h.store.db.deleteFrom('oauth_access_tokens').where('family', '=', 'd'.repeat(64)).execute();
      const before = await ids(h);
      assert.equal(before.length, 3);

      const target = migrationTarget(h);
      await migration(target.dialect).down!(target.db);
      assert.deepEqual(await ids(h), before.slice(0, 2), 'down ends the token of no user only');
      await assert.rejects(mint(null, 'e'), 'user_id is NOT NULL again');

      await migration(target.dialect).up(target.db);
      assert.deepEqual(await ids(h), before.slice(0, 2));
      await mint(null, 'f');
      const after = await ids(h);
      assert.ok(
        after[2]! > before[2]! + 1,
        `no id is given twice: ${after.join(',')} after ${before.join(',')}`,
      );
      // Still found by the lookup, and still ends with its user (ON DELETE CASCADE).
      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `Bearer ${kept.access_token}` },
      });
      assert.equal(self.statusCode, 200, self.body);
      await h.store.db.deleteFrom('users').where('id', '=', user.id).execute();
      if (h.backend !== 'ripple') {
        assert.deepEqual(await ids(h), [], 'the user took their tokens, the client its own');
        return;
      }
      // In place no table of tokend's refers to the family's users (whose programs delete users without
      // knowing tokend's tables): the rows stay, and a token of a user who is gone finds no one.
      assert.deepEqual(await ids(h), after);
      const readSelf = (token: string) =>
        h.api({ method: 'GET', path: '/tokens/self', headers: { authorization: `Bearer ${token}` } });
      const [gone, unknown] = [await readSelf(kept.access_token), await readSelf('x'.repeat(43))];
      assert.deepEqual([gone.statusCode, gone.body], [unknown.statusCode, unknown.body]);
    });
  });
}
