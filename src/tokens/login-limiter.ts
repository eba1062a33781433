// The login-attempt limit of token creation: N attempts per (user id, client IP) per window,
// counted atomically before the password is checked.
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export type LimitDecision = { allowed: true } | { allowed: false; retryAfterS: number };

export class LoginLimiter {
  private readonly limiter: RateLimiterAbstract;
  constructor(limiter: RateLimiterAbstract) {
    this.limiter = limiter;
  }

  static inMemory(points: number, durationS: number): LoginLimiter {
    return new LoginLimiter(new RateLimiterMemory({ keyPrefix: 'login', points, duration: durationS }));
  }

  /** Counts one attempt. Rejects (throws) only when the limiter's store fails. */
  async attempt(userId: number, ip: string): Promise<LimitDecision> {
    try {
      await this.limiter.consume(`${userId}:${ip}`);
      return { allowed: true };
    } catch (res) {
      if (res instanceof RateLimiterRes)
        return { allowed: false, retryAfterS: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
      throw res;
    }
  }
}
