// Token creation through the API: the password check (src/users/password-login.ts), then minting
// (src/auth/mint.ts). Results are discriminated unions; rows stay below.
import type { Db, StoreLayout } from '../store/database.ts';
import type { UserRow } from '../users/repository.ts';
import type { PasswordHasher } from '../users/passwords.ts';
import type { LoginLimiter } from '../auth/login-limiter.ts';
import { checkPasswordLogin } from '../users/password-login.ts';
import { TokenCapReached, mintToken, type MintedToken } from '../auth/mint.ts';
import type { Clock } from '../auth/clock.ts';
import type { Act, FailedSignIns } from '../auth/security-log.ts';
import type { TokenCreationLimit } from '../auth/creation-limit.ts';

export interface LoginInput {
  username: string | undefined;
  id: number | undefined;
  password: string;
  privileges: number;
  description: string;
  /** Seconds until the token expires; absent: never */
  expiresIn?: number;
}

export type LoginResult =
  | { kind: 'created'; user: UserRow; token: MintedToken; privileges: number; expiresAt?: number }
  | { kind: 'no-user' }
  | { kind: 'rate-limited'; retryAfterS: number }
  | { kind: 'legacy-password' }
  | { kind: 'wrong-password' }
  | { kind: 'banned'; user: UserRow }
  | { kind: 'too-many-tokens'; max: number }
  /** the user made TOKEN_CREATE_RATE_LIMIT tokens this window: try again in `retryAfterS` */
  | { kind: 'too-many-created'; retryAfterS: number }
  | { kind: 'busy'; retryAfterS: number };

export interface LoginDeps {
  db: Db;
  /** the store's layout: how mintToken stores the token (src/auth/secret.ts storedSecretHash) */
  layout: StoreLayout;
  passwords: PasswordHasher;
  loginLimiter: LoginLimiter;
  /** TOKENS_PER_USER_MAX */
  tokensPerUserMax: number;
  /** the app's clock: the token's creation and expiry */
  clock: Clock;
  failedSignIns: FailedSignIns;
  tokenCreation: Pick<TokenCreationLimit, 'admit'>;
}

/**
 * Token creation's checks 3–8, in the spec's order (1 and 2 are the route's); after 7, the bound on tokens
 * made per window (429) and the token cap (409).
 */
export async function loginForToken(
  deps: LoginDeps,
  input: LoginInput,
  /** the request (means api): its address, user agent and the time read before the check */
  act: Act,
  abandoned?: () => boolean,
): Promise<LoginResult> {
  const who =
    input.id !== undefined && input.id !== 0 ? { id: input.id } : { username: input.username ?? '' };
  const checked = await checkPasswordLogin(deps, who, input.password, act, abandoned);
  if (checked.kind !== 'ok') return checked;
  const user = checked.user;
  // The user's bound on tokens made per window, counted once the password proved it is them.
  const wait = await deps.tokenCreation.admit(user.id);
  if (wait !== undefined) return { kind: 'too-many-created', retryAfterS: wait };
  // The token is made when the check ends (which may have waited in the password queue).
  const now = deps.clock();
  const expiresAt = input.expiresIn === undefined ? undefined : now + input.expiresIn;
  let token: MintedToken;
  try {
    token = await mintToken(deps.db, {
      layout: deps.layout,
      userId: user.id,
      requested: input.privileges,
      description: input.description,
      private: false,
      now,
      expiresAt,
      cap: deps.tokensPerUserMax,
      act: { ...act, at: now },
      detail: 'password',
    });
  } catch (err) {
    if (err instanceof TokenCapReached) return { kind: 'too-many-tokens', max: err.max };
    throw err;
  }
  const privileges = token.privileges;
  return expiresAt === undefined
    ? { kind: 'created', user, token, privileges }
    : { kind: 'created', user, token, privileges, expiresAt };
}
