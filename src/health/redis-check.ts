// The Redis half of /health/ready: a PING over the login limiter's link, the one Redis connection of the
// process (it fails fast while Redis is away and reports outages itself).
import type { RedisLink } from '../redis.ts';
import type { ReadinessCheck } from './routes.ts';

/** Shorter than the probe's own timeout, so a slow connect reports as failing rather than timing out. */
const CONNECT_WAIT_MS = 800;

export function redisReadiness(link: RedisLink): ReadinessCheck {
  return {
    name: 'redis',
    // Right after a reconnect the link may still be connecting: give it the probe's time.
    async check() {
      if (!(await link.waitReady(CONNECT_WAIT_MS))) throw new Error('Redis link not ready');
      await link.client.ping();
    },
  };
}
