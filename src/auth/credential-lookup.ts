// The lookups by secret behind the credential core: one batched, indexed query per turn of the event
// loop for API tokens and sessions, one for OAuth access tokens. A token imported from a Ripple-family
// database is found by its MD5 form and upgraded to SHA-256 on first use; a web session whose owner's
// password changed since it was opened (its password fingerprint) ends here.
import DataLoader from 'dataloader';
import type { SelectQueryBuilder } from 'kysely';
import { hotReadAnyOf } from '../store/sql-dialect.ts';
import type { Db, Store } from '../store/database.ts';
import type { Database } from '../store/schema.ts';
import type { Clock } from './clock.ts';
import { liveAt } from './live.ts';
import { familyTokenHash, hashTokenSecret, legacyTokenHash, passwordFingerprint } from './secret.ts';
import { endSessionOfOldPassword } from './sessions.ts';

/** Most credentials one lookup query carries. */
export const LOOKUP_BATCH_MAX = 64;
/** Longer secrets are never looked up: no credential tokend makes is near this long. */
const SECRET_LENGTH_MAX = 256;

/** A token row (API token or web session) joined with its owner as stored now. */
export interface TokenWithOwner {
  id: number;
  user_id: number;
  privileges: number;
  description: string;
  last_updated: number;
  /** 1: a web session (src/auth/sessions.ts) */
  session: number;
  password_at: number | null;
  /** when the row was made (a session: its sign-in); null for rows from before tokend recorded it */
  created_at: number | null;
  /** a web session's fingerprint of the password it was opened with; null: an API token, or an older session */
  password_fingerprint: string | null;
  private: number;
  /**
   * Found by the MD5 form of its secret, not by its SHA-256 hash: a token imported from a Ripple-family
   * database, or in place (DATABASE_SCHEMA=ripple) a token stored as the family stores them (the family's
   * own, and the public API tokens tokend makes there). Never a web session.
   */
  md5Form: boolean;
  /** A token in the family's form, in place on its database (md5Form there): its rules apply (privileges.ts). */
  familyToken: boolean;
  /** the clock's time when it was read: the time the expiry rule was applied, and the time of this use */
  at: number;
  username: string;
  user_privileges: number;
  /** the owner's stored password hash now (read by the same join): a session's fingerprint is checked against it */
  password_hash: string;
}

/**
 * A live access token joined with its client and its owner as stored now. A token of no user (user_id
 * null) is joined with its client's owner instead, whose privileges say whether the owner is banned.
 */
export interface BearerRow {
  id: number;
  user_id: number | null;
  scope: string;
  created_at: number;
  expires_at: number;
  client_id: string;
  client_name: string;
  client_owner_id: number;
  client_avatar: string;
  /** the application owner's privileges as stored now (the same join: no query of its own) */
  client_owner_privileges: number;
  username: string;
  user_privileges: number;
}

export type LookupStore = Pick<Store, 'db' | 'hotQuery' | 'layout'>;
type Hashed<Row> = Row & { token_hash: string };

/**
 * The OAuth access tokens, a kind of credential the OAuth server registers with the core (app.ts). The
 * core looks them up as it looks up API tokens: by the SHA-256 hash of the secret, in the same batches,
 * live by the same rule (liveAt, which the core adds).
 */
export interface BearerTokens {
  /** Every access token with its client and owner (BearerRow's columns and token_hash); no parameters. */
  query(
    db: Db,
  ): SelectQueryBuilder<
    Database & { owners: Database['users'] },
    'oauth_access_tokens' | 'oauth_clients' | 'users' | 'owners',
    Hashed<BearerRow>
  >;
  /** The token privileges a scope string carries. */
  scopePrivileges(scope: string): number;
  /** Ends the grant an access token belongs to, every token of it. */
  endGrant(db: Db, accessTokenId: number): Promise<void>;
}

/** The lookups' time: the statement's first parameter (compiled as 0, passed per call), for liveAt. */
const NOW_PARAMETER = 0;

/**
 * Lookups started in one turn of the event loop share one query (DataLoader, no cache: every request
 * still reads the database, after it arrived). On a database server that is one round trip for the
 * batch; on SQLite one read transaction instead of one per request, and the requests of a turn are
 * answered together. A batch goes at the end of the turn (setImmediate), so a request alone waits for
 * no other; batches are not queued behind each other: each goes at once, on its own pool connection,
 * within the pool's own bounds (a hung database fails each request after DB_TIMEOUT_MS).
 */
function batched<Row>(
  load: (secrets: readonly string[]) => Promise<Array<Row | undefined>>,
): (secret: string) => Promise<Row | undefined> {
  const loader = new DataLoader<string, Row | undefined>(load, {
    cache: false,
    maxBatchSize: LOOKUP_BATCH_MAX,
    batchScheduleFn: (dispatch) => void setImmediate(dispatch),
  });
  return (secret) => loader.load(secret);
}

export interface CredentialLookup {
  /** The live token row (API token or session) with this secret, and its owner. */
  token(secret: string): Promise<TokenWithOwner | undefined>;
  /** The live access token with this secret, its client and its owner. */
  bearer(secret: string): Promise<BearerRow | undefined>;
}

