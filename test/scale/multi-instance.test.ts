// Two tokend processes on one PostgreSQL (and, the same again, one MySQL/MariaDB) database and one Redis,
// as behind a load balancer: they start
// together on an empty database, share tokens, deletions and the login limit, and a fix_privileges
// started on one rewrites the database both read.
import { actOutsideRequest } from '../../src/auth/security-log.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { insertUser } from '../../src/users/repository.ts';
import { PasswordHasher, CURRENT_PASSWORD_VERSION } from '../../src/users/passwords.ts';
import { mintToken } from '../../src/auth/mint.ts';
import { nowSeconds } from '../../src/auth/clock.ts';
import { TokenPrivilege as T, UserPrivilege as U } from '../../src/auth/privileges.ts';
import { request, startTokend } from '../helpers/real-server.ts';
import { REDIS_URL, redisSkipReason, uniqueRedisPrefix } from '../helpers/redis.ts';

const hasher = new PasswordHasher({ cost: 4, concurrency: 2 });
const ACTIVE = U.UserPublic | U.UserNormal;

async function addUser(store: Store, username: string, privileges: number, password: string) {
  return insertUser(store.db, {
    username,
    passwordHash: await hasher.hash(password),
    passwordVersion: CURRENT_PASSWORD_VERSION,
    privileges,
    now: nowSeconds(),
  });
}

for (const dialect of ['postgres', 'mysql'] as const)
  describe(`two instances on one ${dialect} database and one Redis`, async () => {
    const skip = !DIALECTS.includes(dialect)
      ? `the ${dialect} test server does not answer`
      : await redisSkipReason();

    it(
      'share tokens, deletions, the login limit and fix_privileges',
      { skip, timeout: 120_000 },
      async (t) => {
        const database = await createTestDatabase(dialect);
        t.after(() => database.drop());
        const env = {
          DATABASE_URL: database.url,
          REDIS_URL,
          REDIS_KEY_PREFIX: uniqueRedisPrefix(),
          DB_POOL_SIZE: '4',
        };
        // Both start at once on the empty database: both migrate, under the migration lock.
        const [a, b] = await Promise.all([startTokend(env), startTokend(env)]);
        t.after(async () => {
          await Promise.all([a.stop(), b.stop()]);
        });
        const store = await openStore(database.config, { migrate: false });
        t.after(() => store.close());

        // A token made on one instance works on the other.
        const aliceId = await addUser(store, 'alice', ACTIVE, 'alice-pw');
        const created = await request(`${a.baseUrl}/tokens`, {
          method: 'POST',
          json: { id: aliceId, password: 'alice-pw' },
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const secret = created.body.token as string;
        const onB = await request(`${b.baseUrl}/tokens/self`, { headers: { 'x-ripple-token': secret } });
        assert.equal(onB.status, 200, JSON.stringify(onB.body));

        // Deleted on one, refused by both at once.
        const deleted = await request(`${b.baseUrl}/tokens/self/delete`, {
          method: 'POST',
          headers: { 'x-ripple-token': secret },
        });
        assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
        for (const server of [a, b]) {
          const self = await request(`${server.baseUrl}/tokens/self`, {
            headers: { 'x-ripple-token': secret },
          });
          assert.equal(self.status, 404, `${server.baseUrl}: ${JSON.stringify(self.body)}`);
        }

        // 12 concurrent attempts over both instances, same user and client IP: 5 password checks, 7 refusals.
        const bobId = await addUser(store, 'bob', ACTIVE, 'bob-pw');
        const attempts = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            request(`${(i % 2 === 0 ? a : b).baseUrl}/tokens`, {
              method: 'POST',
              json: { id: bobId, password: i % 3 === 0 ? 'wrong' : 'bob-pw' },
            }),
          ),
        );
        const statuses = attempts.map((r) => r.status);
        assert.equal(statuses.filter((s) => s === 200 || s === 403).length, 5, statuses.join(','));
        assert.equal(statuses.filter((s) => s === 429).length, 7, statuses.join(','));
        t.diagnostic(`login statuses over both instances: ${statuses.join(',')}`);

        // fix_privileges started on A rewrites the shared database; B lists the rewritten privileges.
        const adminId = await addUser(
          store,
          'admin',
          ACTIVE | U.AdminAccessRAP | U.AdminManageUsers | U.AdminBanUsers | U.AdminManageServer,
          'admin-pw',
        );
        const admin = await mintToken(store.db, {
          layout: store.layout,
          userId: adminId,
          cap: 'none',
          requested: T.ManageUser | T.APIMeta,
          description: 'admin',
          private: false,
          now: nowSeconds(),
          act: actOutsideRequest('cli', nowSeconds()),
        });
        const carolId = await addUser(store, 'carol', ACTIVE | U.AdminAccessRAP, 'carol-pw');
        const carol = await mintToken(store.db, {
          layout: store.layout,
          userId: carolId,
          cap: 'none',
          requested: T.ReadConfidential | T.Write | T.ViewUserAdvanced,
          description: 'carol',
          private: false,
          now: nowSeconds(),
          act: actOutsideRequest('cli', nowSeconds()),
        });
        await store.db.updateTable('users').set({ privileges: ACTIVE }).where('id', '=', carolId).execute();
        const fix = await request(`${a.baseUrl}/tokens/fix_privileges?id=${carolId}`, {
          method: 'POST',
          headers: { 'x-ripple-token': admin.secret },
        });
        assert.equal(fix.status, 200, JSON.stringify(fix.body));
        let listed: unknown;
        for (let i = 0; i < 100; i++) {
          const list = await request(`${b.baseUrl}/tokens`, { headers: { 'x-ripple-token': carol.secret } });
          listed = (list.body.tokens as Array<{ id: number; privileges: number }>).find(
            (x) => x.id === carol.id,
          );
          if ((listed as { privileges: number }).privileges === (T.ReadConfidential | T.Write)) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal((listed as { privileges: number }).privileges, T.ReadConfidential | T.Write);

        // Both drain and exit 0 on SIGTERM.
        assert.deepEqual(await Promise.all([a.stop(), b.stop()]), [0, 0], a.output() + b.output());
      },
    );
  });
