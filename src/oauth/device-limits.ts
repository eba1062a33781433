// The device grant's rate limits, counted where the login limits count (Redis with REDIS_URL, the cluster
// primary with WORKERS > 1, else this process):
// - device authorizations started from one client address: DEVICE_STARTS_PER_ADDRESS per minute (429
//   slow_down beyond), so that one address cannot fill an application's waiting codes;
// - user codes entered on /device: USER_CODE_TRIES_PER_USER per minute for one signed-in user and
//   USER_CODE_TRIES_PER_ADDRESS per minute for one address. Every entry is counted before the code is
//   looked for, and one that finds its code is given back: only wrong (or expired) codes spend the
//   budget. There are 20⁸ = 2.56·10¹⁰ user codes: with 100 codes waiting on the whole server, one try
//   hits one with a chance of 3.9·10⁻⁹, and a guesser with one account at the limit (5 a minute, 2.6·10⁶
//   a year) hits about once a century; each further account needs its own sign-in, and each address
//   gives at most 10 tries a minute whatever the accounts.
import type { LoginLimiter } from '../auth/login-limiter.ts';
import type { Counted, Counter } from '../auth/login-counters.ts';
import { SlowDown } from './errors.ts';

export const DEVICE_STARTS_PER_ADDRESS = 20;
export const USER_CODE_TRIES_PER_USER = 5;
export const USER_CODE_TRIES_PER_ADDRESS = 10;
/** The window of the three limits, in seconds. */
export const DEVICE_LIMIT_WINDOW_S = 60;

const retryAfter = (counted: Counted): number => Math.max(1, Math.ceil(counted.msBeforeNext / 1000));

export type CodeTry = { allowed: true; found: () => Promise<void> } | { allowed: false; retryAfterS: number };

export class DeviceLimits {
  private readonly starts: Counter;
  private readonly perUser: Counter;
  private readonly perAddress: Counter;

  constructor(store: Pick<LoginLimiter, 'counter'>) {
    this.starts = store.counter('oauth-device-start', DEVICE_STARTS_PER_ADDRESS, DEVICE_LIMIT_WINDOW_S);
    this.perUser = store.counter('oauth-device-code-user', USER_CODE_TRIES_PER_USER, DEVICE_LIMIT_WINDOW_S);
    this.perAddress = store.counter(
      'oauth-device-code-address',
      USER_CODE_TRIES_PER_ADDRESS,
      DEVICE_LIMIT_WINDOW_S,
    );
  }

  /** Counts one device authorization from `address`; throws SlowDown beyond the limit. */
  async admitStart(address: string): Promise<void> {
    const counted = await this.starts.count(address);
    if (!counted.allowed)
      throw new SlowDown(
        `Too many device sign-ins started from this address; retry in ${retryAfter(counted)} s.`,
        retryAfter(counted),
      );
  }

  /**
   * Counts one user code entered by `userId` from `address`. When allowed, `found()` gives the try back
   * (the code was a live one): only wrong codes spend the budget.
   */
  async tryCode(userId: number, address: string): Promise<CodeTry> {
    const user = await this.perUser.count(String(userId));
    if (!user.allowed) return { allowed: false, retryAfterS: retryAfter(user) };
    const here = await this.perAddress.count(address);
    if (!here.allowed) {
      await this.perUser.giveBack(String(userId), user).catch(() => undefined);
      return { allowed: false, retryAfterS: retryAfter(here) };
    }
    return {
      allowed: true,
      found: async () => {
        await this.perUser.giveBack(String(userId), user).catch(() => undefined);
        await this.perAddress.giveBack(address, here).catch(() => undefined);
      },
    };
  }
}
