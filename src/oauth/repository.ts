// OAuth storage: plain functions over the database handle or a transaction. Rows stay in src/oauth.
import type { Selectable } from '#kysely';
import type { Db } from '../store/database.ts';
import { upsert } from '../store/sql-dialect.ts';
import { isBanned } from '../auth/privileges.ts';
import { findUserById } from '../users/repository.ts';
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

export async function insertClient(db: Db, client: ClientRow): Promise<void> {
  await db.insertInto('oauth_clients').values(client).execute();
}

export async function findClientById(db: Db, id: string): Promise<ClientRow | undefined> {
  // No client id is that long or holds NUL (which PostgreSQL refuses in a text parameter): never send one.
  if (id.length > 64 || id.includes('\0')) return undefined;
  return db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listClientRows(db: Db): Promise<ClientRow[]> {
  return db.selectFrom('oauth_clients').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** Deletes the client; its codes, tokens and consents go with it (ON DELETE CASCADE). */
export async function deleteClientById(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('oauth_clients').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

// ---- authorization codes

export async function insertCode(db: Db, code: CodeRow): Promise<void> {
  await db.insertInto('oauth_codes').values(code).execute();
}

export async function findCodeByHash(db: Db, codeHash: string): Promise<CodeRow | undefined> {
  return db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
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

export async function findAccessTokenByHash(db: Db, tokenHash: string): Promise<AccessTokenRow | undefined> {
  return db
    .selectFrom('oauth_access_tokens')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
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

/** Marks the refresh token rotated; false when it already was. */
export async function claimRefreshToken(db: Db, id: number): Promise<boolean> {
  const result = await db
    .updateTable('oauth_refresh_tokens')
    .set({ used: 1 })
    .where('id', '=', id)
    .where('used', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteAccessTokenById(db: Db, id: number): Promise<void> {
  await db.deleteFrom('oauth_access_tokens').where('id', '=', id).execute();
}

/** Revokes the grant an access token descends from: that token, and every access and refresh token of its family. */
export async function revokeGrantOfAccessToken(db: Db, accessTokenId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('oauth_access_tokens')
      .select('family')
      .where('id', '=', accessTokenId)
      .executeTakeFirst();
    if (row) await revokeFamily(trx, row.family);
  });
}

/** Revokes every access and refresh token descended from one grant. */
export async function revokeFamily(db: Db, family: string): Promise<void> {
  await db.deleteFrom('oauth_access_tokens').where('family', '=', family).execute();
  await db.deleteFrom('oauth_refresh_tokens').where('family', '=', family).execute();
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

export async function saveConsent(
  db: Db,
  consent: { userId: number; clientId: string; scope: string; now: number },
): Promise<void> {
  await upsert(
    db,
    'oauth_consents',
    { user_id: consent.userId, client_id: consent.clientId, scope: consent.scope, updated_at: consent.now },
    ['user_id', 'client_id'],
    { scope: consent.scope, updated_at: consent.now },
  );
}

// ---- owners

/** True when the user is banned or gone: no grant may act for them. */
export async function ownerIsBanned(db: Db, userId: number): Promise<boolean> {
  const owner = await findUserById(db, userId);
  return owner === undefined || isBanned(Number(owner.privileges));
}

// ---- housekeeping

/**
 * Deletes rows that can never be used again: expired access tokens, codes and refresh tokens.
 * A used refresh token is kept until it expires, so that its reuse is still recognised and revokes the grant.
 */
export async function deleteExpiredOAuthRows(db: Db, now: number): Promise<number> {
  let deleted = 0;
  for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens', 'oauth_codes'] as const) {
    const result = await db.deleteFrom(table).where('expires_at', '<=', now).executeTakeFirst();
    deleted += Number(result.numDeletedRows);
  }
  return deleted;
}
