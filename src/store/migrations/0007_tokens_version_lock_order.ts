import { sql } from 'kysely';
import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * The tokens_version triggers of 0006 without lock-order deadlocks between concurrent writers.
 * - A move of a token between two users bumps both owners in one UPDATE (rows locked in key order),
 *   not one after the other: two moves in opposite directions each waited for the other.
 * - MySQL: the insert and update triggers run BEFORE the row is written. An AFTER trigger updated the
 *   owner while the foreign key check held a shared lock on that row, so two inserts for one user each
 *   waited for the other's shared lock (InnoDB answered with a deadlock error). Before, the trigger takes
 *   the owner's row first, and the foreign key check finds it already held. (PostgreSQL's foreign key
 *   lock, FOR KEY SHARE, never conflicts with the trigger's update; SQLite has one writer at a time.)
 */
export const tokensVersionLockOrder: MigrationFactory = (dialect) => {
  const bumpBoth =
    'UPDATE users SET tokens_version = tokens_version + 1 WHERE id IN (OLD.user_id, NEW.user_id)';
  const bumpOld = 'UPDATE users SET tokens_version = tokens_version + 1 WHERE id = OLD.user_id';
  const bumpNew = 'UPDATE users SET tokens_version = tokens_version + 1 WHERE id = NEW.user_id';
  const postgresFunction = (onUpdate: string) =>
    `CREATE OR REPLACE FUNCTION tokens_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN UPDATE users SET tokens_version = tokens_version + 1 WHERE id IN (SELECT user_id FROM new_tokens);
  ELSIF TG_OP = 'DELETE' THEN UPDATE users SET tokens_version = tokens_version + 1 WHERE id IN (SELECT user_id FROM old_tokens);
  ELSE ${onUpdate};
  END IF;
  RETURN NULL;
END $$`;
  const mysqlTriggers = async (db: AnyDb, timing: 'BEFORE' | 'AFTER', onUpdate: string) => {
    for (const name of ['tokens_version_insert', 'tokens_version_update'])
      await sql.raw(`DROP TRIGGER ${name}`).execute(db);
    await sql
      .raw(`CREATE TRIGGER tokens_version_insert ${timing} INSERT ON tokens FOR EACH ROW ${bumpNew}`)
      .execute(db);
    await sql
      .raw(
        `CREATE TRIGGER tokens_version_update ${timing} UPDATE ON tokens FOR EACH ROW
IF NOT (NEW.user_id <=> OLD.user_id AND NEW.private <=> OLD.private AND NEW.expires_at <=> OLD.expires_at) THEN
  ${onUpdate};
END IF`,
      )
      .execute(db);
  };
  return {
    async up(db: AnyDb) {
      if (dialect === 'postgres') await sql.raw(postgresFunction(bumpBoth)).execute(db);
      else if (dialect === 'mysql') await mysqlTriggers(db, 'BEFORE', bumpBoth);
    },
    async down(db: AnyDb) {
      if (dialect === 'postgres') await sql.raw(postgresFunction(`${bumpOld}; ${bumpNew}`)).execute(db);
      else if (dialect === 'mysql') await mysqlTriggers(db, 'AFTER', `${bumpOld}; ${bumpNew}`);
    },
  };
};
