import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * When each token was made. last_updated is the creation time until the token's first use, so a token whose
 * last_updated still equals created_at was never used (the token page says so). Tokens made before this
 * migration keep NULL: their creation time is not known, and neither is whether they were used.
 */
export const tokenCreatedAt: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('tokens').addColumn('created_at', 'bigint').execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('tokens').dropColumn('created_at').execute();
  },
});
