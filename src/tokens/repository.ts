// Tokens: plain functions over the database handle or a transaction.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../store/database.ts';
import { forUpdate } from '../store/sql-dialect.ts';
import { expiredAt, unexpiredAt } from '../auth/live.ts';
import type { TokenTable } from '../store/schema.ts';
import { isPossibleUserId } from '../users/repository.ts';
import { recordEvent, recordEvents, withEvents, type Act } from '../auth/security-log.ts';
import { TOKEN_PRIVILEGE_REQUIREMENTS, TokenPrivilege, type TokenPrivilegeName } from '../auth/privileges.ts';
import { SHA256_HEX_LENGTH } from '../auth/secret.ts';

export type TokenRow = Selectable<TokenTable>;
/** A listed token; `expires_at` is present only on tokens that expire. */
export type ListedToken = Pick<TokenRow, 'id' | 'privileges' | 'description' | 'last_updated'> & {
  expires_at?: number;
};

/** The user's public tokens unexpired at `now`: the rows a listing counts, in the listing index's order. */
const publicTokenIdsOf = (db: Db, userId: number, now: number) =>
  db
    .selectFrom('tokens')
    .select('id')
    .where('user_id', '=', userId)
    .where('private', '=', 0)
    .where(unexpiredAt('tokens', now));

/** The columns a listing shows. */
const LISTED = ['id', 'privileges', 'description', 'last_updated', 'expires_at'] as const;

/** The user's public tokens unexpired at `now`, with the columns a listing shows. */
const publicTokensOf = (db: Db, userId: number, now: number) =>
  db
    .selectFrom('tokens')
    .select(LISTED)
    .where('user_id', '=', userId)
    .where('private', '=', 0)
    .where(unexpiredAt('tokens', now));

/** A listed token: tokens without an expiry carry exactly the spec's four fields. */
function listed({
  expires_at,
  ...token
}: Pick<TokenRow, 'id' | 'privileges' | 'description' | 'last_updated' | 'expires_at'>): ListedToken {
  return expires_at === null ? token : { ...token, expires_at };
}

/**
 * From this offset on, a page skips its offset in the listing index alone and then reads its rows (a
 * deferred join): MySQL/MariaDB otherwise read the whole row of every skipped token. A user holds at most
 * TOKENS_PER_USER_MAX tokens, so the last page skips at most that many index entries, and costs about what
 * page 1 costs (bench scenario 4). Below it, the plain query is cheaper.
 */
const DEFERRED_JOIN_MIN_OFFSET = 200;

/**
 * A page of the user's public, unexpired tokens in id order: `limit` of them after skipping `offset`, and
 * only the token `id` when given (the list's `?id=`: a page of one or none).
 */
export async function listPublicTokens(
  db: Db,
  userId: number,
  limit: number,
  offset: number,
  now: number,
  id?: number,
): Promise<ListedToken[]> {
  if (id !== undefined) {
    const rows = await publicTokensOf(db, userId, now)
      .where('id', '=', id)
      .limit(limit)
      .offset(offset)
      .execute();
    return rows.map(listed);
  }
  if (offset < DEFERRED_JOIN_MIN_OFFSET) {
    const rows = await publicTokensOf(db, userId, now).orderBy('id').limit(limit).offset(offset).execute();
    return rows.map(listed);
  }
  const rows = await db
    .selectFrom('tokens as t')
    .innerJoin(
      publicTokenIdsOf(db, userId, now).orderBy('id').limit(limit).offset(offset).as('page'),
      (join) => join.onRef('page.id', '=', 't.id'),
    )
    .select(LISTED.map((column) => `t.${column}` as const))
    .orderBy('t.id')
    .execute();
  return rows.map(listed);
}

/** One unexpired public token of this user, or undefined (also when the id is someone else's). */
export async function findPublicTokenOfUser(
  db: Db,
  userId: number,
  tokenId: number,
  now: number,
): Promise<ListedToken | undefined> {
  const row = await publicTokensOf(db, userId, now).where('id', '=', tokenId).executeTakeFirst();
  return row && listed(row);
}

/** How the token page orders a user's tokens: by creation (id), or by last use, latest first, unused last. */
export type PageOrder = 'created' | 'last-used';

