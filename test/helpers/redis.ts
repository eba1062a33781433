// The test Redis: whether it answers (else why the tests that need it skip), and a key prefix per test.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { IN_CI, REDIS_URL } from './dialects.ts';

export { REDIS_URL };

async function redisProblem(): Promise<string | undefined> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    client.disconnect();
  }
}

/**
 * Why tests that need Redis must skip, or undefined when Redis answers. With CI=true a missing Redis
 * fails the run instead (.ci/services.sh starts it).
 */
export async function redisSkipReason(): Promise<string | undefined> {
  const problem = await redisProblem();
  if (problem === undefined) return undefined;
  if (IN_CI) throw new Error(`CI=true but the Redis test server (${REDIS_URL}) does not answer: ${problem}`);
  return `Redis at ${REDIS_URL} does not answer (${problem}); set TEST_REDIS_URL or start redis-server`;
}

/** A key prefix no other test uses, so tests sharing one Redis never see each other's counts. */
export const uniqueRedisPrefix = (): string => `tokend-test:${randomBytes(6).toString('hex')}:`;
