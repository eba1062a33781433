// The one place where credentials that the tokens table holds are made: API tokens (their privileges are
// limit(requested, owner's current privileges), read here, never taken from the caller) and web sessions
// (private, no privileges). No other module inserts into the tokens table.
import type { Db, Dialect } from '../store/database.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { limit } from '../privileges.ts';
import { findUserById } from '../users/repository.ts';
import { hashTokenSecret, newTokenSecret } from '../tokens/secret.ts';
import { insertToken, type NewToken } from '../tokens/repository.ts';

const MAX_SECRET_ATTEMPTS = 5;

export interface MintedToken {
  id: number;
  /** shown once, to whoever asked for the token; only its hash is stored */
  secret: string;
  /** what the token was granted: limit(requested, owner) */
  privileges: number;
}

export interface TokenRequest {
  userId: number;
  /** the privileges asked for; the token gets limit(requested, owner's current privileges) */
  requested: number;
  description: string;
  private: boolean;
  now: number;
  /** Unix seconds; absent or null: never expires */
  expiresAt?: number | null;
}

/** The owner named by a token request does not exist (any more). */
export class NoSuchOwner extends Error {
  constructor(userId: number) {
    super(`no user with id ${userId}`);
    this.name = 'NoSuchOwner';
  }
}

/** Stores a row under a fresh secret, drawing again on the astronomically rare collision. */
async function insertWithFreshSecret(
  db: Db,
  dialect: Dialect,
  row: Omit<NewToken, 'tokenHash'>,
  newSecret: () => string,
): Promise<{ id: number; secret: string }> {
  for (let attempt = 1; ; attempt++) {
    const secret = newSecret();
    try {
      const id = await insertToken(db, dialect, { ...row, tokenHash: hashTokenSecret(secret) });
      return { id, secret };
    } catch (err) {
      if (!isUniqueViolation(err) || attempt >= MAX_SECRET_ATTEMPTS) throw err;
    }
  }
}

/** A new API token for `request.userId`, with limit(requested, the owner's privileges as stored now). */
export async function mintToken(
  db: Db,
  dialect: Dialect,
  request: TokenRequest,
  newSecret: () => string = newTokenSecret,
): Promise<MintedToken> {
  const owner = await findUserById(db, request.userId);
  if (!owner) throw new NoSuchOwner(request.userId);
  const privileges = limit(request.requested, owner.privileges);
  const { id, secret } = await insertWithFreshSecret(
    db,
    dialect,
    {
      userId: owner.id,
      privileges,
      description: request.description,
      private: request.private,
      now: request.now,
      expiresAt: request.expiresAt ?? null,
    },
    newSecret,
  );
  return { id, secret, privileges };
}

/** A new web session: private, no privileges, expiring at `expiresAt`, its password entered `now`. */
export async function mintSession(
  db: Db,
  dialect: Dialect,
  session: { userId: number; now: number; expiresAt: number },
  newSecret: () => string = newTokenSecret,
): Promise<{ id: number; secret: string }> {
  return insertWithFreshSecret(
    db,
    dialect,
    {
      userId: session.userId,
      privileges: 0,
      description: 'web session',
      private: true,
      now: session.now,
      expiresAt: session.expiresAt,
      session: { passwordAt: session.now },
    },
    newSecret,
  );
}
