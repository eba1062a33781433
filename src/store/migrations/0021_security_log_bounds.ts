import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * The security log's bounds and who acted: `actor_id` (the account whose credential acted, so that a
 * user's page can say "an administrator" when it was not them), `repeats` (a summary row's count of the
 * failed sign-ins beyond the per-account bound), and the index that finds an account's failed sign-ins
 * of the current window. Nullable columns: rows written before keep their meaning.
 */
export const securityLogBounds: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    // One column a statement: SQLite adds one at a time.
    await db.schema.alterTable('security_log').addColumn('actor_id', 'integer').execute();
    await db.schema.alterTable('security_log').addColumn('repeats', 'integer').execute();
    await db.schema
      .createIndex('security_log_user_kind_at')
      .on('security_log')
      .columns(['user_id', 'kind', 'at'])
      .execute();
  },
  async down(db: AnyDb) {
    const drop = db.schema.dropIndex('security_log_user_kind_at');
    await (dialect === 'mysql' ? drop.on('security_log') : drop).execute();
    await db.schema.alterTable('security_log').dropColumn('repeats').execute();
    await db.schema.alterTable('security_log').dropColumn('actor_id').execute();
  },
});
