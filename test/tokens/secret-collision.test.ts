// A new secret that collides with a stored one is drawn again; a database that keeps refusing gives up.
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { mintToken } from '../../src/auth/mint.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { storedSecretHash } from '../../src/auth/secret.ts';

for (const dialect of DIALECTS) {
  // A collision is found by the stored form: looked for before the insert, and by the unique index on it
  // in tokend's own tables (in place the family's `tokens.token` has only a plain index, since the family's
  // own rows may hold one MD5 twice, so the look before the insert is what finds it there).
  describe(`secret collisions [${dialect}]`, () => {
    it('draws a new secret when the first ones are taken', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const token = {
        layout: h.store.layout,
        userId: user.id,
        cap: 'none' as const,
        requested: 0,
        description: '',
        private: false,
        now: nowSeconds(),
        act: actOutsideRequest('cli', nowSeconds()),
      };
      const taken = 'a'.repeat(32);
      await mintToken(h.store.db, token, () => taken);
      const draws = [taken, taken, 'b'.repeat(32)];
      const issued = await mintToken(h.store.db, token, () => draws.shift()!);
      assert.equal(issued.secret, 'b'.repeat(32));
      assert.equal(draws.length, 0, 'three secrets were drawn');
      const row = await h.store.db
        .selectFrom('tokens')
        .select('id')
        .where('token_hash', '=', storedSecretHash(h.store.layout, { private: false })(issued.secret))
        .executeTakeFirst();
      assert.equal(row?.id, issued.id);
    });

    it('gives up after five collisions instead of looping', { timeout: 10_000 }, async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const token = {
        layout: h.store.layout,
        userId: user.id,
        cap: 'none' as const,
        requested: 0,
        description: '',
        private: false,
        now: nowSeconds(),
        act: actOutsideRequest('cli', nowSeconds()),
      };
      const taken = 'c'.repeat(32);
      await mintToken(h.store.db, token, () => taken);
      let draws = 0;
      await assert.rejects(
        mintToken(h.store.db, token, () => {
          draws++;
          return taken;
        }),
      );
      assert.equal(draws, 5);
    });
  });
}
