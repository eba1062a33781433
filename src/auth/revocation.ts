// What ends which credentials, in one place. Every function here deletes rows in one transaction, so a
// credential it ends answers as unknown from the next request on, on every instance: each request looks
// its credential up in the database, and nothing is cached between requests. Each records its event in
// the security log in that transaction, which publishes it for the rest of the server once it has
// committed (withEvents, src/auth/security-log.ts).
import type { Db } from '../store/database.ts';
import { endSessionsOfUser } from './sessions.ts';
import { recordEvent, withEvents, type Act } from './security-log.ts';

export interface SignOutEverywhereResult {
  sessions: number;
  apiTokens: number;
  oauthTokens: number;
  applications: number;
}

/** Ends every OAuth grant of a user (src/oauth/applications.ts endGrantsOfUser), inside a transaction. */
export type EndGrantsOfUser = (
  trx: Db,
  userId: number,
) => Promise<{ oauthTokens: number; applications: number }>;

/**
 * Ends every web session, every API token (public and private), every OAuth grant (access and refresh
 * tokens, unexchanged codes, and the approvals themselves: `endGrants`) of the user, in one transaction.
 */
export async function signOutEverywhere(
  db: Db,
  userId: number,
  endGrants: EndGrantsOfUser,
  act: Act,
): Promise<SignOutEverywhereResult> {
  return withEvents(db, act, async (trx) => {
    // The API tokens' ids, for the published event: a subscriber may hold sockets keyed by token.
    const tokenIds = (
      await trx
        .selectFrom('tokens')
        .select('id')
        .where('user_id', '=', userId)
        .where('session', '=', 0)
        .execute()
    ).map((r) => r.id);
    const sessions = await endSessionsOfUser(trx, userId);
    const tokens = await trx.deleteFrom('tokens').where('user_id', '=', userId).executeTakeFirst();
    const grants = await endGrants(trx, userId);
    const ended = { sessions, apiTokens: Number(tokens.numDeletedRows), ...grants };
    await recordEvent(trx, act, {
      userId,
      kind: 'signout.everywhere',
      tokenIds,
      detail:
        `${ended.sessions} sessions, ${ended.apiTokens} API tokens, ${ended.oauthTokens} OAuth tokens, ` +
        `${ended.applications} applications`,
    });
    return ended;
  });
}

/** Stores a new password hash and ends every web session of the user, together. */
export async function changePassword(
  db: Db,
  userId: number,
  passwordHash: string,
  passwordVersion: number,
  act: Act,
): Promise<{ sessionsEnded: number }> {
  return withEvents(db, act, async (trx) => {
    await trx
      .updateTable('users')
      .set({ password_hash: passwordHash, password_version: passwordVersion })
      .where('id', '=', userId)
      .execute();
    const sessionsEnded = await endSessionsOfUser(trx, userId);
    await recordEvent(trx, act, {
      userId,
      kind: 'password.changed',
      detail: `${sessionsEnded} sessions ended`,
    });
    return { sessionsEnded };
  });
}

/**
 * Revokes one token (API token or session) by id, whoever owns it: `reason` says why (the token
 * deleting itself, an operator). False when there is none.
 */
export async function deleteTokenById(db: Db, id: number, act: Act, reason: string): Promise<boolean> {
  return withEvents(db, act, async (trx) => {
    const row = await trx.selectFrom('tokens').select('user_id').where('id', '=', id).executeTakeFirst();
    if (!row) return false;
    const result = await trx.deleteFrom('tokens').where('id', '=', id).executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) return false;
    await recordEvent(trx, act, { userId: row.user_id, kind: 'token.revoked', tokenId: id, detail: reason });
    return true;
  });
}
