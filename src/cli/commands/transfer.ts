// tokend export / tokend import: move users, tokens and OAuth clients between databases (e.g. from
// SQLite to PostgreSQL) as JSON Lines. Only hashes are stored, so the file holds no secret in clear.
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { CliError, type LeafCommand } from '../command.ts';

const fileOption = (verb: string) =>
  ({ type: 'string', value: 'PATH', required: true, description: `the JSON Lines file to ${verb}` }) as const;

const summary = (counts: Record<string, number>): string =>
  Object.entries(counts)
    .map(([table, n]) => `${table}: ${n}`)
    .join('\n');

/** Lines of a stream, read only once iteration starts (readline drops lines nobody is iterating yet). */
async function* linesOf(input: NodeJS.ReadableStream): AsyncGenerator<string> {
  // Looked up here, not imported: the server loads this module too, and never reads lines.
  const { createInterface } = process.getBuiltinModule('node:readline');
  yield* createInterface({ input, crlfDelay: Infinity });
}

export const exportCommand: LeafCommand = {
  name: 'export',
  summary: 'Write the users, tokens and OAuth clients of DATABASE_URL to a JSON Lines file',
  description:
    'The file is created and must not exist yet. It holds password and token hashes, never secrets in\n' +
    'clear, but treat it like the database itself. Load it elsewhere with "tokend import".',
  examples: ['DATABASE_URL=sqlite:data/tokend.db tokend export --file tokend.jsonl'],
  options: { file: fileOption('create') },
  async run(args, ctx) {
    const path = args.string('file');
    const store = await ctx.store();
    const { exportDatabase } = await import('../../transfer/export.ts');
    const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
    await Promise.race([
      once(out, 'open'),
      once(out, 'error').then(([err]) => {
        throw new CliError(`cannot create ${path}: ${(err as Error).message}`);
      }),
    ]);
    const counts = await exportDatabase(
      store.db,
      async (line) => {
        if (!out.write(`${line}\n`)) await once(out, 'drain');
      },
      Math.floor(Date.now() / 1000),
    );
    out.end();
    await once(out, 'finish');
    return { json: { file: path, counts }, text: `exported to ${path}\n${summary(counts)}` };
  },
};

export const importCommand: LeafCommand = {
  name: 'import',
  summary: 'Load a file made by "tokend export" into DATABASE_URL, which must be empty',
  description:
    'The schema is migrated first. Everything is loaded in one transaction: a bad or cut-off file\n' +
    'leaves the database unchanged. Ids are kept, so existing tokens keep working.',
  examples: ['DATABASE_URL=postgres://tokend@db/tokend tokend import --file tokend.jsonl'],
  options: { file: fileOption('read') },
  async run(args, ctx) {
    const path = args.string('file');
    const store = await ctx.store();
    const { importDatabase, ImportError } = await import('../../transfer/import.ts');
    const input = createReadStream(path, { encoding: 'utf8' });
    await Promise.race([
      once(input, 'open'),
      once(input, 'error').then(([err]) => {
        throw new CliError(`cannot read ${path}: ${(err as Error).message}`);
      }),
    ]);
    try {
      const counts = await importDatabase(store.db, store.dialect, linesOf(input));
      return { json: { file: path, counts }, text: `imported from ${path}\n${summary(counts)}` };
    } catch (err) {
      if (err instanceof ImportError) throw new CliError(`${path}: ${err.message}`);
      throw err;
    } finally {
      input.destroy();
    }
  },
};
