// tokend migrate: apply pending schema migrations and say which ran; --dry-run shows them, with their SQL.
import type { LeafCommand } from '../command.ts';

export const migrateCommand: LeafCommand = {
  name: 'migrate',
  summary:
    'Apply pending schema migrations to DATABASE_URL (serve also does this at start-up, except on a Ripple-family database)',
  options: {
    'dry-run': {
      type: 'boolean',
      description: 'show the pending migrations and the SQL each would run; apply none',
    },
  },
  async run(args, ctx) {
    const { database, dbTimeoutMs } = await ctx.config();
    const { migrateDatabase, showPendingMigrations } = await import('../../store/database.ts');
    if (args.flag('dry-run')) {
      const pending = await showPendingMigrations(database, { timeoutMs: dbTimeoutMs });
      const text =
        pending.length === 0
          ? 'The database is up to date.'
          : pending
              .map(
                ({ name, statements }) =>
                  `${ctx.style.green('would apply')} ${name}\n${statements.map((s) => `  ${s};`).join('\n')}`,
              )
              .join('\n');
      return { json: { pending }, text };
    }
    // Its own handle: a migration may wait for another instance's lock longer than DB_TIMEOUT_MS.
    const applied = await migrateDatabase(database, { timeoutMs: dbTimeoutMs, explicit: true });
    const text =
      applied.length === 0
        ? 'The database is up to date.'
        : applied.map((name) => `${ctx.style.green('applied')} ${name}`).join('\n');
    return { json: { applied }, text };
  },
};
