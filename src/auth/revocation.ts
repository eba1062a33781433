// What ends which credentials, in one place. Every function here deletes rows in one transaction, so a
// credential it ends answers as unknown from the next request on, on every instance: each request looks
// its credential up in the database, and nothing is cached between requests.
import type { Db } from '../store/database.ts';
import { endSessionsOfUser } from './sessions.ts';

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
): Promise<SignOutEverywhereResult> {
  return db.transaction().execute(async (trx) => {
    const sessions = await endSessionsOfUser(trx, userId);
    const tokens = await trx.deleteFrom('tokens').where('user_id', '=', userId).executeTakeFirst();
    const grants = await endGrants(trx, userId);
    return { sessions, apiTokens: Number(tokens.numDeletedRows), ...grants };
  });
}

/** Stores a new password hash and ends every web session of the user, together. */
export async function changePassword(
  db: Db,
  userId: number,
  passwordHash: string,
  passwordVersion: number,
): Promise<{ sessionsEnded: number }> {
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('users')
      .set({ password_hash: passwordHash, password_version: passwordVersion })
      .where('id', '=', userId)
      .execute();
    return { sessionsEnded: await endSessionsOfUser(trx, userId) };
  });
}

export async function deleteTokenById(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('tokens').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
