// The expiry sweep removes a backlog larger than one batch, and nothing that has not expired.
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { deleteExpiredTokens } from '../../src/tokens/repository.ts';

for (const dialect of DIALECTS) {
  describe(`expiry sweep [${dialect}]`, () => {
    it('deletes more expired tokens than one batch holds, and keeps live ones', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const now = 2_000_000_000;
      const expired = 5000 * 2 + 7;
      const rows = Array.from({ length: expired }, (_, i) => ({
        user_id: user.id,
        privileges: 0,
        description: '',
        token_hash: `e${i.toString(16).padStart(63, '0')}`,
        private: 0,
        last_updated: now - 100,
        expires_at: now - 1 - (i % 50),
      }));
      for (let i = 0; i < rows.length; i += 1000)
        await h.store.db
          .insertInto('tokens')
          .values(rows.slice(i, i + 1000))
          .execute();
      const live = await h.createToken(user.id, { description: 'no expiry' });
      await h.store.db
        .insertInto('tokens')
        .values({ ...rows[0]!, token_hash: 'f'.repeat(64), expires_at: now + 60 })
        .execute();

      assert.equal(await deleteExpiredTokens(h.store.db, actOutsideRequest('expiry', now)), expired);
      const left = await h.store.db.selectFrom('tokens').select(['id', 'expires_at']).orderBy('id').execute();
      assert.equal(left.length, 2);
      assert.equal(left[0]!.id, live.id);
      assert.equal(Number(left[1]!.expires_at), now + 60);
      assert.equal(await deleteExpiredTokens(h.store.db, actOutsideRequest('expiry', now)), 0);
    });
  });
}
