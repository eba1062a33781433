import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * The secret of a token just made on the token page, kept until the page it is shown on is loaded once:
 * encrypted with a key only the browser's session cookie gives (the database holds the session's hash,
 * never the cookie), one row per session, removed with the session or the token.
 */
export const tokenReveals: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('token_reveals')
      .addColumn('session_id', 'integer', (c) =>
        c.primaryKey().notNull().references('tokens.id').onDelete('cascade'),
      )
      .addColumn('token_id', 'integer', (c) => c.notNull().references('tokens.id').onDelete('cascade'))
      .addColumn('sealed', 'varchar(255)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    // Serves the cascade when a token is deleted (MySQL makes one for the foreign key itself).
    if (dialect !== 'mysql')
      await db.schema.createIndex('token_reveals_token_id').on('token_reveals').column('token_id').execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('token_reveals').execute();
  },
});
