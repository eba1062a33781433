// tokend import-ripple: brings the users and tokens of a Ripple or Akatsuki database (MySQL/MariaDB)
// into DATABASE_URL, keeping ids, passwords and token secrets working.
import { existsSync } from 'node:fs';
import { nowSeconds } from '../../auth/clock.ts';
import type { Store } from '../../store/database.ts';
import { CliError, type LeafCommand } from '../command.ts';
import { refuseInPlace } from '../in-place.ts';
import { MAX_EXPLICIT_ID, RIPPLE_SOURCE_IDS } from '../../store/ids.ts';
import { terminalText } from '../../shown-text.ts';

/** Skipped rows listed in the text output; --json lists them all. */
const LISTED_SKIPS = 20;

/** Whether two mysql:// URLs name the same database on the same server (users and passwords aside). */
function sameDatabase(a: string, b: string): boolean {
  const where = (url: string) => {
    const u = new URL(url.replace(/^mariadb:/, 'mysql:'));
    return `${u.hostname.replace(/^localhost$/, '127.0.0.1')}:${u.port || '3306'}${decodeURIComponent(u.pathname)}`;
  };
  try {
    return where(a) === where(b);
  } catch {
    return false;
  }
}

export const importRippleCommand: LeafCommand = {
  name: 'import-ripple',
  summary: 'Copy the users and tokens of a Ripple-family MySQL/MariaDB database into DATABASE_URL',
  description:
    'Users keep their ids, names, privileges and passwords (password version 2; version 1 passwords stay\n' +
    'refused with 418 as before). Tokens keep their ids and secrets: a token stored as an MD5 hash\n' +
    'authenticates, and its hash is replaced by a SHA-256 one on its first use. A token with more\n' +
    'privileges than its owner may hold keeps only those it may. A row that cannot be imported is skipped\n' +
    `and reported with the reason: among them ids below 1 or above ${MAX_EXPLICIT_ID} (the ids above are kept for\n` +
    'the rows tokend makes) and usernames "tokend user create" refuses. Rows imported before are left as\n' +
    'they are, so the import can run again (say, once more just before switching clients over): the ids\n' +
    `up to ${RIPPLE_SOURCE_IDS} are left to the source (tokend numbers its own rows above them), so the rows\n` +
    'it makes after an import come over too. A user with an empty password comes over with none (every\n' +
    "password refused). A banned user's tokens keep their privileges for after the ban. The schema of\n" +
    'DATABASE_URL is migrated first.',
  examples: [
    'DATABASE_URL=postgres://tokend@db/tokend tokend import-ripple --from mysql://ripple:PASSWORD@127.0.0.1:3306/ripple --dry-run',
    'tokend import-ripple --from mysql://ripple@127.0.0.1:3306/ripple --json',
  ],
  options: {
    from: {
      type: 'string',
      value: 'URL',
      required: true,
      description: 'the source database: mysql://USER:PASSWORD@HOST:PORT/DATABASE',
    },
    'dry-run': { type: 'boolean', description: 'read and check everything, write nothing' },
  },
  async run(args, ctx) {
    const url = args.string('from');
    const dryRun = args.flag('dry-run');
    const { openRippleSource, RippleSourceError } = await import('../../ripple/source.ts');
    const { importRipple } = await import('../../ripple/import.ts');
    let source;
    try {
      source = await openRippleSource(url);
    } catch (err) {
      if (err instanceof RippleSourceError) throw new CliError(err.message);
      throw err;
    }
    try {
      const { database } = await ctx.config();
      refuseInPlace(database, 'tokend import-ripple');
      if (database.kind === 'mysql' && sameDatabase(database.url, url))
        throw new CliError(
          'DATABASE_URL names the source database itself: tokend needs a database of its own (docs/compatibility.md, step 1)',
        );
      // A dry run writes nothing, not even the destination: a SQLite file that does not exist yet is not
      // made (and migrated) to be read; an empty in-memory database of tokend's schema answers the same.
      const missingFile =
        dryRun && database.kind === 'sqlite' && database.path !== ':memory:' && !existsSync(database.path)
          ? database.path
          : undefined;
      let scratch: Store | undefined;
      if (missingFile !== undefined) {
        const { openStore } = await import('../../store/database.ts');
        scratch = await openStore({ kind: 'sqlite', path: ':memory:' });
      }
      const store = scratch ?? (await ctx.store());
      const terminal = process.stderr.isTTY === true;
      const summary = await importRipple(source, store, {
        dryRun,
        now: nowSeconds(),
        progress: terminal
          ? (table, done, total, skipped) =>
              process.stderr.write(
                `\r${table}: ${done} of ${total} read, ${skipped} skipped${done >= total ? '\n' : ''}`,
              )
          : undefined,
      })
        .catch((err: unknown) => {
          throw err instanceof RippleSourceError ? new CliError(err.message) : err;
        })
        .finally(() => scratch?.close());
      const verb = dryRun ? 'would import' : 'imported';
      const lines = [
        `${dryRun ? 'Dry run: nothing was written. ' : ''}${missingFile !== undefined ? `${missingFile} does not exist yet: it was read as an empty database and not made. ` : ''}From ${summary.source}:`,
        `users: ${summary.users.imported} ${verb}, ${summary.users.already_present} already present`,
        `tokens: ${summary.tokens.imported} ${verb}, ${summary.tokens.already_present} already present` +
          (summary.tokens.privileges_limited > 0
            ? ` (${summary.tokens.privileges_limited} limited to what their owner may hold)`
            : ''),
        `skipped: ${summary.skipped.count}`,
        ...summary.skipped.rows
          .slice(0, LISTED_SKIPS)
          .map((row) => `  ${row.table} #${row.id}: ${terminalText(row.reason)}`),
        ...(summary.skipped.count > LISTED_SKIPS
          ? [`  … and ${summary.skipped.count - LISTED_SKIPS} more (--json lists them all)`]
          : []),
      ];
      return { json: { ...summary }, text: lines.join('\n') };
    } finally {
      await source.close().catch(() => {});
    }
  },
};
