// tokend migrate: apply pending schema migrations and say which ran.
import { migrateToLatest } from '../../store/migrations.ts';
import type { LeafCommand } from '../command.ts';

export const migrateCommand: LeafCommand = {
  name: 'migrate',
  summary: 'Apply pending schema migrations to DATABASE_URL (serve also does this at start-up)',
  options: {},
  async run(_args, ctx) {
    const { database, dbPoolSize } = await ctx.config();
    const { openStore } = await import('../../store/database.ts');
    const store = await openStore(database, { poolSize: Math.min(dbPoolSize, 2), migrate: false });
    try {
      const applied = await migrateToLatest(store.db, store.dialect);
      const text =
        applied.length === 0
          ? 'The database is up to date.'
          : applied.map((name) => `${ctx.style.green('applied')} ${name}`).join('\n');
      return { json: { applied }, text };
    } finally {
      await store.close();
    }
  },
};
