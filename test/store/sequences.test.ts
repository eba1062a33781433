// reserveIds: generated ids go past a range about to be written with explicit ids, and never back.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { reserveIds } from '../../src/store/sql-dialect.ts';

for (const dialect of DIALECTS) {
  describe(`reserveIds [${dialect}]`, () => {
    it('moves the next generated id past the reserved range, and never lowers it', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      await reserveIds(h.store.db, 'tokens', 500);
      const first = await h.createToken(user.id);
      assert.ok(first.id > 500, `first id ${first.id}`);
      // A smaller reservation, or the same one again, leaves the counter where it is.
      await reserveIds(h.store.db, 'tokens', 100);
      await reserveIds(h.store.db, 'tokens', 500);
      const second = await h.createToken(user.id);
      assert.ok(second.id > first.id, `second id ${second.id} after ${first.id}`);
      // Users too, on an empty range above every id in use.
      await reserveIds(h.store.db, 'users', 7000);
      const next = await h.createUser({ username: 'after-reserve' });
      assert.ok(next.id > 7000, `user id ${next.id}`);
    });
  });
}
