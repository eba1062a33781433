// The one password check, in the order of the token creation rules (steps 3 to 7): find the user, count
// the attempt against the login limits, refuse a legacy password, compare the password, refuse a banned
// user. Token creation through the API, the web sign-in and sudo mode's password confirmation all call
// it; none of them orders these steps itself. An attempt the password queue refuses (503) or drops
// because its client went away had no password compared: its count is given back. A refused attempt on an
// existing account is the security log's `signin.failed` (why: password, banned, legacy, rate-limited),
// at most FAILED_SIGN_INS_PER_WINDOW of one address per window and FAILED_SIGN_INS_PER_ACCOUNT of one
// account (then one row counts the rest: recordFailedSignIn); a success is the event of what it
// leads to (the new session's sign-in, the API's new token, sudo mode's confirmation): one insert a login.
import type { Db } from '../store/database.ts';
import { isBanned } from '../auth/privileges.ts';
import { findUserById, findUserByUsername, type UserRow } from './repository.ts';
import {
  LEGACY_PASSWORD_VERSION,
  PasswordCheckAbandoned,
  PasswordQueueFull,
  type PasswordHasher,
} from './passwords.ts';
import type { LoginLimiter } from '../auth/login-limiter.ts';
import { recordFailedSignIn, type Act, type FailedSignIns } from '../auth/security-log.ts';

export interface PasswordLoginDeps {
  db: Db;
  passwords: PasswordHasher;
  loginLimiter: LoginLimiter;
  /** the cap on failed sign-ins logged per address (Services.failedSignIns) */
  failedSignIns: FailedSignIns;
}

/** Who is signing in: a non-zero id wins over the username (step 3). */
export type LoginName = { id: number } | { username: string };

export type PasswordLoginResult =
  | { kind: 'ok'; user: UserRow }
  | { kind: 'no-user' }
  | { kind: 'rate-limited'; retryAfterS: number }
  | { kind: 'legacy-password' }
  | { kind: 'wrong-password' }
  | { kind: 'banned'; user: UserRow }
  /** the password-check queue is full (or the client went away): try again in `retryAfterS` */
  | { kind: 'busy'; retryAfterS: number };

/** What a client is told to wait when the password-check queue is full. */
export const BUSY_RETRY_AFTER_S = 1;

/** The reason a refused attempt is logged with. */
const FAILURE_REASON = {
  'rate-limited': 'rate-limited',
  'legacy-password': 'legacy',
  'wrong-password': 'password',
  banned: 'banned',
} as const;

export async function checkPasswordLogin(
  deps: PasswordLoginDeps,
  who: LoginName,
  password: string,
  /** the request: its address (canonical) counts against the login limits; refusals are logged by it */
  act: Act,
  /** true once the client has gone away: its check is then dropped before it runs */
  abandoned?: () => boolean,
): Promise<PasswordLoginResult> {
  const user =
    'id' in who ? await findUserById(deps.db, who.id) : await findUserByUsername(deps.db, who.username);
  if (!user) return { kind: 'no-user' };
  const result = await checkPassword(deps, user, password, act.address ?? 'unknown', abandoned);
  if (result.kind in FAILURE_REASON) {
    const reason = FAILURE_REASON[result.kind as keyof typeof FAILURE_REASON];
    const detail = deps.failedSignIns.admit(act.address ?? 'unknown', act.at, reason);
    if (detail !== undefined) await recordFailedSignIn(deps.db, act, user.id, detail);
  }
  return result;
}

async function checkPassword(
  deps: PasswordLoginDeps,
  user: UserRow,
  password: string,
  clientIp: string,
  abandoned: (() => boolean) | undefined,
): Promise<PasswordLoginResult> {
  const decision = await deps.loginLimiter.attempt(user.id, clientIp);
  if (!decision.allowed) return { kind: 'rate-limited', retryAfterS: decision.retryAfterS };
  if (user.password_version === LEGACY_PASSWORD_VERSION) return { kind: 'legacy-password' };
  let matches: boolean;
  try {
    // Checks wait in line by address, ranked by its attempts and the account's: a flood, from one
    // address or many against one account, cannot starve quieter addresses.
    matches = await deps.passwords.verify(password, user.password_hash, {
      abandoned,
      key: clientIp,
      rank: decision.rank,
    });
  } catch (err) {
    if (err instanceof PasswordQueueFull || err instanceof PasswordCheckAbandoned) {
      // No password was compared: the attempt costs neither login budget (it still ranks the address
      // and the account).
      await decision.giveBack();
      return { kind: 'busy', retryAfterS: BUSY_RETRY_AFTER_S };
    }
    throw err;
  }
  if (!matches) return { kind: 'wrong-password' };
  if (isBanned(user.privileges)) return { kind: 'banned', user };
  return { kind: 'ok', user };
}
