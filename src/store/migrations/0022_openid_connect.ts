import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * OpenID Connect (src/oauth/oidc.ts): the keys that sign id_tokens (src/oauth/signing-keys.ts), one row
 * per key, `generation` unique so that two instances making the first key at once, or two rotations at
 * once, make one; a code remembers the nonce of its authorization request and when the user signed in
 * (auth_time); a refresh token remembers that sign-in too, for the id_token of a refresh. All additions:
 * nullable columns, a new table.
 */
export const openidConnect: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('oauth_signing_keys')
      .addColumn('kid', 'varchar(64)', (c) => c.primaryKey().notNull())
      .addColumn('generation', 'integer', (c) => c.notNull().unique())
      .addColumn('alg', 'varchar(16)', (c) => c.notNull())
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      .addColumn('private_jwk', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('active_from', 'bigint', (c) => c.notNull())
      .execute();
    // One column per statement: SQLite adds one at a time.
    await db.schema.alterTable('oauth_codes').addColumn('nonce', 'varchar(255)').execute();
    await db.schema.alterTable('oauth_codes').addColumn('auth_time', 'bigint').execute();
    await db.schema.alterTable('oauth_refresh_tokens').addColumn('auth_time', 'bigint').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('oauth_refresh_tokens').dropColumn('auth_time').execute();
    await db.schema.alterTable('oauth_codes').dropColumn('auth_time').execute();
    await db.schema.alterTable('oauth_codes').dropColumn('nonce').execute();
    await db.schema.dropTable('oauth_signing_keys').execute();
  },
});
