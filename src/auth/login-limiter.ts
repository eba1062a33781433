// The login-attempt limits: N attempts per (user id, client address) per window, and M attempts per client
// address across all users per window (so one address cannot try passwords for every user), both counted
// atomically before the password is checked. Client addresses come canonical (src/http/client-address.ts).
//
// Where the count lives (createLoginLimiter picks it from the config):
// - REDIS_URL set: in Redis, shared by every instance. While Redis is unreachable, each instance counts on
//   its own (the insurance limiter), so limiting degrades to per instance and never turns off.
// - node:cluster worker (WORKERS > 1): in the primary process, shared by every worker on the machine.
// - otherwise: in this process's memory.
import cluster from 'node:cluster';
import {
  RateLimiterCluster,
  RateLimiterClusterMaster,
  RateLimiterCompatibleAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Config } from '../config.ts';
import { DEFAULT_REDIS_TIMEOUTS, RedisLink, type LinkLogger, type RedisTimeouts } from '../redis.ts';

/** The primary's side of RateLimiterCluster: it keeps the workers' counts (src/cluster.ts). */
export { RateLimiterClusterMaster };

export type LimitDecision = { allowed: true } | { allowed: false; retryAfterS: number };

type Limiter = RateLimiterAbstract | RateLimiterCompatibleAbstract;

/** Name the limiters in every store (and in the cluster primary, which keeps one limiter per name). */
const KEY_PREFIX = 'login';
const ADDRESS_KEY_PREFIX = 'login-address';
/** How long a worker waits for the primary's answer before the attempt fails (500, never unlimited). */
const CLUSTER_TIMEOUT_MS = 2000;

export interface LoginLimiterHooks {
  /** True when a result came from the insurance limiter rather than the shared store. */
  isFallback?: (res: RateLimiterRes) => boolean;
  log?: LinkLogger;
  /** The Redis link the shared count travels over (closed with the limiter). */
  redis?: RedisLink;
}

/** One count: allowed or not, and the limiter's answer. */
async function count(limiter: Limiter, key: string): Promise<{ allowed: boolean; res: RateLimiterRes }> {
  try {
    return { allowed: true, res: await limiter.consume(key) };
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    return { allowed: false, res: rejection };
  }
}

export class LoginLimiter {
  private readonly perUser: Limiter;
  private readonly perAddress: Limiter;
  private readonly hooks: LoginLimiterHooks;
  private degraded = false;
  constructor(perUser: Limiter, perAddress: Limiter, hooks: LoginLimiterHooks = {}) {
    this.perUser = perUser;
    this.perAddress = perAddress;
    this.hooks = hooks;
  }

  /** Counts one attempt against both limits. Rejects (throws) only when no limiter could count it. */
  async attempt(userId: number, address: string): Promise<LimitDecision> {
    const [user, client] = await Promise.all([
      count(this.perUser, `${userId}:${address}`),
      count(this.perAddress, address),
    ]);
    this.noteSource(user.res);
    if (user.allowed && client.allowed) return { allowed: true };
    const waits = [user, client].filter((c) => !c.allowed).map((c) => c.res.msBeforeNext);
    return { allowed: false, retryAfterS: Math.max(1, Math.ceil(Math.max(...waits) / 1000)) };
  }

  /** Logs the start and the end of a fallback to the insurance limiter, once each per outage. */
  private noteSource(res: RateLimiterRes): void {
    const { isFallback, log } = this.hooks;
    if (!isFallback) return;
    const fallback = isFallback(res);
    if (fallback === this.degraded) return;
    this.degraded = fallback;
    if (fallback)
      log?.warn({}, 'login rate limit: Redis unreachable, counting attempts per instance until it is back');
    else log?.info({}, 'login rate limit: shared through Redis again');
  }

  /** The Redis link of a shared limiter, for readiness checks; undefined when counting is local. */
  get redis(): RedisLink | undefined {
    return this.hooks.redis;
  }

  async close(): Promise<void> {
    await this.hooks.redis?.close();
  }
}

/**
 * Wraps the per-instance limiter that stands in while Redis is away, and remembers which results it
 * produced so the LoginLimiter can tell a fallback answer from a shared one.
 */
