// Keeping generated ids clear of ids that are about to be written explicitly (tokend import-ripple).
import { sql } from 'kysely';
import type { Db, Dialect } from './database.ts';

/**
 * Makes the next generated id of `table` greater than `upTo`, never lowering it: rows inserted meanwhile
 * by a running server take ids above the range an import is writing, instead of ones it needs.
 */
export async function reserveIds(
  db: Db,
  dialect: Dialect,
  table: 'users' | 'tokens',
  upTo: number,
): Promise<void> {
  if (dialect === 'postgres') {
    // nextval, so a sequence already past upTo (ids handed out, rows since deleted) stays where it is.
    await sql`SELECT setval(pg_get_serial_sequence(${table}, 'id'), GREATEST(${upTo}::bigint, nextval(pg_get_serial_sequence(${table}, 'id'))))`.execute(
      db,
    );
  } else if (dialect === 'mysql') {
    const row = await sql<{
      next: number | string | null;
    }>`SELECT AUTO_INCREMENT AS next FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ${table}`.execute(
      db,
    );
    const next = Number(row.rows[0]?.next ?? 0);
    if (next <= upTo)
      await sql`ALTER TABLE ${sql.table(table)} AUTO_INCREMENT = ${sql.lit(upTo + 1)}`.execute(db);
  } else {
    // AUTOINCREMENT tables draw their next id from sqlite_sequence (past any id ever used).
    await sql`UPDATE sqlite_sequence SET seq = ${upTo} WHERE name = ${table} AND seq < ${upTo}`.execute(db);
    await sql`INSERT INTO sqlite_sequence (name, seq) SELECT ${table}, ${upTo} WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ${table})`.execute(
      db,
    );
  }
}
