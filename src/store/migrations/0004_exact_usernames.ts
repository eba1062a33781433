import { sql } from 'kysely';
import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * MySQL compares text with the column's collation, which by default folds accents ('jurgen' = 'jürgen'):
 * lookups and the unique index on username_safe must compare exactly, as on SQLite and PostgreSQL.
 */
export const exactUsernames: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    if (dialect !== 'mysql') return;
    await sql`ALTER TABLE users MODIFY username_safe VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL`.execute(
      db,
    );
  },
  async down(db: AnyDb) {
    if (dialect !== 'mysql') return;
    await sql`ALTER TABLE users MODIFY username_safe VARCHAR(255) NOT NULL`.execute(db);
  },
});
