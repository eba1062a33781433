// What a live credential is, in one place: one that has not expired (no expiry, or an expiry after now)
// and, for the kinds spent by their one use (an OAuth refresh token once rotated, a code once exchanged),
// one not yet used. Every query that asks for live credentials (the credential core's lookups, the token
// listings, the per-user cap, connected applications) and every check of a row already read (the OAuth
// grants, introspection) says it through this module; the expiry sweeps delete its complement.
import { sql, type RawBuilder } from 'kysely';

/** The tables that hold credentials, each with an `expires_at` column (null: never expires). */
export type CredentialTable = 'tokens' | 'oauth_access_tokens' | 'oauth_refresh_tokens' | 'oauth_codes';

/** The credentials spent by their one use (`used` = 1 once rotated or exchanged). */
const SPENT_BY_USE: ReadonlySet<CredentialTable> = new Set(['oauth_refresh_tokens', 'oauth_codes']);

const expiresAt = (table: CredentialTable) => sql.ref(`${table}.expires_at`);

/** SQL: the credential in `table` has not expired at `now` (for a prepared statement, `now` its parameter). */
export const unexpiredAt = (table: CredentialTable, now: number): RawBuilder<boolean> =>
  sql<boolean>`(${expiresAt(table)} is null or ${expiresAt(table)} > ${now})`;

/** SQL: the credential in `table` is live at `now`: not expired, and not used if its use spends it. */
export const liveAt = (table: CredentialTable, now: number): RawBuilder<boolean> =>
  SPENT_BY_USE.has(table)
    ? sql<boolean>`(${sql.ref(`${table}.used`)} = 0 and ${unexpiredAt(table, now)})`
    : unexpiredAt(table, now);

/** SQL: the credential in `table` has expired at `now` (what the sweeps delete): unexpiredAt's complement. */
export const expiredAt = (table: CredentialTable, now: number): RawBuilder<boolean> =>
  sql<boolean>`${expiresAt(table)} <= ${now}`;

/** A row's expiry as the drivers give it: a number, a numeric string, or null (never). */
type Expiry = number | string | null;

/** A row already read has expired at `now` (unexpiredAt's rule in JavaScript). */
export const hasExpired = (expiry: Expiry, now: number): boolean => expiry !== null && Number(expiry) <= now;

/** A row already read is live at `now` (liveAt's rule in JavaScript); `used` only on the kinds it spends. */
export const isLive = (row: { expires_at: Expiry; used?: number | string }, now: number): boolean =>
  (row.used === undefined || Number(row.used) === 0) && !hasExpired(row.expires_at, now);
