// The one place where credentials that the tokens table holds are made: API tokens (their privileges are
// limit(requested, owner's current privileges), read here, never taken from the caller) and web sessions
// (private, no privileges), each stored in the form storedSecretHash (secret.ts) gives it: in place on a
// Ripple-family database a public API token as the family stores its own (MD5 hex), anything else as
// SHA-256. No other module inserts into the tokens table. Here too is the rule for how many live
// credentials of one kind an owner may hold: beyond the bound, the oldest end (endOldestBeyond).
import { sql } from 'kysely';
import type { Db, StoreLayout } from '../store/database.ts';
import { forUpdate, insertReturningId } from '../store/sql-dialect.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { deleteInBatches } from '../store/batches.ts';
import { unexpiredAt } from './live.ts';
import { limit } from './privileges.ts';
import { hashTokenSecret, newTokenSecret, passwordFingerprint, storedSecretHash } from './secret.ts';
import { recordEvent, type Act } from './security-log.ts';

const MAX_SECRET_ATTEMPTS = 5;

export interface NewToken {
  userId: number;
  privileges: number;
  description: string;
  tokenHash: string;
  private: boolean;
  now: number;
  /** Unix seconds; absent or null: never expires */
  expiresAt?: number | null;
  /**
   * a web session (see src/auth/sessions.ts): private, no privileges, with the time of its password entry
   * and the fingerprint of the password it was opened with (passwordFingerprint)
   */
  session?: { passwordAt: number; passwordFingerprint: string };
}

export async function insertToken(db: Db, token: NewToken): Promise<number> {
  return insertReturningId(db, 'tokens', {
    user_id: token.userId,
    privileges: token.privileges,
    description: token.description,
    token_hash: token.tokenHash,
    private: token.private ? 1 : 0,
    last_updated: token.now,
    created_at: token.now,
    expires_at: token.expiresAt ?? null,
    session: token.session ? 1 : 0,
    password_at: token.session?.passwordAt ?? null,
    ...(token.session && { password_fingerprint: token.session.passwordFingerprint }),
  });
}

export interface MintedToken {
  id: number;
  /** shown once, to whoever asked for the token; only its hash is stored */
  secret: string;
  /** what the token was granted: limit(requested, owner) */
  privileges: number;
}

export interface TokenRequest {
  /**
   * The tables the token goes into (the store's layout): in place on a Ripple-family database a public
   * token is stored as the family stores its tokens (storedSecretHash), so the family's API accepts it.
   */
  layout: StoreLayout;
  userId: number;
  /** the privileges asked for; the token gets limit(requested, owner's current privileges) */
  requested: number;
  description: string;
  private: boolean;
  now: number;
  /** Unix seconds; absent or null: never expires */
  expiresAt?: number | null;
  /**
   * TOKENS_PER_USER_MAX: the owner's live API tokens (public and private; not expired ones, not web
   * sessions) may not exceed it; 'none' only for an operator's explicit override (`--force`).
   */
  cap: number | 'none';
  /** who asked, how and from where: the security log's `token.created` event (in the same transaction) */
  act: Act;
  /** the event's detail (e.g. that it replaced a regenerated token) */
  detail?: string;
}

/** The owner already holds `max` live API tokens: nothing was stored. */
export class TokenCapReached extends Error {
  readonly max: number;
  constructor(max: number) {
    super(`the user already holds ${max} live API tokens, the most TOKENS_PER_USER_MAX allows`);
    this.name = 'TokenCapReached';
    this.max = max;
  }
}

/** The owner named by a token request does not exist (any more). */
export class NoSuchOwner extends Error {
  constructor(userId: number) {
    super(`no user with id ${userId}`);
    this.name = 'NoSuchOwner';
  }
}

/** Every secret drawn for one credential was already stored: nothing was. */
export class SecretCollisions extends Error {
  constructor() {
    super(`${MAX_SECRET_ATTEMPTS} new secrets in a row were already stored; is the random source broken?`);
    this.name = 'SecretCollisions';
  }
}

/** Whether a row with this stored form of a secret exists (through the `token_hash` index). */
const secretStored = async (db: Db, tokenHash: string): Promise<boolean> =>
  (await db.selectFrom('tokens').select('id').where('token_hash', '=', tokenHash).limit(1).execute()).length >
  0;

/**
 * Stores a row under a fresh secret (stored as `hashOf` gives it), drawing again on the astronomically rare
 * collision: a secret already stored is looked for first (a Ripple-family database's `token` column has
 * no unique index), and tokend's own unique index refuses one stored meanwhile.
 */
