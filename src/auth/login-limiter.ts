// The login-attempt limits: N attempts per (user id, client address) per window, and M attempts per client
// address across all users per window (so one address cannot try passwords for every user), both counted
// atomically before the password is checked. Client addresses come canonical (src/http/client-address.ts).
// An attempt whose password was never checked, because the password queue refused it or its client went
// away while it waited, is given back (`giveBack`): it spends neither budget. A check's rank in the
// password queue (fewest attempts first) comes from two more counts, of every attempt, given back or not:
// the address's attempts and the target account's attempts from every address (`rank`, the greater of
// the two). So an address that keeps sending while it is refused ranks behind one that asks less often,
// and so do the many addresses of a flood against one account, each of which asks rarely.
//
// Where the count lives: in Redis with REDIS_URL (per instance while Redis is unreachable, never
// unlimited), in the node:cluster primary for WORKERS > 1, else in this process's memory. The counting
// (rate-limiter-flexible's stores) is in login-counters.ts, loaded with the first attempt: a server
// nobody has signed in to yet has not loaded the library. Other limits count in the same store over the
// same Redis link (`counter`): the OAuth token endpoint's (src/oauth/token-limits.ts).
import type { Config } from '../config.ts';
import { DEFAULT_REDIS_TIMEOUTS, RedisLink, type LinkLogger, type RedisTimeouts } from '../redis.ts';
import type { Counter, CounterSpec } from './login-counters.ts';

export type LimitDecision =
  | {
      allowed: true;
      /**
       * the check's rank in the password queue: the greater of the client address's attempts and the
       * target account's attempts (from every address) in the window, this one included, the ones given
       * back too
       */
      rank: number;
      /**
       * Takes this attempt back from both counts, for an attempt whose password was not checked. Never
       * rejects: a store that does not answer keeps the attempt counted.
       */
      giveBack: () => Promise<void>;
    }
  | { allowed: false; retryAfterS: number };

/** Name the limiters in every store (and in the cluster primary, which keeps one limiter per name). */
const KEY_PREFIX = 'login';
const ADDRESS_KEY_PREFIX = 'login-address';
const RANK_KEY_PREFIX = 'login-rank';
const ACCOUNT_RANK_KEY_PREFIX = 'login-account-rank';
/** The rank counts only count: they never refuse. */
const UNLIMITED = 2 ** 31 - 1;

export class LoginLimiter {
  private counters:
    Promise<{ perUser: Counter; perAddress: Counter; rank: Counter; accountRank: Counter }> | undefined;
  private degraded = false;
  private readonly settings: LimiterSettings;
  private readonly log: LinkLogger | undefined;
  /** The Redis link the shared count travels over (closed with the limiter). */
  private readonly link: RedisLink | undefined;
  constructor(settings: LimiterSettings, log: LinkLogger | undefined, link: RedisLink | undefined) {
    this.settings = settings;
    this.log = log;
    this.link = link;
  }

  /** What a counter under `prefix` counts in: Redis with REDIS_URL, else the cluster primary or memory. */
  private spec(prefix: string, points: number, durationS: number): CounterSpec {
    return {
      prefix,
      points,
      durationS,
      shared: this.link && { link: this.link, keyPrefix: this.settings.redisKeyPrefix },
      clockMs: this.settings.clockMs ?? Date.now,
    };
  }

  /** The four counters, made with the first attempt (loading rate-limiter-flexible then). */
  private countersNow() {
    const { points, addressPoints, durationS } = this.settings;
    this.counters ??= import('./login-counters.ts').then(({ makeCounter }) => ({
      perUser: makeCounter(this.spec(KEY_PREFIX, points, durationS)),
      perAddress: makeCounter(this.spec(ADDRESS_KEY_PREFIX, addressPoints, durationS)),
      rank: makeCounter(this.spec(RANK_KEY_PREFIX, UNLIMITED, durationS)),
      accountRank: makeCounter(this.spec(ACCOUNT_RANK_KEY_PREFIX, UNLIMITED, durationS)),
    }));
    return this.counters;
  }

  /**
   * A counter of another limit (`points` per `durationS` under `prefix`, one name per limit) in the store
   * the login limits count in, falling back as they do while Redis is away: the token endpoint's limits
   * (src/oauth/token-limits.ts). Made with its first count, like the login counters.
   */
  counter(prefix: string, points: number, durationS: number): Counter {
    let made: Promise<Counter> | undefined;
    return {
      count: async (key) => {
        made ??= import('./login-counters.ts').then(({ makeCounter }) =>
          makeCounter(this.spec(prefix, points, durationS)),
        );
        const counted = await (await made).count(key);
        this.noteSource(counted.fallback);
        return counted;
      },
      giveBack: async (key, counted) => (await made)?.giveBack(key, counted),
    };
  }

  /**
   * Counts one attempt against both limits, and in the address's and the account's ranks. Rejects
   * (throws) only when no limiter could count it.
   */
  async attempt(userId: number, address: string): Promise<LimitDecision> {
    const { perUser, perAddress, rank, accountRank } = await this.countersNow();
    const userKey = `${userId}:${address}`;
    const [user, client, ranked, accountRanked] = await Promise.all([
      perUser.count(userKey),
      perAddress.count(address),
      rank.count(address),
      accountRank.count(String(userId)),
    ]);
    // The counts travel over one link: the per-user count tells whether Redis answered.
    this.noteSource(user.fallback);
    if (user.allowed && client.allowed)
      return {
        allowed: true,
        // A flood against one account from many addresses ranks as the account's attempts, however
        // rarely each address asks; one address ranks as its own attempts, however many accounts it tries.
        rank: Math.max(ranked.consumed, accountRanked.consumed),
        giveBack: async () => {
          await Promise.allSettled([perUser.giveBack(userKey, user), perAddress.giveBack(address, client)]);
        },
      };
    const waits = [user, client].filter((c) => !c.allowed).map((c) => c.msBeforeNext);
    return { allowed: false, retryAfterS: Math.max(1, Math.ceil(Math.max(...waits) / 1000)) };
  }

  /** Logs the start and the end of a fallback to the insurance limiter, once each per outage. */
  private noteSource(fallback: boolean): void {
    if (this.link === undefined || fallback === this.degraded) return;
    this.degraded = fallback;
    if (fallback)
      this.log?.warn({}, 'rate limits: Redis unreachable, counting attempts per instance until it is back');
    else this.log?.info({}, 'rate limits: shared through Redis again');
  }

  /** The Redis link of a shared limiter, for readiness checks; undefined when counting is local. */
  get redis(): RedisLink | undefined {
    return this.link;
  }

  async close(): Promise<void> {
    await this.link?.close();
  }
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
  /**
   * The time, in milliseconds since the epoch, by which an attempt's window is judged (whether it may
   * still be given back): the stores' own, Date.now, unless a test gives another.
   */
  clockMs?: () => number;
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
  if (settings.redisUrl === undefined) return new LoginLimiter(settings, log, undefined);
  const timeouts = settings.redisTimeouts ?? DEFAULT_REDIS_TIMEOUTS;
  const link = new RedisLink(settings.redisUrl, log, timeouts);
  // Start counting in Redis from the first request when it is there; start degraded (and say so) when not.
  await link.waitReady(timeouts.connectTimeoutMs);
  return new LoginLimiter(settings, log, link);
}
