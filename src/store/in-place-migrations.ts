// The in-place mode's migrations (DATABASE_SCHEMA=ripple): what tokend adds to a Ripple-family database
// and the order it adds it in. FAMILY_CHANGES gives the family's `tokens` four nullable or defaulted
// columns and three indexes, and makes the two views (tokend_users, tokend_tokens) that show the family's
// tables under tokend's column names; `tokend migrate --dry-run` shows it first, FAMILY_CHANGES_UNDONE
// undoes it (docs/compatibility.md). Then tokend's migrations that make only tables of its own run, through
// the in-place plugin (ripple.ts), which prefixes their names; the rest never run in place.
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { MIGRATIONS } from './migrations/index.ts';
import type { AnyDb, MigrationFactory } from './migrations/kit.ts';
import { securityLogTable } from './migrations/0018_security_log.ts';
import { OWN_TABLE_CHARSET, OWN_TABLE_COLLATION, TOKEND_TABLE_PREFIX, plainId } from './ripple.ts';

/** Where the in-place mode records its migrations, beside the family's tables. */
export const IN_PLACE_MIGRATION_TABLE = `${TOKEND_TABLE_PREFIX}migration`;
export const IN_PLACE_MIGRATION_LOCK_TABLE = `${TOKEND_TABLE_PREFIX}migration_lock`;

/** The family's users as tokend's `users`: same rows, tokend's column names. */
const USERS_VIEW = `CREATE ALGORITHM=MERGE SQL SECURITY INVOKER VIEW ${TOKEND_TABLE_PREFIX}users AS
SELECT id, username, username_safe, privileges, password_md5 AS password_hash, password_version,
  0 AS created_at
FROM users`;

/** The family's tokens as tokend's `tokens`, rows of a plain `user` only (plainId). */
const TOKENS_VIEW = `CREATE ALGORITHM=MERGE SQL SECURITY INVOKER VIEW ${TOKEND_TABLE_PREFIX}tokens AS
SELECT id, \`user\` AS user_id, privileges, description, token AS token_hash, private, last_updated,
  tokend_expires_at AS expires_at, tokend_session AS session, tokend_password_at AS password_at,
  tokend_created_at AS created_at, tokend_last_address AS last_address,
  tokend_password_fingerprint AS password_fingerprint
FROM tokens
WHERE ${plainId('`user`')}
WITH CASCADED CHECK OPTION`;

/**
 * What tokend adds to the family's database, in order: the exact SQL `tokend migrate` runs (and
 * `tokend migrate --dry-run` shows). Only additions: columns with a default, indexes, two views.
 */
export const FAMILY_CHANGES: readonly string[] = [
  'ALTER TABLE tokens ADD COLUMN tokend_expires_at BIGINT NULL DEFAULT NULL, ' +
    'ADD COLUMN tokend_session SMALLINT NOT NULL DEFAULT 0, ' +
    'ADD COLUMN tokend_password_at BIGINT NULL DEFAULT NULL, ' +
    'ADD COLUMN tokend_created_at BIGINT NULL DEFAULT NULL, ' +
    'ADD COLUMN tokend_last_address VARCHAR(64) NULL DEFAULT NULL, ' +
    'ADD COLUMN tokend_password_fingerprint VARCHAR(16) NULL DEFAULT NULL',
  'CREATE INDEX tokend_tokens_token ON tokens (token)',
  'CREATE INDEX tokend_tokens_listing ON tokens (`user`, private, id, tokend_expires_at)',
  'CREATE INDEX tokend_tokens_expires_at ON tokens (tokend_expires_at)',
  USERS_VIEW,
  TOKENS_VIEW,
];

/** FAMILY_CHANGES undone: the family's tables as they were before tokend (its own tables are dropped apart). */
export const FAMILY_CHANGES_UNDONE: readonly string[] = [
  `DROP VIEW ${TOKEND_TABLE_PREFIX}tokens`,
  `DROP VIEW ${TOKEND_TABLE_PREFIX}users`,
  'DROP INDEX tokend_tokens_expires_at ON tokens',
  'DROP INDEX tokend_tokens_listing ON tokens',
  'DROP INDEX tokend_tokens_token ON tokens',
  'ALTER TABLE tokens DROP COLUMN tokend_password_fingerprint, DROP COLUMN tokend_last_address, DROP COLUMN tokend_created_at, DROP COLUMN tokend_password_at, ' +
    'DROP COLUMN tokend_session, DROP COLUMN tokend_expires_at',
];

const familyChanges: MigrationFactory = () => ({
  async up(db: AnyDb) {
    for (const statement of FAMILY_CHANGES) await sql.raw(statement).execute(db);
  },
  async down(db: AnyDb) {
    for (const statement of FAMILY_CHANGES_UNDONE) await sql.raw(statement).execute(db);
  },
});

/**
 * tokend's migrations that make only tables of its own (OAuth, the token page's reveals): run as they
 * are, through inPlaceTables, so their tables get the prefix. Those that change `users` or `tokens` never
 * run in place: what the family's tables need of them is FAMILY_CHANGES.
 */