/** A public token as the token page shows it. */
export interface PageToken {
  id: number;
  privileges: number;
  description: string;
  last_updated: number;
  expires_at: number | null;
  /** null for a token made before tokend recorded creation times */
  created_at: number | null;
  /** no use of the token was ever written (see neverUsed) */
  never_used: boolean;
  /** the canonical client address of the latest use written; null: none recorded */
  last_address: string | null;
}

/**
 * The one rule for "never used": last_updated is the creation time until a use is written, so a token whose
 * last_updated still equals created_at was never used. A token without created_at is not known to be unused.
 */
const neverUsed = sql<number>`CASE WHEN created_at = last_updated THEN 1 ELSE 0 END`;

const pageTokensOf = (db: Db, userId: number, now: number) =>
  publicTokensOf(db, userId, now).select(['created_at', 'last_address', neverUsed.as('never_used')]);

/** A row as read: never_used as the 0 or 1 the SQL gives. */
const pageToken = ({
  never_used,
  ...row
}: Omit<PageToken, 'never_used'> & { never_used: number }): PageToken => ({
  ...row,
  never_used: never_used === 1,
  last_address: row.last_address ?? null,
});

/**
 * A page of the user's public, unexpired tokens for the token page, in `order`: by id, or by last use
 * (latest first, tokens never used after them, newest first among equals).
 */
export async function listPageTokens(
  db: Db,
  userId: number,
  page: { order: PageOrder; limit: number; offset: number; now: number },
): Promise<PageToken[]> {
  let query = pageTokensOf(db, userId, page.now);
  query =
    page.order === 'last-used'
      ? query.orderBy(neverUsed).orderBy('last_updated', 'desc').orderBy('id', 'desc')
      : query.orderBy('id');
  const rows = await query.limit(page.limit).offset(page.offset).execute();
  return rows.map(pageToken);
}

/** One unexpired public token of this user as the token page shows it, or undefined (someone else's too). */
export async function findPageToken(
  db: Db,
  userId: number,
  tokenId: number,
  now: number,
): Promise<PageToken | undefined> {
  const row = await pageTokensOf(db, userId, now).where('id', '=', tokenId).executeTakeFirst();
  return row && pageToken(row);
}

/**
 * Revokes one public token of this user (the API's revocation by id, the token page, regenerating), with
 * its `token.revoked` event (`reason`: by-id, page, regenerated); false when there is none with that id
 * (or it is someone else's).
 */
export function deletePublicTokenOfUser(
  db: Db,
  userId: number,
  tokenId: number,
  act: Act,
  reason: string,
): Promise<boolean> {
  return withEvents(db, act, async (trx) => {
    const result = await trx
      .deleteFrom('tokens')
      .where('id', '=', tokenId)
      .where('user_id', '=', userId)
      .where('private', '=', 0)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) return false;
    await recordEvent(trx, act, { userId, kind: 'token.revoked', tokenId, detail: reason });
    return true;
  });
}

/** Expired tokens per transaction of the sweep: their rows locked, deleted and announced together. */
export const EXPIRY_BATCH = 1000;

/**
 * Deletes every token that expired at or before `act.at`, a batch per transaction; returns how many.
 * Each API token's end is a `token.revoked` event (reason expiry) of its owner, recorded in the
 * transaction that deleted it and only there: the batch's rows are read locked (FOR UPDATE; on SQLite
 * the transaction holds the write lock), so a row read here is deleted here and by no other sweep (every
 * worker and every instance sweeps; one that waited for the lock finds the rows gone). An expired web
 * session's end is not logged.
 */
export async function deleteExpiredTokens(db: Db, act: Act): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await withEvents(db, act, async (trx) => {
      const rows = await forUpdate(
        trx,
        trx
          .selectFrom('tokens')
          .select(['id', 'user_id', 'session'])
          .where(expiredAt('tokens', act.at))
          .limit(EXPIRY_BATCH),
      ).execute();
      if (rows.length === 0) return 0;
      await trx
        .deleteFrom('tokens')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
      await recordEvents(
        trx,
        act,
        rows
          .filter((r) => r.session === 0)
          .map((r) => ({ userId: r.user_id, kind: 'token.revoked', tokenId: r.id, detail: 'expiry' })),
      );
      return rows.length;
    });
    total += deleted;
    if (deleted < EXPIRY_BATCH) return total;
  }
}

