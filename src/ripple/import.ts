// tokend import-ripple: users and tokens of a Ripple-family database copied into tokend's, ids kept.
//
// Each source row is checked on its own (rowToUser, rowToToken: pure), then against what tokend's
// database already holds. A row that cannot be imported is skipped and reported with its reason, never
// dropped silently; a row already imported (same id, same user) is counted as present, so running the
// import again imports nothing twice. Rows are written a page at a time, each page in one transaction.
//
// Ids: the source goes on numbering its rows after an import, so tokend's own generators are moved above
// the range left to the source (RIPPLE_SOURCE_IDS, src/store/ids.ts): a row the source makes later
// keeps its id, free in tokend, and comes over on the next run.
//
// Passwords: version 2 is bcrypt over the MD5 hex of the password, the scheme tokend uses, so it is
// copied as it is; version 1 is copied too and keeps being refused with 418 at sign-in. An empty
// password_md5 (the family's bot accounts) is an account with no password (NO_PASSWORD): every
// password is refused, and its tokens work.
// Tokens: the source stores the MD5 hex of each secret. It is kept in its legacy form (secret.ts), and
// the credential lookup replaces it with the SHA-256 hash on the token's first use. Their privileges are
// limited by what the owner holds, with a ban lifted (unbanned): a banned user's tokens are powerless
// while the ban lasts, as every banned user's are, and have their privileges again once it ends. A private
// token asks, as in the family, for every privilege but Bancho (requestedPrivileges), whatever it stores
// (hanayo's sign-ins store 0): it is stored with what that leaves, as if tokend had made it.
import type { Store } from '../store/database.ts';
import type { ExpressionBuilder, Selectable } from 'kysely';
import { MAX_ID, type Database, type TokenTable, type UserTable } from '../store/schema.ts';
import { limit, requestedPrivileges, unbanned } from '../auth/privileges.ts';
import { CURRENT_PASSWORD_VERSION, LEGACY_PASSWORD_VERSION, NO_PASSWORD } from '../users/passwords.ts';
import { usernameProblem } from '../users/username-rules.ts';
import { usernameSafe } from '../users/username.ts';
import { unstorableDescription } from '../tokens/description.ts';
import { decimalInteger, integerInRange } from '../decimal-integer.ts';
import { legacyHashOfMd5 } from '../auth/secret.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { actOutsideRequest, recordEvents } from '../auth/security-log.ts';
import { reserveIds } from '../store/sql-dialect.ts';
import { explicitIdProblem, MAX_EXPLICIT_ID, RIPPLE_SOURCE_IDS } from '../store/ids.ts';
import {
  RippleSourceError,
  type RippleSource,
  type RippleTokenRow,
  type RippleUserRow,
  type SourceCell,
  type SourceTable,
} from './source.ts';

/** Rows read and written at a time. */
export const ROWS_PER_READ = 1000;

/** Largest privileges value taken: the family's columns are 32-bit signed integers. */
const MAX_PRIVILEGES = 2 ** 31 - 1;

/** A user as written: every column of tokend's users table. */
export type UserToImport = Selectable<UserTable>;

/** A token as written (privileges as in the source until limited; the other columns keep their defaults). */
export type TokenToImport = Pick<
  Selectable<TokenTable>,
  'id' | 'user_id' | 'privileges' | 'description' | 'token_hash' | 'private' | 'last_updated'
>;

export interface SkippedRow {
  table: SourceTable;
  /** the row's id as the source has it */
  id: number | string;
  reason: string;
}

export interface ImportSummary {
  dry_run: boolean;
  source: string;
  users: { imported: number; already_present: number };
  tokens: {
    imported: number;
    already_present: number;
    /** imported by an earlier run and deleted in tokend since: not brought back */
    deleted_in_tokend: number;
    privileges_limited: number;
  };
  skipped: { count: number; rows: SkippedRow[] };
}

export interface ImportOptions {
  dryRun: boolean;
  /** Unix seconds: the import's time (of its security log events), and the sign-up time of users whose source has none */
  now: number;
  /** Called after each page with the rows of a table read and skipped so far, and its row count. */
  progress?: (table: SourceTable, done: number, total: number, skipped: number) => void;
}

