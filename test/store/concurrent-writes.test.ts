// Concurrent writes to one user's tokens: each is its own transaction (the API creates tokens one
// request at a time), and none fails with a deadlock. Minting locks the owner's row (the token cap counts
// under that lock) before the insert's foreign key check takes its own lock on it.
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { mintToken } from '../../src/auth/mint.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

const CONCURRENT = 16;

for (const dialect of DIALECTS) {
  describe(`concurrent token writes for one user [${dialect}]`, () => {
    it('creates every token', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const count = async () =>
        (await h.store.db.selectFrom('tokens').select('id').where('user_id', '=', user.id).execute()).length;
      const before = await count();
      const settled = await Promise.allSettled(
        Array.from({ length: CONCURRENT }, (_, i) =>
          mintToken(h.store.db, {
            layout: h.store.layout,
            userId: user.id,
            cap: 'none',
            requested: 0,
            description: `c${i}`,
            private: false,
            now: nowSeconds(),
            act: actOutsideRequest('cli', nowSeconds()),
          }),
        ),
      );
      const failed = settled.filter((r) => r.status === 'rejected').map((r) => String(r.reason));
      assert.deepEqual(failed, []);
      assert.equal((await count()) - before, CONCURRENT);
    });

    it('moves tokens between two users in both directions at once', async (t) => {
      const h = await build(t, dialect);
      const [a, b] = [await h.createUser(), await h.createUser()];
      const ofA = [];
      const ofB = [];
      for (let i = 0; i < CONCURRENT / 2; i++) {
        ofA.push(await h.createToken(a.id));
        ofB.push(await h.createToken(b.id));
      }
      const move = (id: number, to: number) =>
        h.store.db
          .transaction()
          .execute((trx) => trx.updateTable('tokens').set({ user_id: to }).where('id', '=', id).execute());
      const settled = await Promise.allSettled([
        ...ofA.map((tk) => move(tk.id, b.id)),
        ...ofB.map((tk) => move(tk.id, a.id)),
      ]);
      const failed = settled.filter((r) => r.status === 'rejected').map((r) => String(r.reason));
      assert.deepEqual(failed, []);
    });
  });
}
