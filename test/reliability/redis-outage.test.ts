// Redis outage: with REDIS_URL set, login attempts are counted in Redis. The tests put a TCP proxy between
// tokend and Redis and cut it (Redis goes away) or freeze it (Redis hangs: connections stay open and
// nothing answers). Either way the limit must still hold (per-instance fallback, 429 after the limit,
// which the log says), /health/ready must stay 200 and report Redis as degraded (the
// instance still serves), and once Redis is back attempts are shared through it again.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase } from '../helpers/databases.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/database.ts';
import { TcpProxy } from '../helpers/real-server.ts';
import { eventually, within } from '../helpers/waiting.ts';
import { seedUsers, type SeedUser } from '../helpers/seed-users.ts';
import { REDIS_URL, redisSkipReason, uniqueRedisPrefix } from '../helpers/redis.ts';

const LIMIT = 5;
/** Attempts per phase: LIMIT answered 403 (wrong password), the rest 429. */
const ATTEMPTS = 2 * LIMIT;

interface Outage {
  app: FastifyInstance;
  proxy: TcpProxy;
  users: SeedUser[];
  /** Lines tokend logged at warn and above. */
  logs: string[];
  /** How many keys of `user` Redis holds (attempts counted in Redis). */
  sharedCount(user: SeedUser): Promise<number>;
  /**
   * Sends ATTEMPTS wrong passwords for `user`, one after the other: LIMIT are answered 403, the next ones
   * 429 with Retry-After. Resolves to how long each took (ms).
   */
  assertLimited(user: SeedUser, phase: string): Promise<void>;
  ready(): Promise<{ statusCode: number; body: { code: number; message: string; checks: unknown } }>;
}

/** tokend on SQLite whose Redis (a prefix of this test's own) is reached through a proxy the test controls. */
async function outage(t: TestContext): Promise<Outage> {
  const database = await createTestDatabase('sqlite');
  t.after(() => database.drop());
  const users = await seedUsers(database.config, 3);
  const proxy = new TcpProxy(Number(new URL(REDIS_URL).port || 6379), new URL(REDIS_URL).hostname);
  await proxy.start();
  t.after(() => proxy.close());

  const prefix = uniqueRedisPrefix();
  const config = loadConfig({
    BCRYPT_COST: '4',
    LOGIN_RATE_LIMIT: String(LIMIT),
    REDIS_URL: proxy.rewrite(REDIS_URL),
    REDIS_KEY_PREFIX: prefix,
  });
  config.database = database.config;
  const logs: string[] = [];
  const app = await buildApp(config, {
    store: await openStore(database.config),
    logger: { level: 'warn', stream: { write: (line: string) => void logs.push(line) } },
  });
  await app.ready();
  t.after(() => app.close());

  const direct = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  t.after(async () => {
    const keys = await direct.keys(`${prefix}*`);
    if (keys.length > 0) await direct.del(...keys);
    direct.disconnect();
  });

  return {
    app,
    proxy,
    users,
    logs,
    sharedCount: async (user) => (await direct.keys(`${prefix}*:${user.id}:*`)).length,
    async assertLimited(user, phase) {
      for (let i = 1; i <= ATTEMPTS; i++) {
        const r = await within(
          5000,
          `${phase} attempt ${i}`,
          app.inject({ method: 'POST', url: '/api/v1/tokens', payload: { id: user.id, password: 'wrong' } }),
        );
        if (i <= LIMIT) assert.equal(r.statusCode, 403, `${phase} attempt ${i}: ${r.body}`);
        else {
          assert.equal(r.statusCode, 429, `${phase} attempt ${i}: ${r.body}`);
          assert.equal((r.json() as { code: number }).code, 429);
          assert.ok(Number(r.headers['retry-after']) >= 1);
        }
      }
    },
    async ready() {
      const r = await within(2000, 'ready', app.inject({ url: '/health/ready' }));
      return { statusCode: r.statusCode, body: r.json() };
    },
  };
}

/** Once Redis answers again: readiness says "ready" and `user`'s attempts are counted in Redis again. */
async function assertBackOnRedis(s: Outage, user: SeedUser): Promise<void> {
  assert.ok(
    await eventually(40, 250, async () => (await s.ready()).body.message === 'ready'),
    'readiness did not recover',
  );
  assert.ok(
    await eventually(40, 250, async () => {
      const r = await s.app.inject({
        method: 'POST',
        url: '/api/v1/tokens',
        payload: { id: user.id, password: 'wrong' },
      });
      return r.statusCode === 403 && (await s.sharedCount(user)) > 0;
    }),
    'attempts did not go back to Redis',
  );
}

describe('Redis outage', async () => {
  const skip = await redisSkipReason();

  it(
    'keeps limiting login attempts per instance while Redis is away, and shares them again after',
    { skip },
    async (t) => {
      const s = await outage(t);
      const [before, during, after] = s.users as [SeedUser, SeedUser, SeedUser];

      // Redis up: attempts are counted in Redis.
      assert.deepEqual((await s.ready()).body.checks, { database: 'ok', redis: 'ok' });
      await s.assertLimited(before, 'Redis up');
      assert.ok((await s.sharedCount(before)) > 0, 'attempts were not counted in Redis');

      // Redis gone: still limited, per instance; the instance still serves, so it stays ready, degraded.
      await s.proxy.cut();
      await s.assertLimited(during, 'Redis down');
      assert.equal(await s.sharedCount(during), 0, 'counted in Redis while it was unreachable?');
      const down = await s.ready();
      assert.equal(down.statusCode, 200, JSON.stringify(down.body));
      assert.deepEqual(down.body.checks, { database: 'ok', redis: 'degraded' });
      assert.match(down.body.message, /redis/i);

      // Redis back: readiness reports it again and attempts are shared through Redis, without a restart.
      await s.proxy.restore();
      await assertBackOnRedis(s, after);
    },
  );

  it('does not make logins wait on a Redis that hangs, and stays ready, degraded', { skip }, async (t) => {
    const s = await outage(t);
    const [before, during, after] = s.users as [SeedUser, SeedUser, SeedUser];
    await s.assertLimited(before, 'Redis up');
    assert.ok((await s.sharedCount(before)) > 0, 'attempts were not counted in Redis');

    // Redis hangs: the connection stays open and nothing answers. A login waits at most Redis's command
    // timeout (250 ms), and only while the connection still looks alive: it is then dropped, and the
    // limiter counts per instance at once until a new connection answers. (Before, every login waited 1 s
    // on the hung connection: 10 logins took 10 s.) No test times it; the fallback's log line is checked.
    s.proxy.freeze();
    await s.assertLimited(during, 'Redis hung');
    assert.ok(
      s.logs.some((line) => line.includes('counting attempts per instance')),
      `the limiter did not report its fallback: ${s.logs.join('')}`,
    );
    const hung = await s.ready();
    assert.equal(hung.statusCode, 200, JSON.stringify(hung.body));
    assert.deepEqual(hung.body.checks, { database: 'ok', redis: 'degraded' });

    // Redis answers again: shared again without a restart.
    await s.proxy.restore();
    await assertBackOnRedis(s, after);
  });
});