async function insertWithFreshSecret(
  db: Db,
  row: Omit<NewToken, 'tokenHash'>,
  newSecret: () => string,
  hashOf: (secret: string) => string,
): Promise<{ id: number; secret: string }> {
  for (let attempt = 1; attempt <= MAX_SECRET_ATTEMPTS; attempt++) {
    const secret = newSecret();
    const tokenHash = hashOf(secret);
    if (await secretStored(db, tokenHash)) continue;
    // Inside a transaction a failed insert would abort it on PostgreSQL: a savepoint keeps the rest.
    if (db.isTransaction) await sql`SAVEPOINT mint_secret`.execute(db);
    try {
      const id = await insertToken(db, { ...row, tokenHash });
      if (db.isTransaction) await sql`RELEASE SAVEPOINT mint_secret`.execute(db);
      return { id, secret };
    } catch (err) {
      if (db.isTransaction) await sql`ROLLBACK TO SAVEPOINT mint_secret`.execute(db);
      if (!isUniqueViolation(err)) throw err;
    }
  }
  throw new SecretCollisions();
}

/** A new API token for `request.userId`, with limit(requested, the owner's privileges as stored now). */
export async function mintToken(
  db: Db,
  request: TokenRequest,
  newSecret: () => string = newTokenSecret,
): Promise<MintedToken> {
  // One transaction that first locks the owner's row: concurrent creations for one user count in turn,
  // so none of them passes the cap on a count that another is about to change.
  const inTransaction = async (trx: Db): Promise<MintedToken> => {
    const owner = await forUpdate(
      trx,
      trx.selectFrom('users').select('privileges').where('id', '=', request.userId),
    ).executeTakeFirst();
    if (!owner) throw new NoSuchOwner(request.userId);
    if (request.cap !== 'none' && (await countLiveApiTokens(trx, request.userId, request.now)) >= request.cap)
      throw new TokenCapReached(request.cap);
    const privileges = limit(request.requested, owner.privileges);
    const { id, secret } = await insertWithFreshSecret(
      trx,
      {
        userId: request.userId,
        privileges,
        description: request.description,
        private: request.private,
        now: request.now,
        expiresAt: request.expiresAt ?? null,
      },
      newSecret,
      storedSecretHash(request.layout, { private: request.private }),
    );
    await recordEvent(trx, request.act, {
      userId: request.userId,
      kind: 'token.created',
      tokenId: id,
      detail: request.detail ?? null,
    });
    return { id, secret, privileges };
  };
  return db.isTransaction ? inTransaction(db) : db.transaction().execute(inTransaction);
}

/** The user's API tokens that still authenticate at `now` (web sessions not counted). */
export async function countLiveApiTokens(db: Db, userId: number, now: number): Promise<number> {
  const row = await db
    .selectFrom('tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('session', '=', 0)
    .where(unexpiredAt('tokens', now))
    .executeTakeFirstOrThrow();
  return row.n;
}

/**
 * A new web session: private, no privileges, expiring at `expiresAt`, its password entered `now`; it
 * remembers the fingerprint of `passwordHash`, the owner's stored hash the password was checked against.
 * Stored as SHA-256 in every schema: a form the Ripple family's programs never match.
 */
export async function mintSession(
  db: Db,
  session: { userId: number; passwordHash: string; now: number; expiresAt: number },
  newSecret: () => string = newTokenSecret,
): Promise<{ id: number; secret: string }> {
  return insertWithFreshSecret(
    db,
    {
      userId: session.userId,
      privileges: 0,
      description: 'web session',
      private: true,
      now: session.now,
      expiresAt: session.expiresAt,
      session: { passwordAt: session.now, passwordFingerprint: passwordFingerprint(session.passwordHash) },
    },
    newSecret,
    hashTokenSecret,
  );
}

/**
 * The bound on live credentials of one kind (web sessions of a user; an OAuth user's grants, per
 * application and in all; a grant's access tokens): a new one never fails for it, the oldest end instead.
 * `newestFirst(offset, limit)` reads the keys of the bounded rows, newest first (through an index, so that
 * skipping `max` of them stays cheap); `end` ends the credentials of those keys and returns how many rows
 * went. Everything after the newest `max` ends, expired rows too. Returns how many rows ended.
 */
export function endOldestBeyond<K>(
  max: number,
  newestFirst: (offset: number, limit: number) => Promise<K[]>,
  end: (keys: K[]) => Promise<number>,
): Promise<number> {
  return deleteInBatches((limit) => newestFirst(max, limit), end);
}