class InsuranceLimiter extends RateLimiterCompatibleAbstract {
  override readonly keyPrefix: string;
  override blockDuration = 0;
  override execEvenly = false;
  private readonly inner: RateLimiterAbstract;
  private readonly produced = new WeakSet<RateLimiterRes>();
  constructor(inner: RateLimiterAbstract) {
    super();
    this.inner = inner;
    this.keyPrefix = inner.keyPrefix;
  }
  isFrom(res: RateLimiterRes): boolean {
    return this.produced.has(res);
  }
  private tag<T>(promise: Promise<T>): Promise<T> {
    return promise.then(
      (res) => {
        if (res instanceof RateLimiterRes) this.produced.add(res);
        return res;
      },
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) this.produced.add(rejection);
        throw rejection;
      },
    );
  }
  override consume(key: string | number, points?: number, options?: Record<string, unknown>) {
    return this.tag(this.inner.consume(key, points, options));
  }
  override penalty(key: string | number, points?: number, options?: Record<string, unknown>) {
    return this.tag(this.inner.penalty(key, points, options));
  }
  override reward(key: string | number, points?: number, options?: Record<string, unknown>) {
    return this.tag(this.inner.reward(key, points, options));
  }
  override get(key: string | number, options?: Record<string, unknown>) {
    return this.tag(this.inner.get(key, options));
  }
  override set(key: string | number, points: number, secDuration: number, options?: Record<string, unknown>) {
    return this.tag(this.inner.set(key, points, secDuration, options));
  }
  override block(key: string | number, secDuration: number, options?: Record<string, unknown>) {
    return this.tag(this.inner.block(key, secDuration, options));
  }
  override delete(key: string | number, options?: Record<string, unknown>) {
    return this.inner.delete(key, options);
  }
}

/** This process's own count: through the cluster primary in a worker, in memory otherwise. */
function localLimiter(keyPrefix: string, points: number, durationS: number): RateLimiterAbstract {
  const options = { keyPrefix, points, duration: durationS };
  if (cluster.isWorker) return new RateLimiterCluster({ ...options, timeoutMs: CLUSTER_TIMEOUT_MS });
  return new RateLimiterMemory(options);
}

export interface LimiterSettings {
  /** attempts per user and client address per window (LOGIN_RATE_LIMIT) */
  points: number;
  /** attempts per client address across all users per window (LOGIN_IP_RATE_LIMIT) */
  addressPoints: number;
  durationS: number;
  redisUrl: string | undefined;
  /** Prefix of the Redis keys (REDIS_KEY_PREFIX); tests give each test its own. */
  redisKeyPrefix: string;
  redisTimeouts?: RedisTimeouts;
}

export const limiterSettings = (config: Config): LimiterSettings => ({
  points: config.loginRateLimit,
  addressPoints: config.loginIpRateLimit,
  durationS: config.loginRateWindowS,
  redisUrl: config.redisUrl,
  redisKeyPrefix: config.redisKeyPrefix,
});

/** The one place the login limiter is built from configuration. Close it to close its Redis link. */
export async function createLoginLimiter(settings: LimiterSettings, log: LinkLogger): Promise<LoginLimiter> {
  const limits = [
    { prefix: KEY_PREFIX, points: settings.points },
    { prefix: ADDRESS_KEY_PREFIX, points: settings.addressPoints },
  ] as const;
  const locals = limits.map((l) => localLimiter(l.prefix, l.points, settings.durationS));
  if (settings.redisUrl === undefined) return new LoginLimiter(locals[0]!, locals[1]!);

  const timeouts = settings.redisTimeouts ?? DEFAULT_REDIS_TIMEOUTS;
  const link = new RedisLink(settings.redisUrl, log, timeouts);
  // Start counting in Redis from the first request when it is there; start degraded (and say so) when not.
  await link.waitReady(timeouts.connectTimeoutMs);
  const insurances = locals.map((local) => new InsuranceLimiter(local));
  const shared = limits.map(
    (l, i) =>
      new RateLimiterRedis({
        storeClient: link.client,
        keyPrefix: `${settings.redisKeyPrefix}${l.prefix}`,
        points: l.points,
        duration: settings.durationS,
        // While the link is down, go straight to the insurance limiter instead of waiting for an error.
        rejectIfRedisNotReady: true,
        insuranceLimiter: insurances[i]!,
      }),
  );
  return new LoginLimiter(shared[0]!, shared[1]!, {
    // Both limits travel over one link: the per-user one tells whether Redis answered.
    isFallback: (res) => insurances[0]!.isFrom(res),
    log,
    redis: link,
  });
}
