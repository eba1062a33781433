// The token endpoint's rate limits: token requests per user and application, and per user across every
// application, per window (OAUTH_TOKEN_RATE_LIMIT, OAUTH_TOKEN_USER_RATE_LIMIT, OAUTH_TOKEN_RATE_WINDOW_S).
// A request is counted once the grant it presents names its user (a code or refresh token of this
// client); beyond either limit it is refused with `slow_down` (HTTP 429, Retry-After) and issues nothing.
//
// "Per application" means per user and application, not per application alone: a public client's id is
// public, and a count per client would let anyone spend it for every user of that application.
// The counts live where the login limits' do (src/auth/login-limiter.ts): Redis with REDIS_URL, the
// cluster primary with WORKERS > 1, else this process.
import type { OAuthTokenRate } from '../config.ts';
import type { LoginLimiter } from '../auth/login-limiter.ts';
import type { Counter } from '../auth/login-counters.ts';
import { SlowDown } from './errors.ts';

/** Names of the two counts in every store (the cluster primary keeps one limiter per name). */
const PER_CLIENT_PREFIX = 'oauth-token-client';
const PER_USER_PREFIX = 'oauth-token-user';

export class TokenLimits {
  private readonly perClient: Counter;
  private readonly perUser: Counter;

  constructor(store: Pick<LoginLimiter, 'counter'>, rate: OAuthTokenRate) {
    this.perClient = store.counter(PER_CLIENT_PREFIX, rate.perClient, rate.windowS);
    this.perUser = store.counter(PER_USER_PREFIX, rate.perUser, rate.windowS);
  }

  /** Counts one token request of `userId` through `clientId`; throws SlowDown beyond either limit. */
  async admit(clientId: string, userId: number): Promise<void> {
    const [client, user] = await Promise.all([
      this.perClient.count(`${userId}:${clientId}`),
      this.perUser.count(String(userId)),
    ]);
    if (client.allowed && user.allowed) return;
    const waitMs = Math.max(...[client, user].filter((c) => !c.allowed).map((c) => c.msBeforeNext));
    const retryAfterS = Math.max(1, Math.ceil(waitMs / 1000));
    throw new SlowDown(
      user.allowed
        ? `Too many token requests from this application for this user; retry in ${retryAfterS} s.`
        : `Too many token requests for this user; retry in ${retryAfterS} s.`,
      retryAfterS,
    );
  }
}
