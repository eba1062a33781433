// Tokens: plain functions over the database handle or a transaction.
import DataLoader from 'dataloader';
import { sql, type Selectable } from 'kysely';
import type { Db, Dialect, Store } from '../store/database.ts';
import type { TokenTable } from '../store/schema.ts';
import { isPossibleUserId } from '../users/repository.ts';
import { hashTokenSecret, legacyTokenHash } from './secret.ts';
import { TOKEN_PRIVILEGE_REQUIREMENTS, TokenPrivilege, type TokenPrivilegeName } from '../privileges.ts';

/** Longest token description, in UTF-16 code units (JavaScript string length). */
export const MAX_DESCRIPTION_LENGTH = 1024;

export type TokenRow = Selectable<TokenTable>;
/** A listed token; `expires_at` is present only on tokens that expire. */
export type ListedToken = Pick<TokenRow, 'id' | 'privileges' | 'description' | 'last_updated'> & {
  expires_at?: number;
};

export interface NewToken {
  userId: number;
  privileges: number;
  description: string;
  tokenHash: string;
  private: boolean;
  now: number;
  /** Unix seconds; absent or null: never expires */
  expiresAt?: number | null;
  /** a web session (see src/auth/sessions.ts): private, no privileges, with the time of its password entry */
  session?: { passwordAt: number };
}

