import { autoId, type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * An access token may belong to no user: the client credentials grant (RFC 6749 §4.4) gives an application
 * a token for itself (src/oauth/grants/client-credentials.ts). oauth_access_tokens.user_id becomes
 * nullable; every query that reads a user's tokens asks for `user_id = ?`, which a NULL never matches.
 * PostgreSQL and MySQL alter the column in place (its foreign key stays); SQLite cannot, so its table is
 * made again under the same name with the same columns, rows (ids kept), indexes and id sequence.
 * `down` deletes the user-less tokens and makes the column NOT NULL again.
 */
export const clientCredentials: MigrationFactory = (dialect) => {
  const table = 'oauth_access_tokens';
  const indexes: ReadonlyArray<readonly [string, string[]]> = [
    ['oauth_access_tokens_family', ['family']],
    ['oauth_access_tokens_user_client', ['user_id', 'client_id']],
    ['oauth_access_tokens_expires_at', ['expires_at']],
  ];
  const rebuildOnSqlite = async (db: AnyDb, userIdNullable: boolean) => {
    const temporary = `${table}_0017`;
    await db.schema
      .createTable(temporary)
      .addColumn('id', 'integer', autoId(dialect))
      .addColumn('token_hash', 'char(64)', (c) => c.notNull().unique())
      .addColumn('client_id', 'varchar(64)', (c) =>
        c.notNull().references('oauth_clients.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'integer', (c) => {
        const column = c.references('users.id').onDelete('cascade');
        return userIdNullable ? column : column.notNull();
      })
      .addColumn('scope', 'varchar(255)', (c) => c.notNull())
      .addColumn('family', 'char(64)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    const columns = [
      'id',
      'token_hash',
      'client_id',
      'user_id',
      'scope',
      'family',
      'created_at',
      'expires_at',
    ];
    await db
      .insertInto(temporary)
      .columns(columns)
      .expression(db.selectFrom(table).select(columns))
      .execute();
    // AUTOINCREMENT: ids of deleted tokens are never given again, so the sequence goes along.
    const sequence = await db
      .selectFrom('sqlite_sequence')
      .select('seq')
      .where('name', '=', table)
      .executeTakeFirst();
    await db.schema.dropTable(table).execute();
    await db.schema.alterTable(temporary).renameTo(table).execute();
    if (sequence !== undefined) {
      await db.deleteFrom('sqlite_sequence').where('name', '=', table).execute();
      await db.insertInto('sqlite_sequence').values({ name: table, seq: sequence.seq }).execute();
    }
    for (const [name, columns] of indexes)
      await db.schema.createIndex(name).on(table).columns(columns).execute();
  };
  return {
    async up(db: AnyDb) {
      if (dialect === 'postgres')
        await db.schema
          .alterTable(table)
          .alterColumn('user_id', (c) => c.dropNotNull())
          .execute();
      else if (dialect === 'mysql')
        await db.schema.alterTable(table).modifyColumn('user_id', 'integer').execute();
      else await rebuildOnSqlite(db, true);
    },
    async down(db: AnyDb) {
      await db.deleteFrom(table).where('user_id', 'is', null).execute();
      if (dialect === 'postgres')
        await db.schema
          .alterTable(table)
          .alterColumn('user_id', (c) => c.setNotNull())
          .execute();
      else if (dialect === 'mysql')
        await db.schema
          .alterTable(table)
          .modifyColumn('user_id', 'integer', (c) => c.notNull())
          .execute();
      else await rebuildOnSqlite(db, false);
    },
  };
};