export const OWN_TABLE_MIGRATIONS = new Set([
  '0002_oauth',
  '0012_oauth_bounds',
  '0014_token_reveals',
  '0015_oauth_code_attempts',
  '0016_oauth_client_owners',
  '0017_client_credentials',
  // in place its table alone (securityLogTable): the tokens column is FAMILY_CHANGES' tokend_last_address
  '0018_security_log',
  '0020_event_outbox',
  '0021_security_log_bounds',
  '0022_openid_connect',
  '0023_device_codes',
]);

/**
 * tokend's migrations that never run in place, each because FAMILY_CHANGES (or the family's own schema)
 * already gives the family's tables what it would: the users and tokens tables themselves, expiry, the
 * listing index, sessions, creation times; the tokens_version triggers (dropped again by 0010), the
 * username collation and fold (the family's username_safe is its own), the import's record. A new
 * migration must be put in this set or in OWN_TABLE_MIGRATIONS (test/unit/in-place-tables.test.ts).
 */
export const COVERED_BY_FAMILY_CHANGES = new Set([
  '0001_users_tokens',
  '0003_token_expiry',
  '0004_exact_usernames',
  '0005_listing_index',
  '0006_tokens_version',
  '0007_tokens_version_lock_order',
  '0008_web_sessions',
  '0009_folded_usernames',
  '0010_drop_tokens_version',
  '0011_ripple_imported_tokens',
  '0013_token_created_at',
  '0019_session_password',
]);

/** The migration that applies FAMILY_CHANGES: until it has run, tokend has made nothing on the database. */
export const FAMILY_CHANGES_MIGRATION = '0000_ripple_in_place';

/**
 * tokend's own tables as the in-place migrations before 0019 left them, made before their CREATE TABLE
 * named a character set: in the database's default one.
 */
const OWN_TABLES_BEFORE_0019 = [
  'oauth_clients',
  'oauth_codes',
  'oauth_access_tokens',
  'oauth_refresh_tokens',
  'oauth_consents',
  'token_reveals',
  'security_log',
] as const;

/**
 * The foreign keys between tokend's own tables that join text columns (each OAuth table's `client_id` to
 * its application), as the in-place migrations before 0019 made them: MariaDB and MySQL named each
 * `<table>_ibfk_1` (its one foreign key in place: those to the family's tables are left out).
 */
const CLIENT_KEYS = ['oauth_codes', 'oauth_access_tokens', 'oauth_refresh_tokens', 'oauth_consents'].map(
  (table) => ({ table: `${TOKEND_TABLE_PREFIX}${table}`, key: `${TOKEND_TABLE_PREFIX}${table}_ibfk_1` }),
);

/**
 * Migration 0019 in place: tokend's own tables made before their CREATE TABLE named a character set are
 * converted to it (in a latin1 family database they were latin1). A column a foreign key joins cannot
 * change its character set while the key is there, so the keys on `client_id` are dropped first and made
 * again, the same, after. Nothing of the family's is touched. On tables made in utf8mb4 it changes
 * nothing but rebuilds them.
 */
export const OWN_TABLES_CONVERTED: readonly string[] = [
  ...CLIENT_KEYS.map(({ table, key }) => `ALTER TABLE ${table} DROP FOREIGN KEY ${key}`),
  ...OWN_TABLES_BEFORE_0019.map(
    (table) =>
      `ALTER TABLE ${TOKEND_TABLE_PREFIX}${table} CONVERT TO CHARACTER SET ${OWN_TABLE_CHARSET} COLLATE ${OWN_TABLE_COLLATION}`,
  ),
  ...CLIENT_KEYS.map(
    ({ table, key }) =>
      `ALTER TABLE ${table} ADD CONSTRAINT ${key} FOREIGN KEY (client_id) ` +
      `REFERENCES ${TOKEND_TABLE_PREFIX}oauth_clients (id) ON DELETE CASCADE`,
  ),
];

const ownTablesConverted: MigrationFactory = () => ({
  async up(db: AnyDb) {
    for (const statement of OWN_TABLES_CONVERTED) await sql.raw(statement).execute(db);
  },
});

/**
 * The in-place mode's migrations, in order: the family's additions first, then tokend's own tables, then
 * those tables in utf8mb4 where an earlier tokend made them in the database's default character set.
 */
export const IN_PLACE_MIGRATIONS: ReadonlyArray<readonly [string, MigrationFactory]> = (
  [
    [FAMILY_CHANGES_MIGRATION, familyChanges],
    ...MIGRATIONS.filter(([name]) => OWN_TABLE_MIGRATIONS.has(name)).map(
      ([name, make]): readonly [string, MigrationFactory] => [
        name,
        name === '0018_security_log' ? securityLogTable : make,
      ],
    ),
    ['0019_in_place_utf8mb4', ownTablesConverted],
  ] satisfies Array<readonly [string, MigrationFactory]>
)
  // in the order the migrator applies them: by name
  .toSorted(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** The migrations of a layout, as the migrator takes them. */
export const inPlaceMigrations = (): Record<string, Migration> =>
  Object.fromEntries(IN_PLACE_MIGRATIONS.map(([name, make]) => [name, make('mysql')]));
