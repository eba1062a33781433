// The token endpoint's rate limits: token requests per user and application, and per user across every
// application, per window (OAUTH_TOKEN_RATE_LIMIT, OAUTH_TOKEN_USER_RATE_LIMIT, OAUTH_TOKEN_RATE_WINDOW_S).
// A request is counted only once it has proven it may act for its user: a code of this client, unused and
// unexpired, with its redirect_uri and code_verifier; or a live refresh token of this client. So whoever
// holds someone's code without its verifier (or an expired code or refresh token) cannot spend the user's
// budget; the code's own bound on attempts (CODE_ATTEMPTS_MAX, src/oauth/issue.ts) ends such a flood.
// A reused code or rotated refresh token revokes its grant before, uncounted. The client credentials grant
// (an application's own token, no user) is counted per application once its secret is checked, against
// OAUTH_TOKEN_RATE_LIMIT too, under a key of its own. Beyond either limit a
// request is refused with `slow_down` (HTTP 429, Retry-After) and issues nothing. The per-user count is
// asked only for a request its application's limit allowed, so a request refused for its application
// costs the user nothing: one application alone spends at most OAUTH_TOKEN_RATE_LIMIT of the user's
// budget per window of its own (twice that in one window of the user's at worst, the two windows not
// starting together), and cannot hold back the user's other applications.
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

  /**
   * Counts one token request of `userId` through `clientId`; throws SlowDown beyond either limit. The
   * per-user count only counts a request the per-application one allowed (above).
   */
  async admit(clientId: string, userId: number): Promise<void> {
    const client = await this.perClient.count(`${userId}:${clientId}`);
    if (!client.allowed)
      throw slowDown('Too many token requests from this application for this user', client.msBeforeNext);
    const user = await this.perUser.count(String(userId));
    if (!user.allowed) throw slowDown('Too many token requests for this user', user.msBeforeNext);
  }

  /**
   * Counts one client credentials request of the application `clientId` (it proved itself with its
   * secret, so no one else can spend this count): the per-application limit, under a key no user's count
   * shares. Throws SlowDown beyond it.
   */
  async admitApplication(clientId: string): Promise<void> {
    const own = await this.perClient.count(`app:${clientId}`);
    if (!own.allowed)
      throw slowDown('Too many client credentials requests from this application', own.msBeforeNext);
  }
}

function slowDown(what: string, waitMs: number): SlowDown {
  const retryAfterS = Math.max(1, Math.ceil(waitMs / 1000));
  return new SlowDown(`${what}; retry in ${retryAfterS} s.`, retryAfterS);
}
