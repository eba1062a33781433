// What ends which credentials, in one place. Every function here deletes rows in one transaction, so a
// credential it ends answers as unknown from the next request on, on every instance: each request looks
// its credential up in the database, and nothing is cached between requests.
import type { Db } from '../store/database.ts';
import { canMatchText } from '../store/text.ts';
import { liveAt } from './live.ts';
import { endSessionsOfUser } from './sessions.ts';

export interface SignOutEverywhereResult {
  sessions: number;
  apiTokens: number;
  oauthTokens: number;
  applications: number;
}

/**
 * Ends every web session, every API token (public and private), every OAuth grant (access and refresh
 * tokens, unexchanged codes, and the approvals themselves) of the user.
 */
export async function signOutEverywhere(db: Db, userId: number): Promise<SignOutEverywhereResult> {
  return db.transaction().execute(async (trx) => {
    const sessions = await endSessionsOfUser(trx, userId);
    const tokens = await trx.deleteFrom('tokens').where('user_id', '=', userId).executeTakeFirst();
    let oauthTokens = 0;
    for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens'] as const) {
      const r = await trx.deleteFrom(table).where('user_id', '=', userId).executeTakeFirst();
      oauthTokens += Number(r.numDeletedRows);
    }
    await trx.deleteFrom('oauth_codes').where('user_id', '=', userId).execute();
    const consents = await trx.deleteFrom('oauth_consents').where('user_id', '=', userId).executeTakeFirst();
    return {
      sessions,
      apiTokens: Number(tokens.numDeletedRows),
      oauthTokens,
      applications: Number(consents.numDeletedRows),
    };
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

export interface ConnectedApplication {
  clientId: string;
  name: string;
  avatar: string;
  /** the scopes the user approved (space-separated); '' for a grant an operator made without approval */
  scope: string;
  /** Unix seconds of the latest approval; null for an operator's grant */
  approvedAt: number | null;
  /**
   * Unix seconds when the application obtained the newest token it still holds for this user; null: it
   * holds none now. Ended and expired tokens are deleted, so null does not tell whether it ever had one
   * (an approval not yet used, or tokens all revoked, by reuse detection for one).
   */
  lastUsedAt: number | null;
}

/** No client id is longer than its column, 64 characters, or holds NUL (src/store/text.ts). */
const possibleClientId = (id: string): boolean => canMatchText(id, 64);

/**
 * The applications that can act for the user: those the user approved, and those holding a live token
 * for the user (an operator's `client token`), with when each obtained the newest token it still holds
 * (`lastUsedAt`). At most `max` of them, the first by name; `total` counts them all. Every query reads
 * one user's rows through an index, and the tokens it reads are those the grant bounds keep
 * (src/oauth/issue.ts). With `only`, just that application, if it can act for the user.
 */
export async function connectedApplications(
  db: Db,
  userId: number,
  now: number,
  max: number,
  only?: string,
): Promise<{ applications: ConnectedApplication[]; total: number }> {
  if (only !== undefined && !possibleClientId(only)) return { applications: [], total: 0 };
  const appIds = db
    .selectFrom('oauth_consents')
    .select('client_id')
    .where('user_id', '=', userId)
    .union(
      db
        .selectFrom('oauth_access_tokens')
        .select('client_id')
        .where('user_id', '=', userId)
        .where(liveAt('oauth_access_tokens', now)),
    )
    .union(
      db
        .selectFrom('oauth_refresh_tokens')
        .select('client_id')
        .where('user_id', '=', userId)
        .where(liveAt('oauth_refresh_tokens', now)),
    );
  const counted = await db
    .selectFrom(appIds.as('apps'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  const rows = await db
    .selectFrom(appIds.as('apps'))
    .innerJoin('oauth_clients as c', 'c.id', 'apps.client_id')
    .leftJoin('oauth_consents as a', (join) =>
      join.onRef('a.client_id', '=', 'c.id').on('a.user_id', '=', userId),
    )
    .select(['c.id', 'c.name', 'c.avatar', 'a.scope', 'a.updated_at'])
    .$if(only !== undefined, (q) => q.where('c.id', '=', only!))
    .orderBy('c.name')
    .orderBy('c.id')
    .limit(max)
    .execute();
  const ids = rows.map((r) => r.id);
  const lastIssued = new Map<string, number>();
  if (ids.length > 0) {
    const latest = (table: 'oauth_access_tokens' | 'oauth_refresh_tokens') => {
      return db
        .selectFrom(table)
        .select((eb) => ['client_id', eb.fn.max<number | string>('created_at').as('at')])
        .where('user_id', '=', userId)
        .where('client_id', 'in', ids)
        .where(liveAt(table, now))
        .groupBy('client_id')
        .execute();
    };
    for (const found of [await latest('oauth_access_tokens'), await latest('oauth_refresh_tokens')])
      for (const r of found)
        lastIssued.set(r.client_id, Math.max(lastIssued.get(r.client_id) ?? 0, Number(r.at)));
  }
  const applications: ConnectedApplication[] = rows.map((r) => ({
    clientId: r.id,
    name: r.name,
    avatar: r.avatar,
    // no approval: a grant an operator made
    scope: r.scope ?? '',
    approvedAt: r.updated_at === null ? null : Number(r.updated_at),
    lastUsedAt: lastIssued.get(r.id) ?? null,
  }));
  applications.sort((a, b) => a.name.localeCompare(b.name) || a.clientId.localeCompare(b.clientId));
  return { applications, total: Number(counted.n) };
}

/** Withdraws the user's approval of the application and ends every token and code it holds for the user. */
export async function revokeApplication(db: Db, userId: number, clientId: string): Promise<boolean> {
  if (!possibleClientId(clientId)) return false;
  return db.transaction().execute(async (trx) => {
    let deleted = 0;
    for (const table of [
      'oauth_consents',
      'oauth_access_tokens',
      'oauth_refresh_tokens',
      'oauth_codes',
    ] as const) {
      const r = await trx
        .deleteFrom(table)
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      deleted += Number(r.numDeletedRows);
    }
    return deleted > 0;
  });
}

export async function deleteTokenById(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('tokens').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