type Problem = { problem: string };
const problem = (text: string): Problem => ({ problem: text });

/** An integer cell (the driver may hand big integers over as strings), or undefined. */
function integer(cell: SourceCell | undefined): number | undefined {
  if (typeof cell === 'number') return Number.isSafeInteger(cell) ? cell : undefined;
  if (typeof cell === 'bigint')
    return cell <= BigInt(Number.MAX_SAFE_INTEGER) && cell >= 0n ? Number(cell) : undefined;
  const n = typeof cell === 'string' ? decimalInteger(cell.trim(), 'any') : undefined;
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
}

const text = (cell: SourceCell | undefined): string | undefined =>
  typeof cell === 'string' ? cell : Buffer.isBuffer(cell) ? cell.toString('utf8') : undefined;

/** The id of a source row as the key of the next page: the table is read in id order, so an integer. */
function idKey(table: SourceTable, cell: SourceCell): bigint {
  if (typeof cell === 'bigint') return cell;
  if (typeof cell === 'number' && Number.isSafeInteger(cell)) return BigInt(cell);
  if (typeof cell === 'string' && /^-?\d+$/.test(cell.trim())) return BigInt(cell.trim());
  throw new RippleSourceError(
    `${table}.id holds ${JSON.stringify(String(cell))}, which is not an integer: the import reads ${table} in id order`,
  );
}

/** The id of a source row, for the report: the number when it is one, else the cell as text. */
export const rowId = (cell: SourceCell): number | string => integer(cell) ?? String(cell);

const BCRYPT = /^\$2[abxy]\$\d\d\$[./A-Za-z0-9]{53}$/;
const MD5_HEX = /^[0-9a-fA-F]{32}$/;

/** A source user as tokend stores it, or why it cannot be imported. */
export function rowToUser(row: RippleUserRow, now: number): UserToImport | Problem {
  const id = rowId(row.id);
  const idProblem = explicitIdProblem(id);
  if (idProblem !== undefined || typeof id !== 'number') return problem(idProblem ?? 'id is not an integer');
  const username = text(row.username);
  if (username === undefined) return problem('username is not text');
  // The rule `tokend user create` applies, with its reasons.
  const nameProblem = usernameProblem(username);
  if (nameProblem !== undefined) return problem(`username ${JSON.stringify(username)}: ${nameProblem}`);
  const safe = usernameSafe(username);
  const privileges = integer(row.privileges);
  if (privileges === undefined || privileges < 0 || privileges > MAX_PRIVILEGES)
    return problem(`privileges ${String(row.privileges)} is out of range (0 to ${MAX_PRIVILEGES})`);
  const sourceVersion = integer(row.password_version);
  const hash = text(row.password_md5) ?? '';
  if (sourceVersion !== CURRENT_PASSWORD_VERSION && sourceVersion !== LEGACY_PASSWORD_VERSION)
    return problem(`password_version ${String(row.password_version)} is unknown (expected 1 or 2)`);
  // No password at all (a bot): stored as one that nothing matches, whatever its version said.
  const version = hash === NO_PASSWORD ? CURRENT_PASSWORD_VERSION : sourceVersion;
  if (version === CURRENT_PASSWORD_VERSION && hash !== NO_PASSWORD && !BCRYPT.test(hash))
    return problem('password_version is 2 but password_md5 is not a bcrypt hash');
  const registered = integer(row.register_datetime ?? null);
  return {
    id,
    username: username.trim(),
    username_safe: safe,
    privileges,
    password_hash: hash,
    password_version: version,
    created_at: registered !== undefined && registered > 0 ? registered : now,
  };
}

