// OAuth storage: plain functions over the database handle or a transaction. Rows stay in src/oauth.
import { recordEvent, withEvents, type Act } from '../auth/security-log.ts';
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../store/database.ts';
import { forUpdate, upsert } from '../store/sql-dialect.ts';
import { deleteInBatches } from '../store/batches.ts';
import { canMatchText } from '../store/text.ts';
import { isBanned } from '../auth/privileges.ts';
import { expiredAt } from '../auth/live.ts';
import { findUserById } from '../users/repository.ts';
import { scopeNames } from '../auth/scope.ts';
import { formatScope } from './scopes.ts';
import type {
  OAuthAccessTokenTable,
  OAuthClientTable,
  OAuthCodeTable,
  OAuthRefreshTokenTable,
} from '../store/schema.ts';

export type ClientRow = Selectable<OAuthClientTable>;
export type CodeRow = Selectable<OAuthCodeTable>;
export type AccessTokenRow = Selectable<OAuthAccessTokenTable>;
export type RefreshTokenRow = Selectable<OAuthRefreshTokenTable>;

// ---- clients

/** Longest client id (the column's length). */
export const CLIENT_ID_MAX_LENGTH = 64;

/** Whether `id` can name a client: no longer than the column, no NUL (src/store/text.ts). */
export const possibleClientId = (id: string): boolean => canMatchText(id, CLIENT_ID_MAX_LENGTH);

export async function insertClient(db: Db, client: Insertable<OAuthClientTable>): Promise<void> {
  await db.insertInto('oauth_clients').values(client).execute();
}

