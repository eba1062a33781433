// tokend export / tokend import: move users, tokens and OAuth clients between databases (e.g. from
// SQLite to PostgreSQL) as JSON Lines. Only hashes are stored, so the file holds no secret in clear.
import { nowSeconds } from '../../auth/clock.ts';
import { createReadStream, createWriteStream, statSync, type ReadStream, type WriteStream } from 'node:fs';
import { once, type EventEmitter } from 'node:events';
import { dirname, resolve } from 'node:path';
import { CliError, type LeafCommand } from '../command.ts';
import { refuseInPlace } from '../in-place.ts';
import { MAX_EXPLICIT_ID } from '../../store/ids.ts';

const fileOption = (verb: string) =>
  ({ type: 'string', value: 'PATH', required: true, description: `the JSON Lines file to ${verb}` }) as const;

const summary = (counts: Record<string, number>): string =>
  Object.entries(counts)
    .map(([table, n]) => `${table}: ${n}`)
    .join('\n');

/** Why `path` cannot be read or created, as the end of a sentence ("cannot read x.jsonl: no such file"). */
export function fileProblem(err: unknown, path: string, creating: boolean): string {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ENOENT':
      return creating ? `the directory ${dirname(resolve(path))} does not exist` : 'no such file';
    case 'EEXIST':
      return 'it already exists (export never overwrites a file: choose another name, or remove it)';
    case 'EACCES':
    case 'EPERM':
      return creating
        ? `permission denied (the directory ${dirname(resolve(path))} is not writable for this user)`
        : 'permission denied (the file is not readable for this user)';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'a part of its path is not a directory';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'ENAMETOOLONG':
      return 'the name is too long';
  }
  return err instanceof Error ? err.message : String(err);
}

/** Opens `path` (read, or create-only for writing): resolves once open, or fails with a one-line CliError. */
async function openFile<S extends ReadStream | WriteStream>(
  path: string,
  creating: boolean,
  open: () => S,
): Promise<S> {
  const verb = creating ? 'create' : 'read';
  // Opening a directory for reading succeeds on Linux; the first read would fail.
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    // A missing (or unreachable) path is reported by the open below, with its reason.
  }
  if (isDirectory) throw new CliError(`cannot ${verb} ${path}: it is a directory`);
  const stream = open();
  // Not events.once(stream, 'open'): it rejects with the raw error. This listener stays, so a later
  // error is never unhandled; a once(stream, …) waiting then rejects with it as well.
  const events: EventEmitter = stream;
  await new Promise<void>((opened, failed) => {
    events.on('error', (err) =>
      failed(new CliError(`cannot ${verb} ${path}: ${fileProblem(err, path, creating)}`)),
    );
    events.once('open', () => opened());
  });
  return stream;
}

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
    const out = await openFile(path, true, () => createWriteStream(path, { flags: 'wx', mode: 0o600 }));
    const counts = await exportDatabase(
      store.db,
      async (line) => {
        if (!out.write(`${line}\n`)) await once(out, 'drain');
      },
      nowSeconds(),
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
    'leaves the database unchanged. Ids are kept, so existing tokens keep working; a file with an id\n' +
    `above ${MAX_EXPLICIT_ID} is refused (the ids above it are kept for the rows tokend makes), and so\n` +
    'is a username "tokend user create" would refuse, a username_safe that is not the name as tokend\n' +
    'folds it, or two names that fold to one.',
  examples: ['DATABASE_URL=postgres://tokend@db/tokend tokend import --file tokend.jsonl'],
  options: { file: fileOption('read') },
  async run(args, ctx) {
    refuseInPlace((await ctx.config()).database, 'tokend import');
    const path = args.string('file');
    // The file first: a wrong name must not create (and migrate) the database of DATABASE_URL.
    const input = await openFile(path, false, () => createReadStream(path, { encoding: 'utf8' }));
    try {
      const store = await ctx.store();
      const { importDatabase, ImportError } = await import('../../transfer/import.ts');
      try {
        const counts = await importDatabase(store.db, linesOf(input));
        return { json: { file: path, counts }, text: `imported from ${path}\n${summary(counts)}` };
      } catch (err) {
        if (err instanceof ImportError) throw new CliError(`${path}: ${err.message}`);
        throw err;
      }
    } finally {
      input.destroy();
    }
  },
};
