// The counting stores behind the login limits (login-limiter.ts), the only module that loads
// rate-limiter-flexible: loaded with a server's first login attempt, and by the node:cluster primary.
// - shared (REDIS_URL): in Redis; while Redis is unreachable, each instance counts on its own (the
//   insurance limiter), so limiting degrades to per instance and never turns off.
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
import type { RedisLink } from '../redis.ts';

/** The primary's side of RateLimiterCluster: it keeps the workers' counts (src/cluster.ts). */
export { RateLimiterClusterMaster };

/** How long a worker waits for the primary's answer before the attempt fails (500, never unlimited). */
const CLUSTER_TIMEOUT_MS = 2000;

/**
 * An attempt is given back only while its window has at least this long to run: longer than any store
 * waits for an answer, so that the give-back cannot land after the window ended, in the next one, where
 * it would be a free attempt. An attempt counted closer to the window's end stays counted: its count
 * is about to go anyway.
 */
const GIVE_BACK_MARGIN_MS = CLUSTER_TIMEOUT_MS;

export interface CounterSpec {
  /** Names the count in every store (and in the cluster primary, which keeps one limiter per name). */
  prefix: string;
  points: number;
  durationS: number;
  /** Count in Redis, over this link, under keyPrefix + prefix. */
  shared: { link: RedisLink; keyPrefix: string } | undefined;
  /** Milliseconds since the epoch, as the stores measure their windows (LimiterSettings.clockMs). */
  clockMs: () => number;
}

/** One counted attempt. `fallback`: the count was the insurance limiter's, because Redis did not answer. */
export interface Counted {
  allowed: boolean;
  msBeforeNext: number;
  /** attempts counted under the key in the current window, this one included */
  consumed: number;
  fallback: boolean;
  /** when the window this attempt was counted in ends (ms since the epoch, by the counter's clockMs) */
  windowEndsAt: number;
}

export interface Counter {
  /** Counts one attempt under `key`. Rejects only when no store could count it. */
  count(key: string): Promise<Counted>;
  /**
   * Takes back one allowed attempt that `count(key)` counted (`counted`), in the store that counted it
   * (rate-limiter-flexible's `reward`): the insurance limiter's count for an attempt it counted, else the
   * shared or local one. Does nothing once the attempt's window is (nearly) over; rejects when the store
   * does not answer, and the attempt then stays counted.
   */
  giveBack(key: string, counted: Counted): Promise<void>;
}

/**
 * Wraps the per-instance limiter that stands in while Redis is away, and remembers which results it
 * produced, so that a fallback answer can be told from a shared one.
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

export function makeCounter({ prefix, points, durationS, shared, clockMs }: CounterSpec): Counter {
  const local = localLimiter(prefix, points, durationS);
  let limiter: RateLimiterAbstract | RateLimiterCompatibleAbstract = local;
  // Where a given-back attempt goes: the store that counted it, and no other (a give-back to Redis that
  // fails is not handed to the insurance limiter, which never counted that attempt).
  let sharedOnly: RateLimiterAbstract = local;
  let isFallback = (_res: RateLimiterRes) => false;
  if (shared) {
    const insurance = new InsuranceLimiter(local);
    const redisOptions = {
      storeClient: shared.link.client,
      keyPrefix: `${shared.keyPrefix}${prefix}`,
      points,
      duration: durationS,
      // While the link is down, go straight to the insurance limiter instead of waiting for an error.
      rejectIfRedisNotReady: true,
    };
    limiter = new RateLimiterRedis({ ...redisOptions, insuranceLimiter: insurance });
    sharedOnly = new RateLimiterRedis(redisOptions);
    isFallback = (res) => insurance.isFrom(res);
  }
  return {
    async count(key) {
      let res: RateLimiterRes;
      let allowed = true;
      try {
        res = await limiter.consume(key);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        res = rejection;
        allowed = false;
      }
      return {
        allowed,
        msBeforeNext: res.msBeforeNext,
        consumed: res.consumedPoints,
        fallback: isFallback(res),
        windowEndsAt: clockMs() + res.msBeforeNext,
      };
    },
    async giveBack(key, counted) {
      if (!counted.allowed || counted.windowEndsAt - clockMs() < GIVE_BACK_MARGIN_MS) return;
      await (counted.fallback ? local : sharedOnly).reward(key, 1);
    },
  };
}
