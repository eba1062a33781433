// Token operations shared by the HTTP routes and the CLI. Results are discriminated unions; rows stay here.
import type { Db, Dialect } from '../store/database.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { isBanned, limit } from '../privileges.ts';
import { findUserById, findUserByUsername, type UserRow } from '../users/repository.ts';
import { LEGACY_PASSWORD_VERSION, type PasswordHasher } from '../users/passwords.ts';
import type { LoginLimiter } from './login-limiter.ts';
import { hashTokenSecret, newTokenSecret } from './secret.ts';
import { insertToken } from './repository.ts';

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

const MAX_SECRET_ATTEMPTS = 5;

export interface IssuedToken {
  id: number;
  secret: string;
}

/** Stores a new token under a fresh secret (retrying on the astronomically rare collision). */
export async function issueToken(
  db: Db,
  dialect: Dialect,
  token: {
    userId: number;
    privileges: number;
    description: string;
    private: boolean;
    now: number;
    /** Unix seconds; absent or null: never expires */
    expiresAt?: number | null;
  },
  newSecret: () => string = newTokenSecret,
): Promise<IssuedToken> {
  for (let attempt = 1; ; attempt++) {
    const secret = newSecret();
    try {
      const id = await insertToken(db, dialect, { ...token, tokenHash: hashTokenSecret(secret) });
      return { id, secret };
    } catch (err) {
      if (!isUniqueViolation(err) || attempt >= MAX_SECRET_ATTEMPTS) throw err;
    }
  }
}

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
  | { kind: 'created'; user: UserRow; token: IssuedToken; privileges: number; expiresAt?: number }
  | { kind: 'no-user' }
  | { kind: 'rate-limited'; retryAfterS: number }
  | { kind: 'legacy-password' }
  | { kind: 'wrong-password' }
  | { kind: 'banned'; user: UserRow };

export interface LoginDeps {
  db: Db;
  dialect: Dialect;
  passwords: PasswordHasher;
  loginLimiter: LoginLimiter;
}

/** Token creation's checks 3–8, in the spec's order (1 and 2 are the route's). */
export async function loginForToken(
  deps: LoginDeps,
  input: LoginInput,
  clientIp: string,
): Promise<LoginResult> {
  const user =
    input.id !== undefined && input.id !== 0
      ? await findUserById(deps.db, input.id)
      : await findUserByUsername(deps.db, input.username ?? '');
  if (!user) return { kind: 'no-user' };

  const decision = await deps.loginLimiter.attempt(user.id, clientIp);
  if (!decision.allowed) return { kind: 'rate-limited', retryAfterS: decision.retryAfterS };

  if (user.password_version === LEGACY_PASSWORD_VERSION) return { kind: 'legacy-password' };
  if (!(await deps.passwords.verify(input.password, user.password_hash))) return { kind: 'wrong-password' };
  if (isBanned(user.privileges)) return { kind: 'banned', user };

  const privileges = limit(input.privileges, user.privileges);
  const now = nowSeconds();
  const expiresAt = input.expiresIn === undefined ? undefined : now + input.expiresIn;
  const token = await issueToken(deps.db, deps.dialect, {
    userId: user.id,
    privileges,
    description: input.description,
    private: false,
    now,
    expiresAt,
  });
  return expiresAt === undefined
    ? { kind: 'created', user, token, privileges }
    : { kind: 'created', user, token, privileges, expiresAt };
}
