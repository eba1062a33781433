// Redis outage: with REDIS_URL set, login attempts are counted in Redis. The test puts a TCP proxy between
// tokend and Redis and cuts it: the limit must still hold (per-instance fallback, 429 after the limit),
// /health/ready must say Redis is failing, and once Redis is back attempts are shared through it again.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { REDIS_URL, IN_CI } from '../helpers/dialects.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/database.ts';
import { TcpProxy } from '../helpers/real-server.ts';
import { eventually, within } from '../helpers/waiting.ts';
import { seedUsers, type SeedUser } from '../helpers/seed-users.ts';

const LIMIT = 5;

async function redisAnswers(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0 });
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

const available = await redisAnswers();
if (!available && IN_CI) throw new Error('CI=true but the Redis test server does not answer');

describe('Redis outage', { skip: available ? false : 'Redis does not answer' }, () => {
  it('keeps limiting login attempts per instance while Redis is away, and shares them again after', async (t) => {
    const database = await createTestDatabase('sqlite');
    t.after(() => database.drop());
    const users = await seedUsers(database.config, 3);
    const redisPort = Number(new URL(REDIS_URL).port || 6379);
    const proxy = new TcpProxy(redisPort, new URL(REDIS_URL).hostname);
    await proxy.start();
    t.after(() => proxy.close());

    const prefix = `tokend-test-${randomBytes(4).toString('hex')}:`;
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      BCRYPT_COST: '4',
      LOGIN_RATE_LIMIT: String(LIMIT),
      REDIS_URL: proxy.rewrite(REDIS_URL),
      REDIS_KEY_PREFIX: prefix,
    });
    config.database = database.config;
    const app: FastifyInstance = await buildApp(config, { store: await openStore(database.config) });
    await app.ready();
    t.after(() => app.close());

    const direct = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    t.after(async () => {
      const keys = await direct.keys(`${prefix}*`);
      if (keys.length > 0) await direct.del(...keys);
      direct.disconnect();
    });
    const sharedCount = async (user: SeedUser) => {
      const keys = await direct.keys(`${prefix}*:${user.id}:*`);
      return keys.length;
    };

    /** LIMIT attempts are answered (wrong password: 403), the next one is a 429 with Retry-After. */
    const assertLimited = async (user: SeedUser, phase: string) => {
      for (let i = 1; i <= LIMIT + 1; i++) {
        const r = await within(
          2000,
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
    };
    const ready = () => within(2000, 'ready', app.inject({ url: '/health/ready' }));

    // Redis up: attempts are counted in Redis.
    assert.equal((await ready()).statusCode, 200);
    await assertLimited(users[0]!, 'Redis up');
    assert.ok((await sharedCount(users[0]!)) > 0, 'attempts were not counted in Redis');

    // Redis gone: still limited, per instance; readiness says which dependency fails.
    await proxy.cut();
    await assertLimited(users[1]!, 'Redis down');
    assert.equal(await sharedCount(users[1]!), 0, 'counted in Redis while it was unreachable?');
    const down = await ready();
    assert.equal(down.statusCode, 503, down.body);
    assert.deepEqual((down.json() as { checks: unknown }).checks, { database: 'ok', redis: 'failing' });

    // Redis back: readiness recovers and attempts are shared through Redis again, without a restart.
    await proxy.restore();
    assert.ok(
      await eventually(40, 250, async () => (await ready()).statusCode === 200),
      'readiness did not recover',
    );
    assert.ok(
      await eventually(40, 250, async () => {
        const r = await app.inject({
          method: 'POST',
          url: '/api/v1/tokens',
          payload: { id: users[2]!.id, password: 'wrong' },
        });
        return r.statusCode === 403 && (await sharedCount(users[2]!)) > 0;
      }),
      'attempts did not go back to Redis',
    );
  });
});
