// reserveIds: generated ids go past a range about to be written with explicit ids, and never back; no id
// given from outside (`tokend user create --user-id`, reserveIds) takes a generator to the end of its range.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { build } from '../helpers/app.ts';
import { cliHarness } from '../helpers/cli.ts';
import { reserveIds } from '../../src/store/sql-dialect.ts';
import { MAX_ID } from '../../src/store/schema.ts';
import { MAX_EXPLICIT_ID } from '../../src/store/ids.ts';

// In place (`ripple`) tokend gives no row an id from outside: the commands that do (user create
// --user-id, import, import-ripple) refuse a family database, whose ids are its programs' own
// (test/ripple/in-place.test.ts).
for (const dialect of DIALECTS.filter((d) => d !== 'ripple')) {
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

    it('refuses to reserve ids past MAX_EXPLICIT_ID', async (t) => {
      const h = await build(t, dialect);
      await assert.rejects(reserveIds(h.store.db, 'tokens', MAX_ID), RangeError);
      const user = await h.createUser();
      assert.ok((await h.createToken(user.id)).id < 1000, 'the generator did not move');
    });

    it('user create --user-id takes ids up to MAX_EXPLICIT_ID; later users and tokens still get ids', async (t) => {
      const h = await cliHarness(t, dialect);
      const create = (name: string, ...more: string[]) =>
        h.cli(['user', 'create', '--username', name, '--password', 'pw', '--json', ...more]);
      for (const id of [MAX_ID, MAX_EXPLICIT_ID + 1, 2 ** 40]) {
        const refused = await create(`at${id}`, '--user-id', String(id));
        assert.equal(refused.code, 2, `${id}: a usage mistake`);
        assert.match(
          refused.stderr,
          new RegExp(
            `--user-id: id ${id} is above ${MAX_EXPLICIT_ID}, the largest id tokend takes from outside`,
          ),
        );
      }
      const zero = await create('zero', '--user-id', '0');
      assert.match(zero.stderr, /--user-id: id 0 is below 1/);
      const highest = await create('highest', '--user-id', String(MAX_EXPLICIT_ID));
      assert.equal(highest.code, 0, highest.stderr);
      const next = await create('next');
      assert.equal(next.code, 0, next.stderr);
      const nextId = (JSON.parse(next.stdout) as { id: number }).id;
      assert.ok(nextId > MAX_EXPLICIT_ID && nextId < MAX_ID, `next user id ${nextId}`);
      const app = await h.app();
      const login = await app.inject({
        method: 'POST',
        url: '/api/v1/tokens',
        payload: { username: 'next', password: 'pw' },
      });
      assert.equal(login.statusCode, 200, login.body);
    });
  });
}
