// The applications that act for a user, as the user sees and ends them: the connected applications list
// and its revocation (the token page, src/tokens/pages/), and the end of every grant of a user (sign out
// everywhere, src/auth/revocation.ts).
import { recordEvent, withEvents, type Act } from '../auth/security-log.ts';
import type { Db } from '../store/database.ts';
import { liveAt } from '../auth/live.ts';
import { possibleClientId } from './repository.ts';

/** An application that can act for the user, as the connected applications list shows it. */
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
    .select((eb) => eb.fn.countAll<number>().as('n'))
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
        .select((eb) => ['client_id', eb.fn.max('created_at').as('at')])
        .where('user_id', '=', userId)
        .where('client_id', 'in', ids)
        .where(liveAt(table, now))
        .groupBy('client_id')
        .execute();
    };
    for (const found of [await latest('oauth_access_tokens'), await latest('oauth_refresh_tokens')])
      for (const r of found) lastIssued.set(r.client_id, Math.max(lastIssued.get(r.client_id) ?? 0, r.at));
  }
  const applications: ConnectedApplication[] = rows.map((r) => ({
    clientId: r.id,
    name: r.name,
    avatar: r.avatar,
    // no approval: a grant an operator made
    scope: r.scope ?? '',
    approvedAt: r.updated_at,
    lastUsedAt: lastIssued.get(r.id) ?? null,
  }));
  applications.sort((a, b) => a.name.localeCompare(b.name) || a.clientId.localeCompare(b.clientId));
  return { applications, total: counted.n };
}

/** The tables of what an application holds: the approvals, then the tokens and codes it obtained. */
const GRANT_TABLES = [
  'oauth_consents',
  'oauth_access_tokens',
  'oauth_refresh_tokens',
  'oauth_codes',
  'oauth_device_codes',
] as const;
type GrantTable = (typeof GRANT_TABLES)[number];

/** Deletes the rows of `tables` that the filter names (one user's with one application, or one application's). */
async function endGrants(
  trx: Db,
  tables: readonly GrantTable[],
  filter: { clientId: string; userId?: number },
): Promise<number> {
  let deleted = 0;
  for (const table of tables) {
    let query = trx.deleteFrom(table).where('client_id', '=', filter.clientId);
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
    deleted += Number((await query.executeTakeFirst()).numDeletedRows);
  }
  return deleted;
}

/**
 * Withdraws the user's approval of the application and ends every token and code it holds for the user
 * (the security log's `app.withdrawn`, published).
 */
export async function revokeApplication(
  db: Db,
  userId: number,
  clientId: string,
  act: Act,
): Promise<boolean> {
  if (!possibleClientId(clientId)) return false;
  return withEvents(db, act, async (trx) => {
    const deleted = await endGrants(trx, GRANT_TABLES, { clientId, userId });
    if (deleted > 0) await recordEvent(trx, act, { userId, kind: 'app.withdrawn', clientId, detail: 'user' });
    return deleted > 0;
  });
}

/**
 * Ends every token and unexchanged code the application holds, for every user (its secret was rotated
 * with "end its tokens"); with `approvals`, the users' approvals too (the application is being deleted).
 * Returns how many rows went.
 */
export function endGrantsOfApplication(trx: Db, clientId: string, approvals: boolean): Promise<number> {
  return endGrants(trx, approvals ? GRANT_TABLES : GRANT_TABLES.slice(1), { clientId });
}

/** Ends every OAuth grant of the user: access and refresh tokens, unexchanged codes, the approvals. */
export async function endGrantsOfUser(
  trx: Db,
  userId: number,
): Promise<{ oauthTokens: number; applications: number }> {
  let oauthTokens = 0;
  for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens'] as const) {
    const r = await trx.deleteFrom(table).where('user_id', '=', userId).executeTakeFirst();
    oauthTokens += Number(r.numDeletedRows);
  }
  await trx.deleteFrom('oauth_codes').where('user_id', '=', userId).execute();
  await trx.deleteFrom('oauth_device_codes').where('user_id', '=', userId).execute();
  const consents = await trx.deleteFrom('oauth_consents').where('user_id', '=', userId).executeTakeFirst();
  return { oauthTokens, applications: Number(consents.numDeletedRows) };
}
