import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * The ids and legacy hashes of the tokens `tokend import-ripple` brought over, kept after a token is
 * deleted (no foreign key): a token revoked in tokend, or its secret, is not brought back by the next
 * import.
 */
export const rippleImportedTokens: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('ripple_imported_tokens')
      .addColumn('id', 'integer', (c) => c.primaryKey().notNull())
      .addColumn('token_hash', 'varchar(64)', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('ripple_imported_tokens_hash')
      .on('ripple_imported_tokens')
      .column('token_hash')
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('ripple_imported_tokens').execute();
  },
});
