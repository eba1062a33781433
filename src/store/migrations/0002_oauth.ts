import { autoId, type AnyDb, type MigrationFactory } from './kit.ts';

export const oauth: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('oauth_clients')
      .addColumn('id', 'varchar(64)', (c) => c.primaryKey().notNull())
      .addColumn('name', 'varchar(255)', (c) => c.notNull())
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('avatar', 'varchar(2048)', (c) => c.notNull())
      .addColumn('redirect_uris', 'text', (c) => c.notNull())
      .addColumn('secret_hash', 'char(64)')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('oauth_codes')
      .addColumn('code_hash', 'char(64)', (c) => c.primaryKey().notNull())
      .addColumn('client_id', 'varchar(64)', (c) =>
        c.notNull().references('oauth_clients.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('scope', 'varchar(255)', (c) => c.notNull())
      .addColumn('code_challenge', 'varchar(128)', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used', 'smallint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    for (const table of ['oauth_access_tokens', 'oauth_refresh_tokens'] as const) {
      let create = db.schema
        .createTable(table)
        .addColumn('id', 'integer', autoId(dialect))
        .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
        .addColumn('client_id', 'varchar(64)', (c) =>
          c.notNull().references('oauth_clients.id').onDelete('cascade'),
        )
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('scope', 'varchar(255)', (c) => c.notNull())
        .addColumn('family', 'char(64)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull());
      if (table === 'oauth_refresh_tokens')
        create = create.addColumn('used', 'smallint', (c) => c.notNull().defaultTo(0));
      await create.execute();
      // A reused code or rotated refresh token revokes its whole family.
      await db.schema.createIndex(`${table}_family`).on(table).column('family').execute();
    }

    await db.schema
      .createTable('oauth_consents')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('client_id', 'varchar(64)', (c) =>
        c.notNull().references('oauth_clients.id').onDelete('cascade'),
      )
      .addColumn('scope', 'varchar(255)', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('oauth_consents_pk', ['user_id', 'client_id'])
      .execute();
  },
  async down(db: AnyDb) {
    for (const table of [
      'oauth_consents',
      'oauth_refresh_tokens',
      'oauth_access_tokens',
      'oauth_codes',
      'oauth_clients',
    ])
      await db.schema.dropTable(table).execute();
  },
});
