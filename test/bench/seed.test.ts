// The bench's seeding: the counts it promises, the over-limit third, and that its derived secrets authenticate.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { limit } from '../../src/auth/privileges.ts';
import {
  ADMIN_USER_ID,
  HOT_USER_ID,
  adminTokenId,
  benchSecret,
  hotTokenId,
  ownerOf,
  seed,
  type SeedSpec,
} from '../../bench/seed.ts';

const SPEC: SeedSpec = { users: 40, tokens: 2500, hotTokens: 100 };

for (const dialect of DIALECTS)
  describe(`bench seed (${dialect})`, () => {
    it('inserts the users and tokens it reports, one third over their limits, with working secrets', async (t) => {
      const h = await build(t, dialect);
      const result = await seed(h.store, SPEC);
      const { db } = h.store;

      const users = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst();
      const tokens = await db
        .selectFrom('tokens')
        .select(['id', 'user_id', 'privileges'])
        .orderBy('id')
        .execute();
      assert.equal(Number(users?.n), SPEC.users);
      assert.equal(tokens.length, SPEC.tokens);
      assert.equal(result.tokens, SPEC.tokens);

      const owners = await db.selectFrom('users').select(['id', 'privileges']).execute();
      const privilegesOfUser = new Map(owners.map((u) => [u.id, Number(u.privileges)]));
      const over = tokens.filter(
        (tk) => limit(Number(tk.privileges), privilegesOfUser.get(tk.user_id)!) !== Number(tk.privileges),
      );
      assert.equal(over.length, result.overLimit);
      assert.equal(over.length, Math.floor(SPEC.tokens / 3));
      for (const tk of tokens) assert.equal(tk.user_id, ownerOf(SPEC, tk.id), `owner of token ${tk.id}`);
      assert.equal(tokens.filter((tk) => tk.user_id === HOT_USER_ID).length, SPEC.hotTokens);
      // Every user past the first two owns some tokens, and nobody but the hot user owns many.
      const perUser = await db
        .selectFrom('tokens')
        .select(['user_id', sql<number>`count(*)`.as('n')])
        .groupBy('user_id')
        .execute();
      assert.equal(perUser.length, SPEC.users);
      for (const row of perUser)
        if (row.user_id !== HOT_USER_ID)
          assert.ok(Number(row.n) <= Math.ceil(SPEC.tokens / (SPEC.users - 2)) + 1);

      const self = await h.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { 'x-ripple-token': benchSecret(hotTokenId(1)) },
      });
      assert.equal(self.statusCode, 200, self.body);
      assert.equal(body(self).id, hotTokenId(1));

      // The admin token may start fix_privileges; afterwards no token is over its owner's limits.
      const fix = await h.api({
        method: 'POST',
        path: '/tokens/fix_privileges',
        headers: { 'x-ripple-token': benchSecret(adminTokenId(SPEC)) },
      });
      assert.equal(fix.statusCode, 200, fix.body);
      await h.app.tokend.jobs.idle();
      const after = await db.selectFrom('tokens').select(['user_id', 'privileges']).execute();
      for (const tk of after)
        assert.equal(limit(Number(tk.privileges), privilegesOfUser.get(tk.user_id)!), Number(tk.privileges));
      assert.equal(ownerOf(SPEC, adminTokenId(SPEC)), ADMIN_USER_ID);

      // Token creation works with the seeded password, and new ids do not collide with seeded ones.
      const created = await h.api({
        method: 'POST',
        path: '/tokens',
        payload: { id: 3, password: 'bench-password' },
      });
      assert.equal(created.statusCode, 200, created.body);
    });
  });
