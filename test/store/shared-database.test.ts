// Several instances on one database, on every dialect: nothing is cached per instance that could outlive
// a deletion, and last_updated, which each instance flushes in its own batches, never moves backwards.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/database.ts';
import { LastUsedBatcher } from '../../src/auth/last-used.ts';

for (const dialect of DIALECTS) {
  describe(`instances sharing one database [${dialect}]`, () => {
    it('a token deleted through one instance is refused by the other at once', async (t) => {
      const h = await build(t, dialect);
      const other = await buildApp(h.config, {
        store: await openStore(h.database.config, { migrate: false }),
      });
      t.after(() => other.close());
      const user = await h.createUser();
      const { secret } = await h.createToken(user.id);
      const headers = { 'x-ripple-token': secret };

      const before = await other.inject({ method: 'GET', url: '/api/v1/tokens/self', headers });
      assert.equal(before.statusCode, 200, before.body);
      const deleted = await h.api({ method: 'POST', path: '/tokens/self/delete', headers });
      assert.equal(deleted.statusCode, 200, deleted.body);
      const after = await other.inject({ method: 'GET', url: '/api/v1/tokens/self', headers });
      assert.equal(after.statusCode, 404, after.body);
      // The other instance's pending use of the deleted token writes nothing back.
      await other.tokend.lastUsed.flush();
      const rows = await h.store.db
        .selectFrom('tokens')
        .select('id')
        .where('user_id', '=', user.id)
        .execute();
      assert.deepEqual(rows, []);
    });

    it('last_updated never moves backwards when instances flush older uses later', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const first = await h.createToken(user.id);
      const second = await h.createToken(user.id);
      await h.store.db
        .updateTable('tokens')
        .set({ last_updated: 1000 })
        .where('user_id', '=', user.id)
        .execute();
      const instanceA = new LastUsedBatcher(h.store.db, h.app.log);
      const instanceB = new LastUsedBatcher(h.store.db, h.app.log);
      const lastUpdated = async (id: number) =>
        (
          await h.store.db
            .selectFrom('tokens')
            .select('last_updated')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).last_updated;

      instanceA.touch(first.id, 2000);
      instanceB.touch(first.id, 1500);
      await instanceA.flush();
      await instanceB.flush();
      assert.equal(await lastUpdated(first.id), 2000, 'a later flush of an older use is ignored');

      // One batch with a newer use of one token and an older use of another.
      instanceA.touch(second.id, 3000);
      await instanceA.flush();
      instanceB.touch(first.id, 2600);
      instanceB.touch(second.id, 2999);
      await instanceB.flush();
      assert.equal(await lastUpdated(first.id), 2600);
      assert.equal(await lastUpdated(second.id), 3000);

      // What the API lists agrees.
      const list = await h.api({
        method: 'GET',
        path: '/tokens',
        headers: { 'x-ripple-token': second.secret },
      });
      const listed = body(list).tokens as Array<{ id: number; last_updated: number }>;
      assert.equal(listed.find((x) => x.id === first.id)?.last_updated, 2600);
    });
  });
}