export async function findClientById(db: Db, id: string): Promise<ClientRow | undefined> {
  if (!possibleClientId(id)) return undefined;
  return db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listClientRows(db: Db): Promise<ClientRow[]> {
  return db.selectFrom('oauth_clients').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** An owner's clients, oldest first (through the unique index on owner_id, name_key). */
export async function listClientRowsOfOwner(db: Db, ownerId: number): Promise<ClientRow[]> {
  return (
    db
      .selectFrom('oauth_clients')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .orderBy('created_at')
      // ids are random: within one second, by name, so that a listing reads the same each time
      .orderBy('name')
      .orderBy('id')
      .execute()
  );
}

/** How many clients the owner has registered. */
export async function countClientsOfOwner(db: Db, ownerId: number): Promise<number> {
  const row = await db
    .selectFrom('oauth_clients')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Whether the owner has a client whose name compares as `nameKey`, other than `except`. */
export async function ownerHasClientNamed(
  db: Db,
  ownerId: number,
  nameKey: string,
  except: string | undefined,
): Promise<boolean> {
  let query = db
    .selectFrom('oauth_clients')
    .select('id')
    .where('owner_id', '=', ownerId)
    .where('name_key', '=', nameKey);
  if (except !== undefined) query = query.where('id', '<>', except);
  return (await query.executeTakeFirst()) !== undefined;
}

/** Changes what the owner may change of a client: false when it has no such client. */
export async function updateClientRow(
  db: Db,
  id: string,
  ownerId: number,
  fields: Pick<ClientRow, 'name' | 'name_key' | 'avatar' | 'redirect_uris'>,
): Promise<boolean> {
  const result = await db
    .updateTable('oauth_clients')
    .set(fields)
    .where('id', '=', id)
    .where('owner_id', '=', ownerId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Replaces a confidential client's secret hash; false when there is no such confidential client. */
export async function replaceClientSecretHash(db: Db, id: string, secretHash: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_clients')
    .set({ secret_hash: secretHash })
    .where('id', '=', id)
    .where('secret_hash', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** How many users have approved each of these clients (those with none are left out). */
export async function consentCounts(db: Db, clientIds: readonly string[]): Promise<Map<string, number>> {
  if (clientIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('oauth_consents')
    .select((eb) => ['client_id', eb.fn.countAll<number>().as('n')])
    .where('client_id', 'in', clientIds)
    .groupBy('client_id')
    .execute();
  return new Map(rows.map((r) => [r.client_id, r.n]));
}

/** Deletes the client row (what it granted is ended first: src/oauth/applications.ts `endApplication`). */
export async function deleteClientById(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('oauth_clients').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

// ---- authorization codes

export type NewCode = Omit<CodeRow, 'attempts'>;

export async function insertCode(db: Db, code: NewCode): Promise<void> {
  await db
    .insertInto('oauth_codes')
    .values({ ...code, attempts: 0 })
    .execute();
}

export async function findCodeByHash(db: Db, codeHash: string): Promise<CodeRow | undefined> {
  return db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

/**
 * Takes one of the code's `max` attempts at its proof checks; false when they are all taken. One atomic
 * update, so requests racing each other never share an attempt.
 */
export async function takeCodeAttempt(db: Db, codeHash: string, max: number): Promise<boolean> {
  const result = await db
    .updateTable('oauth_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('code_hash', '=', codeHash)
    .where('attempts', '<', max)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks the code used; false when it already was (so exactly one exchange wins a race). */
export async function claimCode(db: Db, codeHash: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_codes')
    .set({ used: 1 })
    .where('code_hash', '=', codeHash)
    .where('used', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ---- access and refresh tokens

export type NewAccessToken = Omit<AccessTokenRow, 'id'>;
export type NewRefreshToken = Omit<RefreshTokenRow, 'id' | 'used'>;

export async function insertAccessToken(db: Db, token: NewAccessToken): Promise<void> {
  await db.insertInto('oauth_access_tokens').values(token).execute();
}

export async function insertRefreshToken(db: Db, token: NewRefreshToken): Promise<void> {
  await db
    .insertInto('oauth_refresh_tokens')
    .values({ ...token, used: 0 })
    .execute();
}

export async function findRefreshTokenByHash(
  db: Db,
  tokenHash: string,
): Promise<RefreshTokenRow | undefined> {
  return db
    .selectFrom('oauth_refresh_tokens')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/**
 * Marks the refresh token rotated, to be kept (for reuse detection) until `keepUntil`, which becomes its
 * expires_at; false when it already was rotated.
 */
export async function claimRefreshToken(db: Db, id: number, keepUntil: number): Promise<boolean> {
  const result = await db
    .updateTable('oauth_refresh_tokens')
    .set({ used: 1, expires_at: keepUntil })
    .where('id', '=', id)
    .where('used', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteAccessTokenById(db: Db, id: number): Promise<void> {
  await db.deleteFrom('oauth_access_tokens').where('id', '=', id).execute();
}

/**
 * Revokes the grant an access token descends from: that token, and every access and refresh token of its
 * family, in one transaction (the caller's, when `db` is one).
 */
export async function revokeGrantOfAccessToken(db: Db, accessTokenId: number): Promise<void> {
  const run = async (trx: Db) => {
    const row = await trx
      .selectFrom('oauth_access_tokens')
      .select('family')
      .where('id', '=', accessTokenId)
      .executeTakeFirst();
    if (row) await revokeFamily(trx, row.family);
  };
  await (db.isTransaction ? run(db) : db.transaction().execute(run));
}

/** Revokes every access and refresh token descended from one grant. */
export async function revokeFamily(db: Db, family: string): Promise<void> {
  await revokeFamilies(db, [family]);
}

/**
 * Revokes one grant of `userId` with `clientId` for `reason` (the client revoked its refresh token; a
 * code or rotated refresh token was presented again): the security log's `grant.revoked`, published.
 */
export async function revokeGrant(
  db: Db,
  grant: { family: string; userId: number; clientId: string },
  act: Act,
  reason: string,
): Promise<void> {
  await withEvents(db, act, async (trx) => {
    await revokeFamily(trx, grant.family);
    await recordEvent(trx, act, {
      userId: grant.userId,
      kind: 'grant.revoked',
      clientId: grant.clientId,
      detail: reason,
    });
  });
}

/** Revokes every access and refresh token descended from these grants; returns how many rows went. */
export async function revokeFamilies(db: Db, families: readonly string[]): Promise<number> {
  if (families.length === 0) return 0;
  const access = await db
    .deleteFrom('oauth_access_tokens')
    .where('family', 'in', families)
    .executeTakeFirst();
  const refresh = await db
    .deleteFrom('oauth_refresh_tokens')
    .where('family', 'in', families)
    .executeTakeFirst();
  return Number(access.numDeletedRows) + Number(refresh.numDeletedRows);
}

// ---- what the bounds read (src/oauth/issue.ts), newest first, through the indexes of migration 0012

/**
 * Locks the user's row until the transaction ends (PostgreSQL, MySQL; a SQLite transaction holds the one
 * write lock already): the grants of one user change one transaction at a time, so two of them never
 * end the same grant in opposite orders (a deadlock on MySQL).
 */
export async function lockUser(db: Db, userId: number): Promise<void> {
  await forUpdate(db, db.selectFrom('users').select('id').where('id', '=', userId)).execute();
}

/**
 * The grants (families) of the user's refresh tokens not yet rotated, by their latest rotation, newest
 * first; only those with `clientId` when given.
 */
export async function liveGrantFamilies(
  db: Db,
  userId: number,
  clientId: string | undefined,
  offset: number,
  limit: number,
): Promise<string[]> {
  let query = db
    .selectFrom('oauth_refresh_tokens')
    .select('family')
    .where('user_id', '=', userId)
    .where('used', '=', 0);
  if (clientId !== undefined) query = query.where('client_id', '=', clientId);
  const rows = await query.orderBy('id', 'desc').offset(offset).limit(limit).execute();
  return rows.map((r) => r.family);
}

/** Locks the client's row until the transaction ends, as lockUser does a user's (its own tokens' bound). */
export async function lockClient(db: Db, clientId: string): Promise<void> {
  await forUpdate(db, db.selectFrom('oauth_clients').select('id').where('id', '=', clientId)).execute();
}

/**
 * Access token ids, newest first: one grant's (`family`), or an application's own tokens (client
 * credentials: no user; through the (user_id, client_id) index).
 */
export async function accessTokenIdsNewestFirst(
  db: Db,
  of: { family: string } | { applicationOwn: string },
  offset: number,
  limit: number,
): Promise<number[]> {
  const query = db.selectFrom('oauth_access_tokens').select('id');
  const rows = await (
    'family' in of
      ? query.where('family', '=', of.family)
      : query.where('user_id', 'is', null).where('client_id', '=', of.applicationOwn)
  )
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

export async function deleteAccessTokens(db: Db, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db.deleteFrom('oauth_access_tokens').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * The user's codes not yet exchanged but `except`, newest first (codes of one second in no set order);
 * only those of `clientId` when given.
 */
export async function unexchangedCodes(
  db: Db,
  userId: number,
  clientId: string | undefined,
  except: string,
  offset: number,
  limit: number,
): Promise<string[]> {
  let query = db
    .selectFrom('oauth_codes')
    .select('code_hash')
    .where('user_id', '=', userId)
    .where('used', '=', 0)
    .where('code_hash', '<>', except);
  if (clientId !== undefined) query = query.where('client_id', '=', clientId);
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('code_hash', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  return rows.map((r) => r.code_hash);
}

export async function deleteCodes(db: Db, codeHashes: readonly string[]): Promise<number> {
  if (codeHashes.length === 0) return 0;
  const result = await db.deleteFrom('oauth_codes').where('code_hash', 'in', codeHashes).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// ---- consents

export async function findConsentScope(
  db: Db,
  userId: number,
  clientId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('oauth_consents')
    .select('scope')
    .where('user_id', '=', userId)
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return row?.scope;
}

/** Stores the user's approval of these scopes (the security log's `app.authorized`, at `act.at`). */
export async function saveConsent(
  db: Db,
  consent: { userId: number; clientId: string; scope: string },
  act: Act,
): Promise<void> {
  await storeApproval(db, consent, act.at);
  await recordEvent(db, act, {
    userId: consent.userId,
    kind: 'app.authorized',
    clientId: consent.clientId,
    detail: consent.scope,
  });
}

/** Stores the user's approval of the application for `scope` (replacing an earlier one), as of `at`. */
async function storeApproval(
  db: Db,
  approval: { userId: number; clientId: string; scope: string },
  at: number,
): Promise<void> {
  await upsert(
    db,
    'oauth_consents',
    { user_id: approval.userId, client_id: approval.clientId, scope: approval.scope, updated_at: at },
    ['user_id', 'client_id'],
    { scope: approval.scope, updated_at: at },
  );
}

/**
 * Adds `scopes` to what the user approved the application for (the device grant's approval on /device):
 * the connected applications list then shows it as the user's approval, with what it may do, from the
 * moment of the approval. The caller records its own event (device.approved).
 */
export async function addToApproval(
  db: Db,
  approval: { userId: number; clientId: string; scopes: readonly string[] },
  at: number,
): Promise<void> {
  const earlier = (await findConsentScope(db, approval.userId, approval.clientId)) ?? '';
  const scopes = new Set([...scopeNames(earlier), ...approval.scopes]);
  await storeApproval(
    db,
    { userId: approval.userId, clientId: approval.clientId, scope: formatScope([...scopes]) },
    at,
  );
}

// ---- owners

/** True when the user is banned or gone: no grant may act for them. */
export async function ownerIsBanned(db: Db, userId: number): Promise<boolean> {
  const owner = await findUserById(db, userId);
  return owner === undefined || isBanned(owner.privileges);
}

// ---- housekeeping

/**
 * Deletes rows that can never be used again, in batches found through each table's expires_at index:
 * expired access tokens, codes and refresh tokens. A rotated refresh token expires at the end of its
 * reuse window (SPENT_REFRESH_TOKEN_KEEP_S, src/oauth/issue.ts): until then, presenting it again is
 * recognised and revokes its grant.
 */
export async function deleteExpiredOAuthRows(db: Db, now: number): Promise<number> {
  let deleted = 0;
  for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens'] as const)
    deleted += await deleteInBatches(
      async (limit) =>
        (await db.selectFrom(table).select('id').where(expiredAt(table, now)).limit(limit).execute()).map(
          (r) => r.id,
        ),
      async (ids) =>
        Number((await db.deleteFrom(table).where('id', 'in', ids).executeTakeFirst()).numDeletedRows),
    );
  deleted += await deleteInBatches(
    async (limit) =>
      (
        await db
          .selectFrom('oauth_codes')
          .select('code_hash')
          .where(expiredAt('oauth_codes', now))
          .limit(limit)
          .execute()
      ).map((r) => r.code_hash),
    (hashes) => deleteCodes(db, hashes),
  );
  return deleted;
}
