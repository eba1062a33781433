import { sql } from 'kysely';
import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * users.tokens_version counts every change to the set of a user's listed tokens: database triggers bump it
 * when a token is inserted or deleted, or moves between users, visibility or expiry. Whatever makes the
 * change (the API, the CLI, the expiry sweep, an import, an operator's SQL), the version moves with it, so
 * a snapshot of a user's token ids taken at one version can be trusted for as long as the version holds
 * (deep listing pages without walking the index, until migration 0010). Updates of last_updated and
 * privileges leave it alone.
 */
export const tokensVersion: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('users')
      .addColumn('tokens_version', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    const bump = (userId: string) =>
      `UPDATE users SET tokens_version = tokens_version + 1 WHERE id = ${userId}`;
    if (dialect === 'sqlite') {
      await sql
        .raw(`CREATE TRIGGER tokens_version_insert AFTER INSERT ON tokens BEGIN ${bump('NEW.user_id')}; END`)
        .execute(db);
      await sql
        .raw(`CREATE TRIGGER tokens_version_delete AFTER DELETE ON tokens BEGIN ${bump('OLD.user_id')}; END`)
        .execute(db);
      await sql
        .raw(
          'CREATE TRIGGER tokens_version_update AFTER UPDATE OF user_id, private, expires_at ON tokens ' +
            `BEGIN ${bump('OLD.user_id')}; ${bump('NEW.user_id')}; END`,
        )
        .execute(db);
    } else if (dialect === 'postgres') {
      // Inserts and deletes bump once per statement and user (a bulk load or a sweep runs one UPDATE per
      // statement, not per row); PostgreSQL allows transition tables only without a column list, so
      // updates of the three columns bump per row.
      const bumpAll = (rows: string) =>
        `UPDATE users SET tokens_version = tokens_version + 1 WHERE id IN (SELECT user_id FROM ${rows})`;
      await sql
        .raw(
          `CREATE FUNCTION tokens_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN ${bumpAll('new_tokens')};
  ELSIF TG_OP = 'DELETE' THEN ${bumpAll('old_tokens')};
  ELSE ${bump('OLD.user_id')}; ${bump('NEW.user_id')};
  END IF;
  RETURN NULL;
END $$`,
        )
        .execute(db);
      await sql
        .raw(
          'CREATE TRIGGER tokens_version_insert AFTER INSERT ON tokens REFERENCING NEW TABLE AS new_tokens ' +
            'FOR EACH STATEMENT EXECUTE FUNCTION tokens_version_bump()',
        )
        .execute(db);
      await sql
        .raw(
          'CREATE TRIGGER tokens_version_delete AFTER DELETE ON tokens REFERENCING OLD TABLE AS old_tokens ' +
            'FOR EACH STATEMENT EXECUTE FUNCTION tokens_version_bump()',
        )
        .execute(db);
      await sql
        .raw(
          'CREATE TRIGGER tokens_version_update AFTER UPDATE OF user_id, private, expires_at ON tokens ' +
            'FOR EACH ROW EXECUTE FUNCTION tokens_version_bump()',
        )
        .execute(db);
    } else {
      // MySQL has no UPDATE OF: the update trigger compares the columns itself. With binary logging on,
      // creating triggers needs SUPER or log_bin_trust_function_creators=1 (docs/running-at-scale.md).
      await sql
        .raw(
          `CREATE TRIGGER tokens_version_insert AFTER INSERT ON tokens FOR EACH ROW ${bump('NEW.user_id')}`,
        )
        .execute(db);
      await sql
        .raw(
          `CREATE TRIGGER tokens_version_delete AFTER DELETE ON tokens FOR EACH ROW ${bump('OLD.user_id')}`,
        )
        .execute(db);
      await sql
        .raw(
          `CREATE TRIGGER tokens_version_update AFTER UPDATE ON tokens FOR EACH ROW
IF NOT (NEW.user_id <=> OLD.user_id AND NEW.private <=> OLD.private AND NEW.expires_at <=> OLD.expires_at) THEN
  ${bump('OLD.user_id')}; ${bump('NEW.user_id')};
END IF`,
        )
        .execute(db);
    }
  },
  async down(db: AnyDb) {
    for (const name of ['tokens_version_insert', 'tokens_version_delete', 'tokens_version_update'])
      await sql
        .raw(dialect === 'postgres' ? `DROP TRIGGER ${name} ON tokens` : `DROP TRIGGER ${name}`)
        .execute(db);
    if (dialect === 'postgres') await sql`DROP FUNCTION tokens_version_bump()`.execute(db);
    await db.schema.alterTable('users').dropColumn('tokens_version').execute();
  },
});