export async function insertToken(db: Db, dialect: Dialect, token: NewToken): Promise<number> {
  const values = {
    user_id: token.userId,
    privileges: token.privileges,
    description: token.description,
    token_hash: token.tokenHash,
    private: token.private ? 1 : 0,
    last_updated: token.now,
    expires_at: token.expiresAt ?? null,
    session: token.session ? 1 : 0,
    password_at: token.session?.passwordAt ?? null,
  };
  if (dialect === 'mysql') {
    const result = await db.insertInto('tokens').values(values).executeTakeFirstOrThrow();
    return Number(result.insertId);
  }
  const row = await db.insertInto('tokens').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** A token joined with its owner's current privileges: what the per-request check needs, in one query. */
export interface TokenWithOwner {
  id: number;
  user_id: number;
  privileges: number;
  description: string;
  last_updated: number;
  user_privileges: number;
}

/** Most credentials one lookup query carries (see tokenLookup). */
export const LOOKUP_BATCH_MAX = 64;

type LookupStore = Pick<Store, 'db' | 'dialect' | 'hotQuery'>;
type Lookup = (secret: string) => Promise<TokenWithOwner | undefined>;

/**
 * The hot-path lookup: the token with this secret joined with its owner, in one indexed query compiled
 * once (Store.hotQuery), so no query building happens per request. An expired token is not found (same
 * query, via the unique index on token_hash), so it stops authenticating the moment it expires.
 *
 * The query looks for both stored forms of each secret: its SHA-256 hash, and the legacy MD5 form of
 * tokens brought over from a Ripple-family database (secret.ts). A token found by its MD5 form gets its
 * SHA-256 hash stored there and then, before it is answered, so the weak hash is gone after one use.
 *
 * The lookups that concurrent requests start in one turn of the event loop share one query (DataLoader,
 * no cache: every request still reads the database, after it arrived). On a database server that is
 * one round trip and one execution for the batch; on SQLite one read transaction instead of one per
 * request, and the requests of a turn are answered together, after their reads, instead of each
 * answer being written (and waking its client) before the next request is read. Under load that
 * halved tokend's CPU per authenticated read on SQLite (bench/README.md, tuning log).
 */
export function tokenLookup(store: LookupStore): Lookup {
  // Parameters in the order of the WHEREs: the current time, then the hash or hashes.
  const byHashes = store.db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .select([
      'tokens.id',
      'tokens.user_id',
      'tokens.privileges',
      'tokens.description',
      'tokens.last_updated',
      'users.privileges as user_privileges',
      'tokens.token_hash',
    ])
    .where((eb) => eb.or([eb('tokens.expires_at', 'is', null), eb('tokens.expires_at', '>', 0)]));
  const now = () => Math.floor(Date.now() / 1000);

  type Found = TokenWithOwner & { token_hash: string };
  let readBatch: (hashes: readonly string[], at: number) => Promise<Found[]>;
  if (store.dialect === 'postgres') {
    // One statement for every batch size: the hashes go as one array parameter.
    const read = store.hotQuery<Found>(
      byHashes.where('tokens.token_hash', '=', sql<string>`any(${[] as string[]})`).compile().sql,
    );
    readBatch = (hashes, at) => read([at, [...hashes]]);
  } else {
    // SQLite and MySQL: one statement per power-of-two list length, the list padded with its last
    // hash, so a connection prepares at most log2(LOOKUP_BATCH_MAX) + 1 of them.
    const reads = new Map<number, (parameters: readonly unknown[]) => Promise<Found[]>>();
    readBatch = (hashes, at) => {
      let size = 1;
      while (size < hashes.length) size *= 2;
      let read = reads.get(size);
      if (read === undefined) {
        const list = Array.from({ length: size }, () => '');
        read = store.hotQuery<Found>(byHashes.where('tokens.token_hash', 'in', list).compile().sql);
        reads.set(size, read);
      }
      const padded = [...hashes];
      while (padded.length < size) padded.push(hashes[hashes.length - 1]!);
      return read([at, ...padded]);
    };
  }
  // Replaces a legacy hash found by a lookup; a failure leaves it for the token's next use.
  const upgrade = (id: number, legacy: string, sha: string) =>
    store.db
      .updateTable('tokens')
      .set({ token_hash: sha })
      .where('id', '=', id)
      .where('token_hash', '=', legacy)
      .execute()
      .catch(() => undefined);
  const loader = new DataLoader<string, TokenWithOwner | undefined>(
    async (secrets) => {
      const hashes = secrets.map(hashTokenSecret);
      const legacy = secrets.map(legacyTokenHash);
      const rows = await readBatch([...hashes, ...legacy], now());
      // trimEnd: PostgreSQL pads a char(64) value, and a legacy hash is shorter.
      const byHash = new Map(rows.map((row) => [row.token_hash.trimEnd(), row]));
      const upgrading: Array<Promise<unknown>> = [];
      const found = secrets.map((_, i) => {
        const row = byHash.get(hashes[i]!);
        if (row) return row;
        const old = byHash.get(legacy[i]!);
        if (old) {
          byHash.set(hashes[i]!, old);
          upgrading.push(upgrade(old.id, legacy[i]!, hashes[i]!));
        }
        return old;
      });
      await Promise.all(upgrading);
      return found;
    },
    // A batch goes at the end of the event loop's turn (setImmediate): it takes in the lookups of the
    // requests that arrived together, and a request alone waits for no other. Batches are not queued
    // behind each other: each goes at once, on its own pool connection, with the pool's own bounds
    // (a hung database fails each request after DB_TIMEOUT_MS, as without batching).
    {
      cache: false,
      maxBatchSize: LOOKUP_BATCH_MAX,
      batchScheduleFn: (dispatch) => void setImmediate(dispatch),
    },
  );
  return (secret) => loader.load(secret);
}

/** The user's public tokens unexpired at `now`: the rows a listing counts, in the listing index's order. */
const publicTokenIdsOf = (db: Db, userId: number, now: number) =>
  db
    .selectFrom('tokens')
    .select('id')
    .where('user_id', '=', userId)
    .where('private', '=', 0)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));

/** The columns a listing shows. */
const LISTED = ['id', 'privileges', 'description', 'last_updated', 'expires_at'] as const;

/** The user's public tokens unexpired at `now`, with the columns a listing shows. */
const publicTokensOf = (db: Db, userId: number, now: number) =>
  db
    .selectFrom('tokens')
    .select(LISTED)
    .where('user_id', '=', userId)
    .where('private', '=', 0)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));

