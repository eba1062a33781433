// The login limit with REDIS_URL: one count for every instance while Redis answers; a per-instance
// count (the insurance limiter), logged once per outage, while it does not; never unlimited.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { createLoginLimiter, type LimiterSettings, type LoginLimiter } from '../../src/auth/login-limiter.ts';
import type { LinkLogger } from '../../src/redis.ts';
import { build } from '../helpers/app.ts';
import { TcpProxy } from '../helpers/real-server.ts';
import { REDIS_URL, redisSkipReason, uniqueRedisPrefix } from '../helpers/redis.ts';

const POINTS = 5;
const ATTEMPTS = 12;
/** Nothing listens on port 1 of the loopback: connections are refused at once. */
const DEAD_REDIS = 'redis://127.0.0.1:1';
const FAST = { connectTimeoutMs: 300, commandTimeoutMs: 300 };

class RecordingLog implements LinkLogger {
  readonly lines: Array<{ level: string; msg: string }> = [];
  warn(_obj: object, msg: string) {
    this.lines.push({ level: 'warn', msg });
  }
  info(_obj: object, msg: string) {
    this.lines.push({ level: 'info', msg });
  }
  count(pattern: RegExp): number {
    return this.lines.filter((l) => pattern.test(l.msg)).length;
  }
}

const settings = (redisUrl: string, redisKeyPrefix = uniqueRedisPrefix()): LimiterSettings => ({
  points: POINTS,
  addressPoints: 1000,
  durationS: 60,
  redisUrl,
  redisKeyPrefix,
  redisTimeouts: FAST,
});

async function limiter(t: TestContext, s: LimiterSettings, log: LinkLogger): Promise<LoginLimiter> {
  const l = await createLoginLimiter(s, log);
  t.after(() => l.close());
  return l;
}

async function allowedCount(limiters: LoginLimiter[], attempts: number, userId = 7): Promise<number> {
  const decisions = await Promise.all(
    Array.from({ length: attempts }, (_, i) => limiters[i % limiters.length]!.attempt(userId, '10.0.0.1')),
  );
  for (const d of decisions) if (!d.allowed) assert.ok(d.retryAfterS >= 1, 'a refusal says when to retry');
  return decisions.filter((d) => d.allowed).length;
}

const fallbackStarted = /Redis unreachable, counting attempts per instance/;
const fallbackEnded = /shared through Redis again/;

describe('login limit while Redis is unreachable', () => {
  it('still refuses after the limit, through the insurance limiter, and logs the outage once', async (t) => {
    const log = new RecordingLog();
    const l = await limiter(t, settings(DEAD_REDIS), log);
    assert.equal(await allowedCount([l], ATTEMPTS), POINTS);
    assert.equal(await allowedCount([l], 3), 0, 'still limited on later attempts');
    assert.equal(log.count(fallbackStarted), 1, JSON.stringify(log.lines));
    assert.equal(log.count(/Redis is unreachable/), 1, JSON.stringify(log.lines));
    assert.equal(log.count(fallbackEnded), 0);
  });

  it('answers 429 over HTTP after 5 attempts', async (t) => {
    const h = await build(t, 'sqlite', { REDIS_URL: DEAD_REDIS, REDIS_KEY_PREFIX: uniqueRedisPrefix() });
    const user = await h.createUser();
    const responses = await Promise.all(
      Array.from({ length: ATTEMPTS }, (_, i) =>
        h.api({
          method: 'POST',
          path: '/tokens',
          payload: { id: user.id, password: i % 2 === 0 ? user.password : 'wrong' },
        }),
      ),
    );
    const statuses = responses.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 429).length, ATTEMPTS - POINTS, statuses.join(','));
    assert.ok(
      statuses.every((s) => s === 429 || s === 200 || s === 403),
      statuses.join(','),
    );
    for (const r of responses.filter((r) => r.statusCode === 429))
      assert.ok(Number(r.headers['retry-after']) >= 1);
  });
});

describe('login limit shared through Redis', async () => {
  const skip = await redisSkipReason();

  it('counts attempts on two instances together', { skip }, async (t) => {
    const prefix = uniqueRedisPrefix();
    const log = new RecordingLog();
    const a = await limiter(t, settings(REDIS_URL, prefix), log);
    const b = await limiter(t, settings(REDIS_URL, prefix), log);
    assert.equal(await allowedCount([a, b], ATTEMPTS), POINTS);
    assert.equal(log.count(fallbackStarted), 0, 'Redis answered every attempt');

    // The count lives under this test's prefix only: another prefix starts from zero.
    const other = await limiter(t, settings(REDIS_URL), log);
    assert.equal(await allowedCount([other], 1), 1);
    const redis = new Redis(REDIS_URL);
    t.after(() => redis.quit());
    const keys = await redis.keys(`${prefix}*`);
    assert.deepEqual(keys.sort(), [
      `${prefix}login-account-rank:7`,
      `${prefix}login-address:10.0.0.1`,
      `${prefix}login-rank:10.0.0.1`,
      `${prefix}login:7:10.0.0.1`,
    ]);
    await redis.del(...keys);
  });

  it('counts attempts per client address across users on two instances together', { skip }, async (t) => {
    const prefix = uniqueRedisPrefix();
    const log = new RecordingLog();
    const tight = { ...settings(REDIS_URL, prefix), addressPoints: 4 };
    const a = await limiter(t, tight, log);
    const b = await limiter(t, tight, log);
    const decisions = [];
    for (let user = 1; user <= 6; user++) decisions.push(await [a, b][user % 2]!.attempt(user, '10.0.0.9'));
    assert.deepEqual(
      decisions.map((d) => d.allowed),
      [true, true, true, true, false, false],
    );
    assert.equal((await a.attempt(1, '10.0.0.10')).allowed, true, 'another address has its own budget');
    const redis = new Redis(REDIS_URL);
    t.after(() => redis.quit());
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  });

  it('falls back per instance during an outage and shares again when Redis is back', { skip }, async (t) => {
    const redisUrl = new URL(REDIS_URL);
    const proxy = new TcpProxy(Number(redisUrl.port || 6379), redisUrl.hostname);
    await proxy.start();
    t.after(() => proxy.close());
    const viaProxy = new URL(REDIS_URL);
    viaProxy.port = String(proxy.port);
    const log = new RecordingLog();
    const prefix = uniqueRedisPrefix();
    const l = await limiter(t, settings(viaProxy.toString(), prefix), log);

    assert.equal(await allowedCount([l], 3), 3, 'shared count: 3 of 5 used');
    await proxy.cut();
    // The insurance limiter starts its own count of 5: limiting goes on, per instance.
    assert.equal(await allowedCount([l], ATTEMPTS), POINTS);
    assert.equal(log.count(fallbackStarted), 1, JSON.stringify(log.lines));

    await proxy.restore();
    for (let i = 0; i < 100 && log.count(/Redis is reachable again/) === 0; i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.equal(log.count(/Redis is reachable again/), 1, JSON.stringify(log.lines));
    // Back on the shared count, which remembers the 3 attempts made before the outage.
    assert.equal(await allowedCount([l], ATTEMPTS), POINTS - 3);
    assert.equal(log.count(fallbackEnded), 1, JSON.stringify(log.lines));
    assert.equal(log.count(fallbackStarted), 1, 'one outage, one warning');
    const redis = new Redis(REDIS_URL);
    t.after(() => redis.quit());
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  });
});
