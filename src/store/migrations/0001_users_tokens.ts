import { autoId, type AnyDb, type MigrationFactory } from './kit.ts';

export const usersAndTokens: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('users')
      .addColumn('id', 'integer', autoId(dialect))
      .addColumn('username', 'varchar(255)', (c) => c.notNull())
      .addColumn('username_safe', 'varchar(255)', (c) => c.notNull().unique())
      .addColumn('privileges', 'bigint', (c) => c.notNull())
      .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
      .addColumn('password_version', 'integer', (c) => c.notNull().defaultTo(2))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('tokens')
      .addColumn('id', 'integer', autoId(dialect))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('privileges', 'bigint', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
      .addColumn('private', 'smallint', (c) => c.notNull().defaultTo(0))
      .addColumn('last_updated', 'bigint', (c) => c.notNull())
      .execute();

    // Serves the listing (user, public, ascending id) and the per-user scope of fix_privileges.
    await db.schema
      .createIndex('tokens_user_private_id')
      .on('tokens')
      .columns(['user_id', 'private', 'id'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('tokens').execute();
    await db.schema.dropTable('users').execute();
  },
});
