// Signing in through the web: the same checks and rate limit as token creation, ending in a private
// token that becomes the `rt` cookie.
import type { Db, Dialect } from '../store/database.ts';
import { isBanned } from '../privileges.ts';
import { findUserByUsername } from '../users/repository.ts';
import { LEGACY_PASSWORD_VERSION, type PasswordHasher } from '../users/passwords.ts';
import type { LoginLimiter } from '../tokens/login-limiter.ts';
import { issueToken, nowSeconds } from '../tokens/service.ts';

export interface WebLoginDeps {
  db: Db;
  dialect: Dialect;
  passwords: PasswordHasher;
  loginLimiter: LoginLimiter;
}

export type WebLoginResult =
  | { kind: 'signed-in'; secret: string; userId: number }
  | { kind: 'bad-credentials' }
  | { kind: 'rate-limited'; retryAfterS: number }
  | { kind: 'legacy-password' }
  | { kind: 'banned' };

/** The session token carries no privileges: it identifies the user to this site's own pages. */
const SESSION_PRIVILEGES = 0;

/** How long a web sign-in lasts; the token then expires and the sweep removes it. */
export const WEB_SESSION_TTL_S = 30 * 86_400;

export async function webLogin(
  deps: WebLoginDeps,
  input: { username: string; password: string },
  clientIp: string,
): Promise<WebLoginResult> {
  const user = await findUserByUsername(deps.db, input.username);
  if (!user) return { kind: 'bad-credentials' };
  const decision = await deps.loginLimiter.attempt(user.id, clientIp);
  if (!decision.allowed) return { kind: 'rate-limited', retryAfterS: decision.retryAfterS };
  if (user.password_version === LEGACY_PASSWORD_VERSION) return { kind: 'legacy-password' };
  if (!(await deps.passwords.verify(input.password, user.password_hash))) return { kind: 'bad-credentials' };
  if (isBanned(user.privileges)) return { kind: 'banned' };
  const now = nowSeconds();
  const token = await issueToken(deps.db, deps.dialect, {
    userId: user.id,
    privileges: SESSION_PRIVILEGES,
    description: 'web login',
    private: true,
    now,
    expiresAt: now + WEB_SESSION_TTL_S,
  });
  return { kind: 'signed-in', secret: token.secret, userId: user.id };
}