/** A source token as tokend stores it (privileges not yet limited), or why it cannot be imported. */
export function rowToToken(row: RippleTokenRow): TokenToImport | Problem {
  const id = rowId(row.id);
  const idProblem = explicitIdProblem(id);
  if (idProblem !== undefined || typeof id !== 'number') return problem(idProblem ?? 'id is not an integer');
  const owner = text(row.user) ?? (typeof row.user === 'number' ? String(row.user) : undefined);
  const userId = owner === undefined ? undefined : integerInRange(owner.trim(), 1, MAX_ID);
  if (userId === undefined) return problem(`user ${JSON.stringify(owner ?? null)} is not a user id`);
  const privileges = integer(row.privileges);
  if (privileges === undefined || privileges < 0 || privileges > MAX_PRIVILEGES)
    return problem(`privileges ${String(row.privileges)} is out of range (0 to ${MAX_PRIVILEGES})`);
  const description = text(row.description) ?? '';
  const unstorable = unstorableDescription(description);
  if (unstorable !== undefined) return problem(`description ${unstorable}`);
  const token = text(row.token)?.trim();
  if (token === undefined || !MD5_HEX.test(token)) return problem('token is not the MD5 hex of a secret');
  const lastUpdated = integer(row.last_updated);
  if (lastUpdated === undefined || lastUpdated < 0)
    return problem(`last_updated ${String(row.last_updated)} is not a Unix time`);
  return {
    id,
    user_id: userId,
    privileges,
    description,
    token_hash: legacyHashOfMd5(token),
    private: integer(row.private) === 0 ? 0 : 1,
    last_updated: lastUpdated,
  };
}

const isProblem = <T>(value: T | Problem): value is Problem =>
  typeof value === 'object' && value !== null && 'problem' in value;

/** Database errors that mean "this row's values do not fit", as opposed to a broken connection. */
function isValueRefused(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  // PostgreSQL's data exceptions (class 22); MySQL/MariaDB's value errors.
  return (
    code.startsWith('22') ||
    /^ER_(DATA_TOO_LONG|TRUNCATED_WRONG_VALUE|WARN_DATA_OUT_OF_RANGE|INVALID_CHARACTER_STRING)/.test(code)
  );
}