/** A listed token: tokens without an expiry carry exactly the spec's four fields. */
function listed({
  expires_at,
  ...token
}: Pick<TokenRow, 'id' | 'privileges' | 'description' | 'last_updated' | 'expires_at'>): ListedToken {
  return expires_at === null ? token : { ...token, expires_at: Number(expires_at) };
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
  now: number = Math.floor(Date.now() / 1000),
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

/** Deletes one public token of this user; false when there is none with that id (or it is someone else's). */
export async function deletePublicTokenOfUser(db: Db, userId: number, tokenId: number): Promise<boolean> {
  const result = await db
    .deleteFrom('tokens')
    .where('id', '=', tokenId)
    .where('user_id', '=', userId)
    .where('private', '=', 0)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Deletes every token that expired at or before `now`; returns how many. */
/** Rows per DELETE of the sweep: a large backlog is removed in short statements, each far within DB_TIMEOUT_MS. */
const SWEEP_BATCH = 5000;

export async function deleteExpiredTokens(db: Db, now: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    // Ids first, then the delete: MySQL allows neither LIMIT in an IN subquery nor reading the table it deletes from.
    const ids = (
      await db.selectFrom('tokens').select('id').where('expires_at', '<=', now).limit(SWEEP_BATCH).execute()
    ).map((r) => r.id);
    if (ids.length === 0) return deleted;
    const result = await db.deleteFrom('tokens').where('id', 'in', ids).executeTakeFirst();
    deleted += Number(result.numDeletedRows);
    if (ids.length < SWEEP_BATCH) return deleted;
  }
}

/** Every token of a user, private ones too (for operators). */
export async function listAllTokensOfUser(
  db: Db,
  userId: number,
): Promise<Array<Omit<TokenRow, 'token_hash' | 'password_at'>>> {
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

export async function deleteTokenById(db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('tokens').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Writes a batch of uses in one statement. GREATEST/max keeps last_updated from moving backwards
 * when several instances flush uses of the same token.
 */
export async function recordTokenUses(
  db: Db,
  dialect: Dialect,
  uses: ReadonlyArray<readonly [number, number]>,
) {
  if (uses.length === 0) return;
  const greatest = dialect === 'sqlite' ? sql.raw('max') : sql.raw('GREATEST');
  const cases = sql.join(
    uses.map(([id, at]) => sql`WHEN ${id} THEN ${at}`),
    sql` `,
  );
  await db
    .updateTable('tokens')
    .set({ last_updated: sql<number>`${greatest}(last_updated, CASE id ${cases} ELSE last_updated END)` })
    .where(
      'id',
      'in',
      uses.map(([id]) => id),
    )
    .execute();
}

/** limit(tokens.privileges, owner) as one SQL expression, generated from the privilege table. */
function limitExpression() {
  const terms = Object.entries(TOKEN_PRIVILEGE_REQUIREMENTS)
    .filter(([name]) => name !== 'Read') // never granted
    .map(([name, requires]) => {
      const bit = TokenPrivilege[name as TokenPrivilegeName];
      return sql`CASE WHEN (tokens.privileges & ${sql.lit(bit)}) <> 0 AND (owner.privileges & ${sql.lit(requires)}) = ${sql.lit(requires)} THEN ${sql.lit(bit)} ELSE 0 END`;
    });
  return sql<number>`(SELECT ${sql.join(terms, sql` + `)} FROM users owner WHERE owner.id = tokens.user_id)`;
}

export type FixScope = { kind: 'all' } | { kind: 'user'; userId: number };

/**
 * Ids per statement when fixing every token: short write locks, bounded memory, and each statement far
 * inside the database's query timeout (100,000 outlived PostgreSQL's 10 s under load: bench scenario 5).
 */
const FIX_CHUNK = 10_000;

/**
 * Rewrites stored privileges to limit(stored, owner) for the tokens in scope; tokens already within
 * their owner's privileges are not written. Set-based: one statement per user, or one per id range.
 */
export async function fixTokenPrivileges(db: Db, scope: FixScope): Promise<number> {
  const limited = limitExpression();
  const update = () =>
    db
      .updateTable('tokens')
      .set({ privileges: limited })
      .where(sql<boolean>`tokens.privileges <> ${limited}`);
  if (scope.kind === 'user') {
    if (!isPossibleUserId(scope.userId)) return 0; // no such user; never send an out-of-range id to SQL
    const r = await update().where('user_id', '=', scope.userId).executeTakeFirst();
    return Number(r.numUpdatedRows);
  }
  const bounds = await db
    .selectFrom('tokens')
    .select((eb) => [eb.fn.min('id').as('lo'), eb.fn.max('id').as('hi')])
    .executeTakeFirst();
  if (!bounds || bounds.lo === null || bounds.hi === null) return 0;
  let changed = 0;
  for (let from = Number(bounds.lo); from <= Number(bounds.hi); from += FIX_CHUNK) {
    const r = await update()
      .where('id', '>=', from)
      .where('id', '<', from + FIX_CHUNK)
      .executeTakeFirst();
    changed += Number(r.numUpdatedRows);
  }
  return changed;
}
