import { type AnyDb, type MigrationFactory } from './kit.ts';

/**
 * Usernames compare in Unicode NFKC, case-folded (spaces as underscores): every stored username_safe is
 * recomputed. The fold is written out here, not imported, so this migration keeps doing what it did when
 * it shipped. A user whose new key another user already holds keeps the old one (both stay reachable by
 * id; an operator renames one), so the migration never fails on data.
 */
export const foldedUsernames: MigrationFactory = () => {
  const fold = (name: string) =>
    name.trim().normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').replaceAll(' ', '_');
  const BATCH = 1000;
  return {
    async up(db: AnyDb) {
      const changes: Array<{ id: number; key: string }> = [];
      for (let after = -1; ;) {
        const rows = (await db
          .selectFrom('users')
          .select(['id', 'username', 'username_safe'])
          .where('id', '>', after)
          .orderBy('id')
          .limit(BATCH)
          .execute()) as Array<{ id: number; username: string; username_safe: string }>;
        for (const row of rows) {
          const key = fold(row.username);
          if (key !== row.username_safe) changes.push({ id: row.id, key });
        }
        if (rows.length < BATCH) break;
        after = rows[rows.length - 1]!.id;
      }
      for (const change of changes) {
        const holder = await db
          .selectFrom('users')
          .select('id')
          .where('username_safe', '=', change.key)
          .executeTakeFirst();
        if (!holder)
          await db
            .updateTable('users')
            .set({ username_safe: change.key })
            .where('id', '=', change.id)
            .execute();
      }
    },
    async down() {
      // The older keys were lower-cased only; the folded ones still find every ASCII name. Nothing to undo.
    },
  };
};