/** Copies the source's users, then its tokens, into the store's database (nothing, on a dry run). */
export async function importRipple(
  source: RippleSource,
  store: Store,
  options: ImportOptions,
): Promise<ImportSummary> {
  const db = store.db;
  const summary: ImportSummary = {
    dry_run: options.dryRun,
    source: source.address,
    users: { imported: 0, already_present: 0 },
    tokens: { imported: 0, already_present: 0, deleted_in_tokend: 0, privileges_limited: 0 },
    skipped: { count: 0, rows: [] },
  };
  const skippedIn: Record<SourceTable, number> = { users: 0, tokens: 0 };
  const skip = (table: SourceTable, id: number | string, reason: string) => {
    summary.skipped.count++;
    skippedIn[table]++;
    summary.skipped.rows.push({ table, id, reason });
  };
  // The source users whose tokens may come along: imported now, or by an earlier run (same id, same
  // name). A token of any other user id, even one tokend has, is skipped: it is not that user's.
  const accepted = new Set<number>();
  const skippedUsers = new Set<number>();
  // What a dry run would have written, which the database cannot answer for.
  const newUsers = new Map<number, number>(); // id → privileges
  const newNames = new Map<string, number>(); // username_safe → id
  const newHashes = new Map<string, number>(); // token_hash → id

  /**
   * Inserts a page of rows in one transaction (with, for tokens, their ids in ripple_imported_tokens).
   * When the page is refused, row by row: a row that collides with one written meanwhile, or whose
   * values the database refuses, is skipped with the reason.
   */
  const importAct = actOutsideRequest('import', options.now);
  const write = async <Row extends { id: number }>(
    table: 'users' | 'tokens',
    rows: Row[],
    onSkipped: (row: Row, reason: string) => void,
  ): Promise<Row[]> => {
    if (options.dryRun || rows.length === 0) return rows;
    const insert = (page: Row[]) =>
      db.transaction().execute(async (t) => {
        await t
          .insertInto(table)
          .values(page as never)
          .execute();
        if (table === 'tokens') {
          await t
            .insertInto('ripple_imported_tokens')
            .values(
              page.map((row) => ({ id: row.id, token_hash: (row as unknown as TokenToImport).token_hash })),
            )
            .execute();
          // Each token brought over is its owner's `token.created` event, means import.
          await recordEvents(
            t,
            importAct,
            page.map((row) => ({
              userId: (row as unknown as TokenToImport).user_id,
              kind: 'token.created',
              tokenId: row.id,
              detail: 'import-ripple',
            })),
          );
        }
      });
    try {
      await insert(rows);
      return rows;
    } catch (err) {
      if (!isUniqueViolation(err) && !isValueRefused(err)) throw err;
    }
    const written: Row[] = [];
    for (const row of rows) {
      try {
        await insert([row]);
        written.push(row);
      } catch (err) {
        if (isUniqueViolation(err))
          onSkipped(
            row,
            `a ${table === 'users' ? 'user' : 'token'} with this id or ${table === 'users' ? 'name' : 'secret'} was created in tokend during the import`,
          );
        else if (isValueRefused(err))
          onSkipped(
            row,
            `the database refused its values (${err instanceof Error ? err.message : String(err)})`,
          );
        else throw err;
      }
    }
    return written;
  };

  // Ids generated from now on (a running server making tokens, `user create`) go above the range left to
  // the source and above the largest id that can be imported, never above MAX_EXPLICIT_ID: the rows the
  // source makes after this run keep ids tokend has not used (src/store/ids.ts).
  if (!options.dryRun)
    for (const table of ['users', 'tokens'] as const)
      await reserveIds(db, table, Math.max(RIPPLE_SOURCE_IDS, await source.maxId(table, MAX_EXPLICIT_ID)));

  /**
   * A source table page by page in id order, every row of it (ids below 1 too, to be reported as
   * skipped); progress is told once a page has been handled.
   */
  async function* pagesOf<Row extends { id: SourceCell }>(
    table: SourceTable,
    read: (after: bigint | undefined, limit: number) => Promise<Row[]>,
  ): AsyncGenerator<Row[]> {
    const total = await source.count(table);
    let done = 0;
    for (let after: bigint | undefined; ;) {
      const page = await read(after, ROWS_PER_READ);
      if (page.length === 0) return;
      done += page.length;
      after = idKey(table, page[page.length - 1]!.id);
      yield page;
      options.progress?.(table, done, total, skippedIn[table]);
    }
  }

  // Users.
  for await (const page of pagesOf('users', (after, limit) => source.users(after, limit))) {
    const candidates: UserToImport[] = [];
    for (const row of page) {
      const user = rowToUser(row, options.now);
      if (isProblem(user)) {
        skip('users', rowId(row.id), user.problem);
        const id = integer(row.id);
        if (id !== undefined) skippedUsers.add(id);
      } else candidates.push(user);
    }
    if (candidates.length > 0) {
      // One read for both checks: the rows holding one of these ids or one of these names.
      const holders = await db
        .selectFrom('users')
        .select(['id', 'username_safe'])
        .where((eb) =>
          eb.or([
            eb(
              'id',
              'in',
              candidates.map((u) => u.id),
            ),
            eb(
              'username_safe',
              'in',
              candidates.map((u) => u.username_safe),
            ),
          ]),
        )
        .execute();
      const byId = new Map(holders.map((u) => [u.id, u.username_safe]));
      const byName = new Map(holders.map((u) => [u.username_safe, u.id]));
      const refuse = (user: UserToImport, reason: string) => {
        skip('users', user.id, reason);
        skippedUsers.add(user.id);
      };
      const toWrite: UserToImport[] = [];
      for (const user of candidates) {
        const present = byId.get(user.id);
        const holder = byName.get(user.username_safe) ?? newNames.get(user.username_safe);
        if (present !== undefined) {
          if (present === user.username_safe) {
            summary.users.already_present++;
            accepted.add(user.id);
          } else refuse(user, `id ${user.id} is already another user's in tokend`);
        } else if (holder !== undefined && holder !== user.id) {
          refuse(
            user,
            `username ${JSON.stringify(user.username)} is the same name as user #${holder}'s once case, width and spaces are folded`,
          );
        } else {
          newNames.set(user.username_safe, user.id);
          toWrite.push(user);
        }
      }
      const written = await write('users', toWrite, (user, reason) => refuse(user, reason));
      for (const user of written) {
        accepted.add(user.id);
        if (options.dryRun) newUsers.set(user.id, user.privileges);
      }
      summary.users.imported += written.length;
      // Written rows are in the database now; only a dry run must remember them.
      if (!options.dryRun) newNames.clear();
    }
  }

  // Tokens.
  for await (const page of pagesOf('tokens', (after, limit) => source.tokens(after, limit))) {
    const candidates: TokenToImport[] = [];
    for (const row of page) {
      const token = rowToToken(row);
      if (isProblem(token)) skip('tokens', rowId(row.id), token.problem);
      else candidates.push(token);
    }
    if (candidates.length > 0) {
      const ids = candidates.map((t) => t.id);
      const owners = new Map(
        (
          await db
            .selectFrom('users')
            .select(['id', 'privileges'])
            .where('id', 'in', [...new Set(candidates.map((t) => t.user_id))])
            .execute()
        ).map((u) => [u.id, u.privileges]),
      );
      // One read per table for both checks: the rows holding one of these ids or one of these hashes.
      const hashes = candidates.map((t) => t.token_hash);
      const idOrHash = (eb: ExpressionBuilder<Database, 'tokens' | 'ripple_imported_tokens'>) =>
        eb.or([eb('id', 'in', ids), eb('token_hash', 'in', hashes)]);
      const held = await db
        .selectFrom('tokens')
        .select(['id', 'user_id', 'token_hash'])
        .where(idOrHash)
        .execute();
      const byId = new Map(held.map((t) => [t.id, t.user_id]));
      const byHash = new Map(held.map((t) => [t.token_hash, t.id]));
      const imported = await db
        .selectFrom('ripple_imported_tokens')
        .select(['id', 'token_hash'])
        .where(idOrHash)
        .execute();
      const importedBefore = new Set(imported.map((t) => t.id));
      const secretImportedAs = new Map(imported.map((t) => [t.token_hash, t.id]));
      const toWrite: TokenToImport[] = [];
      for (const token of candidates) {
        const present = byId.get(token.id);
        const ownerPrivileges = owners.get(token.user_id) ?? newUsers.get(token.user_id);
        const sameSecret = byHash.get(token.token_hash) ?? newHashes.get(token.token_hash);
        if (present !== undefined && importedBefore.has(token.id) && present === token.user_id) {
          summary.tokens.already_present++;
        } else if (present === undefined && importedBefore.has(token.id)) {
          summary.tokens.deleted_in_tokend++;
        } else if (present !== undefined) {
          skip('tokens', token.id, `id ${token.id} is already another token's in tokend`);
        } else if (!accepted.has(token.user_id) || ownerPrivileges === undefined) {
          skip(
            'tokens',
            token.id,
            skippedUsers.has(token.user_id)
              ? `its owner, user #${token.user_id}, was skipped`
              : `its owner, user #${token.user_id}, is not in the source database`,
          );
        } else if (sameSecret !== undefined) {
          skip('tokens', token.id, `it has the same secret as token #${sameSecret}`);
        } else if (secretImportedAs.has(token.token_hash)) {
          skip(
            'tokens',
            token.id,
            `it has the same secret as token #${secretImportedAs.get(token.token_hash)}, imported before`,
          );
        } else {
          const privileges = limit(requestedPrivileges(token, true), unbanned(ownerPrivileges));
          // limited: a privilege it stored is dropped (a private token asks for more than it stores)
          if ((BigInt(token.privileges) & ~BigInt(privileges)) !== 0n) summary.tokens.privileges_limited++;
          newHashes.set(token.token_hash, token.id);
          toWrite.push({ ...token, privileges });
        }
      }
      const written = await write('tokens', toWrite, (token, reason) => skip('tokens', token.id, reason));
      summary.tokens.imported += written.length;
      if (!options.dryRun) newHashes.clear();
    }
  }
  return summary;
}
