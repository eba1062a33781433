// Helpers of the scale tests: is Redis there, a key prefix of their own, JSON requests. The tokend process
// and the TCP proxy they use are in ../helpers/real-server.ts.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { IN_CI, REDIS_URL } from '../helpers/dialects.ts';

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

export interface JsonResponse {
  status: number;
  body: Record<string, unknown>;
}

export async function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; json?: unknown } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}
