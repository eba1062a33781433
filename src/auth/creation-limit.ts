// The bound on API tokens made per user per window (TOKEN_CREATE_RATE_LIMIT per
// TOKEN_CREATE_RATE_WINDOW_S): token creation through the API and the token page, and regeneration on
// the token page, count against one budget of the user's; beyond it, 429 with Retry-After and nothing is
// made (nor logged, nor published). Counted once the request has proven it is the user (the password of
// the API's login, checked after the spec's checks 1–7; the page's session and sudo mode), so no one
// else can spend a user's budget. The operator's CLI is not bounded. Each token made is two rows of the
// security log at most (a regeneration: the old one revoked, the new one made), so a signed-in user adds
// at most 2 × TOKEN_CREATE_RATE_LIMIT rows per window this way. The count lives where the login limits'
// do (src/auth/login-limiter.ts): Redis with REDIS_URL, the cluster primary with WORKERS > 1, else this
// process.
import type { LoginLimiter } from './login-limiter.ts';
import type { Counter } from './login-counters.ts';

/** The count's name in every store (the cluster primary keeps one limiter per name). */
const PREFIX = 'token-create';

export class TokenCreationLimit {
  private readonly counter: Counter;

  constructor(store: Pick<LoginLimiter, 'counter'>, points: number, windowS: number) {
    this.counter = store.counter(PREFIX, points, windowS);
  }

  /** Counts one token made for `userId`: undefined when allowed, else the seconds to wait. */
  async admit(userId: number): Promise<number | undefined> {
    const counted = await this.counter.count(String(userId));
    return counted.allowed ? undefined : Math.max(1, Math.ceil(counted.msBeforeNext / 1000));
  }
}
