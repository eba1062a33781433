import { type AnyDb, type MigrationFactory } from './kit.ts';

/** Optional token expiry (Unix seconds); NULL means the token never expires. */
export const tokenExpiry: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('tokens').addColumn('expires_at', 'bigint').execute();
    // Serves the expiry sweep (DELETE … WHERE expires_at <= now).
    await db.schema.createIndex('tokens_expires_at').on('tokens').column('expires_at').execute();
  },
  async down(db: AnyDb) {
    const drop = db.schema.dropIndex('tokens_expires_at');
    await (dialect === 'mysql' ? drop.on('tokens') : drop).execute();
    await db.schema.alterTable('tokens').dropColumn('expires_at').execute();
  },
});
