// tokend migrate: apply pending schema migrations and say which ran.
import type { LeafCommand } from '../command.ts';

export const migrateCommand: LeafCommand = {
  name: 'migrate',
  summary: 'Apply pending schema migrations to DATABASE_URL (serve also does this at start-up)',
  options: {},
  async run(_args, ctx) {
    const { database, dbTimeoutMs } = await ctx.config();
    const { migrateDatabase } = await import('../../store/database.ts');
    // Its own handle: a migration may wait for another instance's lock longer than DB_TIMEOUT_MS.
    const applied = await migrateDatabase(database, { timeoutMs: dbTimeoutMs });
    const text =
      applied.length === 0
        ? 'The database is up to date.'
        : applied.map((name) => `${ctx.style.green('applied')} ${name}`).join('\n');
    return { json: { applied }, text };
  },
};