/**
 * The live public API tokens stored by the SHA-256 of their secret (web sessions and private tokens not
 * counted). In place on a Ripple-family database these are the ones an earlier tokend made before it
 * stored public tokens as the family does: they answer to tokend only (`tokend migrate` says how many).
 */
export async function countSha256PublicTokens(db: Db, now: number): Promise<number> {
  const row = await db
    .selectFrom('tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('private', '=', 0)
    .where('session', '=', 0)
    .where((eb) => eb(eb.fn('length', ['token_hash']), '=', SHA256_HEX_LENGTH))
    .where(unexpiredAt('tokens', now))
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Every token of a user, private ones too (for operators). */
export async function listAllTokensOfUser(
  db: Db,
  userId: number,
): Promise<
  Array<Omit<TokenRow, 'token_hash' | 'password_at' | 'created_at' | 'last_address' | 'password_fingerprint'>>
> {
  return db
    .selectFrom('tokens')
    .select([
      'id',
      'user_id',
      'privileges',
      'description',
      'private',
      'session',
      'last_updated',
      'expires_at',
    ])
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
}

/** limit(tokens.privileges, owner) as one SQL expression, generated from the privilege table. */
function limitExpression() {
  const terms = Object.entries(TOKEN_PRIVILEGE_REQUIREMENTS)
    .filter(([name]) => name !== 'Read') // never granted
    .map(([name, requires]) => {
      const bit = TokenPrivilege[name as TokenPrivilegeName];
      return sql`CASE WHEN (${sql.ref('tokens.privileges')} & ${sql.lit(bit)}) <> 0 AND (owner.privileges & ${sql.lit(requires)}) = ${sql.lit(requires)} THEN ${sql.lit(bit)} ELSE 0 END`;
    });
  // Tables and columns as references, never text: the in-place layout names the tables (src/store/ripple.ts).
  return sql<number>`(SELECT ${sql.join(terms, sql` + `)} FROM ${sql.table('users')} owner WHERE owner.id = ${sql.ref('tokens.user_id')})`;
}

export type FixScope = { kind: 'all' } | { kind: 'user'; userId: number };

/** What a fix run did: the rows it rewrote, and the UPDATE statements it ran for them. */
export interface FixResult {
  rows: number;
  statements: number;
}

/**
 * Tokens per statement when fixing every token: short write locks, bounded memory, and each statement far
 * inside the database's query timeout (ten times as many outlived it on PostgreSQL under load:
 * bench/HISTORY.md).
 */
const FIX_CHUNK = 10_000;

/**
 * Rewrites stored privileges to limit(stored, owner) for the tokens in scope; tokens already within
 * their owner's privileges are not written. Set-based: one statement per user; for every user, one per
 * FIX_CHUNK existing tokens, walked in id order from the last id of the previous chunk (keyset), so the
 * number of statements follows the number of tokens, never the spread of their ids.
 */
export async function fixTokenPrivileges(db: Db, scope: FixScope): Promise<FixResult> {
  const limited = limitExpression();
  const update = () =>
    db
      .updateTable('tokens')
      .set({ privileges: limited })
      .where(sql<boolean>`${sql.ref('tokens.privileges')} <> ${limited}`);
  if (scope.kind === 'user') {
    // no such user; never send an out-of-range id to SQL
    if (!isPossibleUserId(scope.userId)) return { rows: 0, statements: 0 };
    const r = await update().where('user_id', '=', scope.userId).executeTakeFirst();
    return { rows: Number(r.numUpdatedRows), statements: 1 };
  }
  const result: FixResult = { rows: 0, statements: 0 };
  for (let after: number | undefined; ;) {
    // The last id of the next chunk of existing tokens (a derived table: MySQL refuses LIMIT inside IN).
    let chunk = db.selectFrom('tokens').select('id').orderBy('id').limit(FIX_CHUNK);
    if (after !== undefined) chunk = chunk.where('id', '>', after);
    const bound = await db
      .selectFrom(chunk.as('chunk'))
      .select((eb) => eb.fn.max('chunk.id').as('last'))
      .executeTakeFirst();
    if (bound?.last === null || bound?.last === undefined) return result;
    const last = bound.last;
    let chunkUpdate = update().where('id', '<=', last);
    if (after !== undefined) chunkUpdate = chunkUpdate.where('id', '>', after);
    const r = await chunkUpdate.executeTakeFirst();
    result.rows += Number(r.numUpdatedRows);
    result.statements++;
    after = last;
  }
}
