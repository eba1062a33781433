// The Redis half of /health/ready: a PING over its own fail-fast link (the login limiter's link is its own
// business). The link's outage messages go to debug: the limiter already reports Redis outages.
import type { FastifyBaseLogger } from 'fastify';
import { RedisLink } from '../redis.ts';
import type { ReadinessCheck } from './routes.ts';

/** Shorter than the probe's own timeout, so a slow connect reports as failing rather than timing out. */
const CONNECT_WAIT_MS = 800;

export function redisReadiness(
  url: string,
  log: FastifyBaseLogger,
): { check: ReadinessCheck; close: () => Promise<void> } {
  const link = new RedisLink(url, {
    warn: (obj, msg) => log.debug(obj, msg),
    info: (obj, msg) => log.debug(obj, msg),
  });
  return {
    check: {
      name: 'redis',
      // Right after start-up (or a reconnect) the link may still be connecting: give it the probe's time.
      async check() {
        if (!(await link.waitReady(CONNECT_WAIT_MS))) throw new Error('Redis link not ready');
        return link.client.ping();
      },
    },
    close: () => link.close(),
  };
}
