// What a web session is, in one place. A session is the private token that a web sign-in made (its row
// has session = 1): nothing else is. An API token, a bearer token, an expired or ended session is not a
// session, whatever cookie it arrives in. A session carries no API privileges, lasts SESSION_TTL_S,
// and remembers when its password was last entered, for sudo mode.
import type { Db } from '../store/database.ts';
import { endOldestBeyond, mintSession } from './mint.ts';
import { recordEvent, withEvents, type Act } from './security-log.ts';

/** How long a web sign-in lasts. */
export const SESSION_TTL_S = 30 * 86_400;
/** Live sessions a user may have; a new sign-in beyond it ends the oldest (signing in never fails for it). */
export const SESSIONS_PER_USER_MAX = 100;

export interface Session {
  id: number;
  userId: number;
  username: string;
  /** the owner's user privileges, as stored now */
  userPrivileges: number;
  /** Unix seconds of the last password entry in this session; null: never (sudo mode is off) */
  passwordAt: number | null;
  /**
   * Unix seconds of the sign-in that opened this session (its row's created_at: OpenID Connect's
   * auth_time); null for a session from before tokend recorded it
   */
  signedInAt: number | null;
}

/**
 * Signs `user` in: a new session, whose password was entered at `act.at` (the security log's
 * `signin.succeeded`, by the new session); the oldest beyond the cap end. `user.password_hash` is the
 * stored hash the password was checked against: the session lasts only while it stays the stored one
 * (the credential core ends it when the password changes, whoever changes it).
 */
export async function startSession(
  db: Db,
  user: { id: number; password_hash: string },
  act: Act,
): Promise<{ id: number; secret: string }> {
  const now = act.at;
  const userId = user.id;
  const session = await mintSession(db, {
    userId,
    passwordHash: user.password_hash,
    now,
    expiresAt: now + SESSION_TTL_S,
  });
  await recordEvent(db, { ...act, by: session.id }, { userId, kind: 'signin.succeeded' });
  await endOldestBeyond(
    SESSIONS_PER_USER_MAX,
    async (offset, limit) =>
      (
        await db
          .selectFrom('tokens')
          .select('id')
          .where('user_id', '=', userId)
          .where('session', '=', 1)
          .orderBy('id', 'desc')
          .offset(offset)
          .limit(limit)
          .execute()
      ).map((r) => r.id),
    async (ids) =>
      Number((await db.deleteFrom('tokens').where('id', 'in', ids).executeTakeFirst()).numDeletedRows),
  );
  return session;
}

/** True while the session's last password entry is younger than `windowS` (0: never). */
export const inSudoMode = (session: Session, now: number, windowS: number): boolean =>
  session.passwordAt !== null && now - session.passwordAt < windowS;

/** The password was entered again in this session, at `act.at` (the security log's `sudo.confirmed`). */
export async function recordPasswordEntry(db: Db, session: Session, act: Act): Promise<void> {
  await db
    .updateTable('tokens')
    .set({ password_at: act.at })
    .where('id', '=', session.id)
    .where('session', '=', 1)
    .execute();
  await recordEvent(db, act, { userId: session.userId, kind: 'sudo.confirmed' });
}

/** Signs one session out (the security log's `session.ended`, published). */
export async function endSession(db: Db, session: Session, act: Act): Promise<void> {
  await withEvents(db, act, async (trx) => {
    const r = await trx
      .deleteFrom('tokens')
      .where('id', '=', session.id)
      .where('session', '=', 1)
      .executeTakeFirst();
    if (Number(r.numDeletedRows) > 0)
      await recordEvent(trx, act, { userId: session.userId, kind: 'session.ended', tokenId: session.id });
  });
}

/**
 * Ends a session found opened with a password its owner no longer has (the credential core, on its use).
 * It is deleted only while it still carries that fingerprint, and silently: the password change that
 * ended it is the event (tokend's own logs it; another program's is not tokend's to log).
 */
export async function endSessionOfOldPassword(db: Db, sessionId: number, fingerprint: string): Promise<void> {
  await db
    .deleteFrom('tokens')
    .where('id', '=', sessionId)
    .where('session', '=', 1)
    .where('password_fingerprint', '=', fingerprint)
    .execute();
}

/** Ends every session of the user; returns how many. */
export async function endSessionsOfUser(db: Db, userId: number): Promise<number> {
  const result = await db
    .deleteFrom('tokens')
    .where('user_id', '=', userId)
    .where('session', '=', 1)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
