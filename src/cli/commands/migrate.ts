// tokend migrate: apply pending schema migrations and say which ran; --dry-run shows them, with their SQL.
// In place on a Ripple-family database it also says how many public API tokens answer to tokend only.
import type { DatabaseConfig } from '../../config.ts';
import type { LeafCommand } from '../command.ts';
import type { Style } from '../format.ts';

/**
 * In place: the public API tokens an earlier tokend stored as SHA-256 (before it stored them as the family
 * does), which the family's API does not know. Counted through the views, so 0 while they do not exist yet.
 */
async function tokendOnlyTokens(
  database: DatabaseConfig,
  timeoutMs: number,
  additionsPending: boolean,
): Promise<number> {
  if (additionsPending) return 0;
  const { openStore } = await import('../../store/database.ts');
  const { countSha256PublicTokens } = await import('../../tokens/repository.ts');
  const { nowSeconds } = await import('../../auth/clock.ts');
  const store = await openStore(database, { migrate: false, poolSize: 1, timeoutMs });
  try {
    return await countSha256PublicTokens(store.db, nowSeconds());
  } finally {
    await store.close();
  }
}

/** The line that says how many tokens answer to tokend only. */
function tokendOnlyLine(style: Style, count: number): string {
  if (count === 0)
    return 'No public API token here answers to tokend only: tokend stores each one it makes as the family stores its tokens.';
  const tokens = count === 1 ? '1 public API token is' : `${count} public API tokens are`;
  return style.yellow(
    `${tokens} stored as SHA-256 (made by a tokend older than this one): they keep ` +
      "working on tokend, but answer to tokend only, not to the rest of the server's API; regenerate " +
      'them on the token page for tokens the whole server accepts.',
  );
}

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
    const { databaseSchemaOf, migrateDatabase, showPendingMigrations } =
      await import('../../store/database.ts');
    const { FAMILY_CHANGES_MIGRATION } = await import('../../store/in-place-migrations.ts');
    const inPlace = databaseSchemaOf(database) === 'ripple';
    if (args.flag('dry-run')) {
      const pending = await showPendingMigrations(database, { timeoutMs: dbTimeoutMs });
      const lines =
        pending.length === 0
          ? ['The database is up to date.']
          : pending.map(
              ({ name, statements }) =>
                `${ctx.style.green('would apply')} ${name}\n${statements.map((s) => `  ${s};`).join('\n')}`,
            );
      if (!inPlace) return { json: { pending }, text: lines.join('\n') };
      const additionsPending = pending.some(({ name }) => name === FAMILY_CHANGES_MIGRATION);
      const count = await tokendOnlyTokens(database, dbTimeoutMs, additionsPending);
      return {
        json: { pending, tokend_only_tokens: count },
        text: [...lines, tokendOnlyLine(ctx.style, count)].join('\n'),
      };
    }
    // Its own handle: a migration may wait for another instance's lock longer than DB_TIMEOUT_MS.
    const applied = await migrateDatabase(database, { timeoutMs: dbTimeoutMs, explicit: true });
    const lines =
      applied.length === 0
        ? ['The database is up to date.']
        : applied.map((name) => `${ctx.style.green('applied')} ${name}`);
    if (!inPlace) return { json: { applied }, text: lines.join('\n') };
    const count = await tokendOnlyTokens(database, dbTimeoutMs, false);
    return {
      json: { applied, tokend_only_tokens: count },
      text: [...lines, tokendOnlyLine(ctx.style, count)].join('\n'),
    };
  },
};
