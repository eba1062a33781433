import { autoId, type AnyDb, type MigrationFactory } from './kit.ts';

/** The security log's table alone: what the in-place mode runs of 0018 (src/store/in-place-migrations.ts). */
export const securityLogTable: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('security_log')
      .addColumn('id', 'integer', autoId(dialect))
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('kind', 'varchar(32)', (c) => c.notNull())
      .addColumn('means', 'varchar(16)', (c) => c.notNull())
      .addColumn('means_id', 'varchar(64)')
      .addColumn('token_id', 'integer')
      .addColumn('client_id', 'varchar(255)')
      .addColumn('detail', 'varchar(255)')
      .addColumn('address', 'varchar(64)')
      .addColumn('user_agent', 'varchar(160)')
      .execute();
    // A user's log, newest first (the page, `tokend audit --user`), paged by id.
    await db.schema
      .createIndex('security_log_user_id')
      .on('security_log')
      .columns(['user_id', 'id'])
      .execute();
    // The retention sweep and `tokend audit --since`.
    await db.schema.createIndex('security_log_at').on('security_log').column('at').execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('security_log').execute();
  },
});

/**
 * The security log (src/auth/security-log.ts; its columns in docs/security-log.md), newest first per user
 * and swept by age, and the address each token was last used from (written with its last use, in the
 * same batched statement). Both only add: nothing existing changes, and `last_address` is nullable with
 * no default, so a tokens table shared with another program keeps working.
 */
export const securityLog: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await securityLogTable(dialect).up(db);
    await db.schema.alterTable('tokens').addColumn('last_address', 'varchar(64)').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('tokens').dropColumn('last_address').execute();
    await securityLogTable(dialect).down!(db);
  },
});
