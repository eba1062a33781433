import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * The device authorization grant (RFC 8628, src/oauth/device.ts): one row per device code, found by its
 * hash or by its user code's hash (unique), until it expires and the sweep deletes it.
 */
export const deviceCodes: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('oauth_device_codes')
      .addColumn('device_code_hash', 'char(64)', (c) => c.primaryKey().notNull())
      .addColumn('user_code_hash', 'char(64)', (c) => c.notNull().unique())
      .addColumn('client_id', 'varchar(64)', (c) =>
        c.notNull().references('oauth_clients.id').onDelete('cascade'),
      )
      .addColumn('scope', 'varchar(255)', (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('auth_time', 'bigint')
      .addColumn('interval_s', 'integer', (c) => c.notNull())
      .addColumn('polled_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    // The sweep; an application's pending codes; a user's approved ones not yet exchanged (the bounds).
    const index = (name: string, columns: string[]) =>
      db.schema.createIndex(name).on('oauth_device_codes').columns(columns).execute();
    await index('oauth_device_codes_expires_at', ['expires_at']);
    await index('oauth_device_codes_client', ['client_id', 'status']);
    await index('oauth_device_codes_user', ['user_id', 'status']);
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('oauth_device_codes').execute();
  },
});
