// The Redis half of /health/ready: a PING over the login limiter's link, the one Redis connection of the
// process (it fails fast while Redis is away or hangs, and reports outages itself). Optional: without
// Redis the login limiter counts per instance, so the instance still serves (readiness: degraded).
import type { RedisLink } from '../redis.ts';
import type { ReadinessCheck } from './routes.ts';

export function redisReadiness(link: RedisLink): ReadinessCheck {
  return {
    name: 'redis',
    optional: true,
    async check() {
      if (!link.isReady) throw new Error('Redis link not ready');
      await link.client.ping();
    },
  };
}