/**
 * The lookups by secret. The token query looks for both stored forms of each secret: its SHA-256
 * hash, and the MD5 form of a Ripple-family token (secret.ts). Imported ones (`md5:` and the hex) get
 * their SHA-256 hash stored there and then, before they are answered, so the weak hash is gone after one
 * use. In place on a family database (DATABASE_SCHEMA=ripple) the MD5 form is the family's own (the hex
 * alone), and it stays: the family's programs find their tokens by it, and the public API tokens tokend
 * makes there are stored in it too (storedSecretHash), so the rest of the server accepts them. Such a row
 * is one of the family's tokens by design, and the family's rules apply to it as to theirs (a private one
 * asks for every privilege but Bancho: requestedPrivileges); tokend's own public tokens are never private,
 * so they ask for what they store, and their expiry still applies here. Web sessions and private tokens
 * are stored by their SHA-256 hash, 64 characters, which no MD5 hex (32) can equal: the family's
 * programs, which know nothing of tokend's sessions, never accept one.
 */
export function credentialLookup(
  store: LookupStore,
  clock: Clock,
  bearerTokens: BearerTokens,
): CredentialLookup {
  const tokens = store.db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .select([
      'tokens.id',
      'tokens.user_id',
      'tokens.privileges',
      'tokens.description',
      'tokens.last_updated',
      'tokens.session',
      'tokens.password_at',
      'tokens.created_at',
      'tokens.password_fingerprint',
      'tokens.private',
      'users.username',
      'users.privileges as user_privileges',
      'users.password_hash',
      'tokens.token_hash',
    ])
    .where(liveAt('tokens', NOW_PARAMETER));
  // Read with the current time first (the expiry rule's parameter), then the hashes.
  const readTokens = hotReadAnyOf<Hashed<TokenWithOwner>>(store, tokens, 'tokens.token_hash');
  // In place a row found by the MD5 form is one of the family's own tokens, kept as it is; elsewhere one
  // import-ripple copied, whose hash is replaced (StoreLayout.familyTokens).
  const { familyTokens } = store.layout;
  const md5FormOf = familyTokens ? familyTokenHash : legacyTokenHash;
  // Replaces a legacy hash found by a lookup; a failure leaves it for the token's next use.
  const upgrade = (id: number, legacy: string, sha: string) =>
    store.db
      .updateTable('tokens')
      .set({ token_hash: sha })
      .where('id', '=', id)
      .where('token_hash', '=', legacy)
      .execute()
      .catch(() => undefined);
  const token = batched<TokenWithOwner>(async (secrets) => {
    const hashes = secrets.map(hashTokenSecret);
    const legacy = secrets.map(md5FormOf);
    const at = clock();
    const rows = await readTokens([...hashes, ...legacy], [at]);
    for (const row of rows) {
      row.at = at;
      row.md5Form = row.token_hash.length !== hashes[0]!.length;
      row.familyToken = familyTokens && row.md5Form;
    }
    const byHash = new Map(rows.map((row) => [row.token_hash, row]));
    const writes: Array<Promise<unknown>> = [];
    const found = secrets.map((_, i) => {
      const row = byHash.get(hashes[i]!);
      if (row) return row;
      const old = byHash.get(legacy[i]!);
      if (old) {
        byHash.set(hashes[i]!, old);
        if (!familyTokens) writes.push(upgrade(old.id, legacy[i]!, hashes[i]!));
      }
      return old;
    });
    // A web session lasts only while its owner's password is the one it was opened with, whoever changed
    // it (tokend, or another program such as the family's website in place): one opened with another is
    // no credential at all, to the pages and to the API alike, and ends here and now, so that its cookie
    // never works again, even if the password is later set back to the same hash. A session from before
    // the fingerprint was recorded (null) lasts until it expires. A failed delete leaves the row refused.
    const live = found.map((row) => {
      if (!row || row.password_fingerprint === null || row.session !== 1) return row;
      if (row.password_fingerprint === passwordFingerprint(row.password_hash)) return row;
      const fingerprint = row.password_fingerprint;
      writes.push(endSessionOfOldPassword(store.db, row.id, fingerprint).catch(() => undefined));
      return undefined;
    });
    // Most batches write nothing: they answer without waiting another turn of the microtask queue.
    if (writes.length > 0) await Promise.all(writes);
    return live;
  });

  const accessTokens = bearerTokens.query(store.db).where(liveAt('oauth_access_tokens', NOW_PARAMETER));
  const readAccessTokens = hotReadAnyOf<Hashed<BearerRow>>(
    store,
    accessTokens,
    'oauth_access_tokens.token_hash',
  );
  const bearer = batched<BearerRow>(async (secrets) => {
    const hashes = secrets.map(hashTokenSecret);
    const rows = await readAccessTokens(hashes, [clock()]);
    const byHash = new Map(rows.map((row) => [row.token_hash, row]));
    return hashes.map((h) => byHash.get(h));
  });

  return {
    token: (secret) => (secret.length > SECRET_LENGTH_MAX ? Promise.resolve(undefined) : token(secret)),
    bearer: (secret) => (secret.length > SECRET_LENGTH_MAX ? Promise.resolve(undefined) : bearer(secret)),
  };
}
