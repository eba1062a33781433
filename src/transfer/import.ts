// tokend import: loads an export (format.ts) into an empty, migrated database, in one transaction, so a
// bad or cut-off file leaves the database as it was. A file is data from outside: ids and usernames meet
// the rules of `user create` (src/store/ids.ts, src/users/username.ts), and tokend computes each
// username_safe itself, so a file cannot give a name a key by which another user would be found.
import type { Db } from '../store/database.ts';
import { followExplicitIds, reserveIds } from '../store/sql-dialect.ts';
import { explicitIdProblem, RIPPLE_SOURCE_IDS } from '../store/ids.ts';
import { usernameProblem } from '../users/username-rules.ts';
import { usernameSafe } from '../users/username.ts';
import { FORMAT, VERSION, TRANSFER_TABLES, tablesIn, type AnyDb, type Cell, type Row } from './format.ts';

const BATCH = 500;

/** The tables whose ids are generated: an id in the file moves the generator on (src/store/ids.ts). */
const GENERATED_IDS = new Set(TRANSFER_TABLES.filter((t) => t.serial).map((t) => t.name));

export class ImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImportError';
  }
}

const isCell = (v: unknown): v is Cell => v === null || typeof v === 'string' || typeof v === 'number';

function parseLine(text: string, lineNo: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ImportError(`line ${lineNo}: not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ImportError(`line ${lineNo}: expected a JSON object`);
  return value as Record<string, unknown>;
}

/**
 * A user row's username checked by the rules every new name meets (src/users/username.ts): why it is
 * refused, or its username_safe, which tokend computes itself and the file must agree with.
 */
function usernameOf(row: Row): { problem: string } | { safe: string } {
  const username = row.username;
  if (typeof username !== 'string') return { problem: 'username must be a string' };
  const problem = usernameProblem(username);
  if (problem !== undefined) return { problem: `username ${JSON.stringify(username)}: ${problem}` };
  const safe = usernameSafe(username);
  if (row.username_safe !== undefined && row.username_safe !== safe)
    return {
      problem:
        `username_safe ${JSON.stringify(row.username_safe)} is not ${JSON.stringify(safe)}, the form ` +
        `tokend gives username ${JSON.stringify(username)} (Unicode NFKC, case-folded, spaces as underscores)`,
    };
  return { safe };
}

/** Imports the lines of an export; returns the rows imported per table. */
export async function importDatabase(
  database: Db,
  lines: AsyncIterable<string>,
): Promise<Record<string, number>> {
  const target = await tablesIn(database as unknown as AnyDb);
  for (const name of target.keys()) {
    const { n } = (await (database as unknown as AnyDb)
      .selectFrom(name)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()) as { n: number };
    if (n > 0)
      throw new ImportError(
        `the target database is not empty (${name} has ${n} rows); import into a new database after "tokend migrate"`,
      );
  }

  const imported = await (database as unknown as AnyDb).transaction().execute(async (trx) => {
    const counts: Record<string, number> = {};
    let headerTables: string[] | undefined;
    let ended = false;
    let current: string | undefined;
    let batch: Row[] = [];
    // The users of the batch by username_safe, with their lines: two names that fold together are
    // refused, within a batch here and against the users written before it in flush (one read a batch).
    const batchNames = new Map<string, { row: Row; line: number }>();
    const sameName = (row: Row, line: number, holder: Cell | undefined) =>
      new ImportError(
        `line ${line}: users: username ${JSON.stringify(row.username)} is the same name as user ` +
          `#${String(holder)}'s once case, width and spaces are folded; nothing was imported`,
      );
    const flush = async () => {
      if (current === undefined || batch.length === 0) return;
      if (current === 'users') {
        const holders = (await trx
          .selectFrom('users')
          .select(['id', 'username_safe'])
          .where('username_safe', 'in', [...batchNames.keys()])
          .execute()) as Array<{ id: number; username_safe: string }>;
        const held = new Map(holders.map((holder) => [holder.username_safe, holder.id]));
        for (const [safe, user] of batchNames)
          if (held.has(safe)) throw sameName(user.row, user.line, held.get(safe));
        batchNames.clear();
      }
      await trx.insertInto(current).values(batch).execute();
      counts[current] = (counts[current] ?? 0) + batch.length;
      batch = [];
    };

    let lineNo = 0;
    for await (const text of lines) {
      lineNo++;
      if (text.trim() === '') continue;
      if (ended) throw new ImportError(`line ${lineNo}: data after the end line`);
      const entry = parseLine(text, lineNo);
      if (headerTables === undefined) {
        if (entry.format !== FORMAT || entry.version !== VERSION)
          throw new ImportError(`line ${lineNo}: not a ${FORMAT} version ${VERSION} file`);
        if (!Array.isArray(entry.tables) || !entry.tables.every((t) => typeof t === 'string'))
          throw new ImportError(`line ${lineNo}: the header lists no tables`);
        headerTables = entry.tables as string[];
        for (const t of headerTables) counts[t] = 0;
        const missing = headerTables.filter((t) => !target.has(t));
        if (missing.length > 0)
          throw new ImportError(
            `the target database has no table ${missing.join(', ')}; run "tokend migrate" with this version of tokend first`,
          );
        continue;
      }
      if (entry.end === true) {
        await flush();
        const expected = entry.counts as Record<string, unknown> | undefined;
        for (const t of headerTables)
          if ((expected?.[t] ?? 0) !== (counts[t] ?? 0))
            throw new ImportError(
              `the end line counts ${String(expected?.[t])} ${t} rows; the file had ${counts[t] ?? 0}`,
            );
        ended = true;
        continue;
      }
      const table = entry.table;
      if (typeof table !== 'string' || !headerTables.includes(table))
        throw new ImportError(`line ${lineNo}: unknown table ${JSON.stringify(table)}`);
      const row = entry.row;
      if (typeof row !== 'object' || row === null || Array.isArray(row))
        throw new ImportError(`line ${lineNo}: "row" must be an object`);
      const columns = target.get(table)!;
      for (const [column, value] of Object.entries(row)) {
        if (!columns.has(column)) throw new ImportError(`line ${lineNo}: ${table} has no column ${column}`);
        if (!isCell(value))
          throw new ImportError(`line ${lineNo}: ${table}.${column} must be a string, number or null`);
      }
      if (GENERATED_IDS.has(table)) {
        const problem = explicitIdProblem((row as Row).id);
        if (problem !== undefined)
          throw new ImportError(`line ${lineNo}: ${table}: ${problem}; nothing was imported`);
      }
      if (table !== current) {
        await flush();
        current = table;
      }
      if (table === 'users') {
        const name = usernameOf(row as Row);
        if ('problem' in name)
          throw new ImportError(`line ${lineNo}: users: ${name.problem}; nothing was imported`);
        const holder = batchNames.get(name.safe);
        if (holder !== undefined) throw sameName(row as Row, lineNo, holder.row.id);
        (row as Row).username_safe = name.safe;
        batchNames.set(name.safe, { row: row as Row, line: lineNo });
      }
      batch.push(row as Row);
      if (batch.length >= BATCH) await flush();
    }
    if (headerTables === undefined) throw new ImportError('the file is empty');
    if (!ended)
      throw new ImportError('the file ends without its end line: it was cut off; nothing was imported');

    // The rows came with their ids: generated ids go on after the largest.
    for (const t of TRANSFER_TABLES.filter((t) => t.serial && headerTables!.includes(t.name)))
      await followExplicitIds(trx, t.name);
    return counts;
  });
  // A database that took rows from a Ripple-family source keeps the range left to that source free, as
  // `tokend import-ripple` set it (src/store/ids.ts). After the transaction: on MySQL the move is an
  // ALTER TABLE, which would commit it.
  if ((imported.ripple_imported_tokens ?? 0) > 0)
    for (const table of ['users', 'tokens'] as const) await reserveIds(database, table, RIPPLE_SOURCE_IDS);
  return imported;
}
