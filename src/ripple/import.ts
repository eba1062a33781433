// tokend import-ripple: users and tokens of a Ripple-family database copied into tokend's, ids kept.
//
// Each source row is checked on its own (rowToUser, rowToToken: pure), then against what tokend's
// database already holds. A row that cannot be imported is skipped and reported with its reason, never
// dropped silently; a row already imported (same id, same user) is counted as present, so running the
// import again imports nothing twice. Rows are written a page at a time, each page in one transaction.
//
// Passwords: version 2 is bcrypt over the MD5 hex of the password, the scheme tokend uses, so it is
// copied as it is; version 1 is copied too and keeps being refused with 418 at sign-in.
// Tokens: the source stores the MD5 hex of each secret. It is kept in its legacy form (secret.ts), and
// the credential lookup replaces it with the SHA-256 hash on the token's first use.
import { sql } from 'kysely';
import type { Store } from '../store/database.ts';
import { MAX_ID } from '../store/schema.ts';
import { limit } from '../privileges.ts';
import { LEGACY_PASSWORD_VERSION } from '../users/passwords.ts';
import { usernameProblem, usernameSafe } from '../users/username.ts';
import { MAX_DESCRIPTION_LENGTH } from '../tokens/repository.ts';
import { legacyHashOfMd5 } from '../tokens/secret.ts';
import { isUniqueViolation } from '../store/errors.ts';
import type { RippleSource, RippleTokenRow, RippleUserRow, SourceCell, SourceTable } from './source.ts';

/** Rows read and written at a time. */
export const PAGE_SIZE = 1000;

/** Largest privileges value taken: the family's columns are 32-bit signed integers. */
const MAX_PRIVILEGES = 2 ** 31 - 1;

export interface UserToImport {
  id: number;
  username: string;
  username_safe: string;
  privileges: number;
  password_hash: string;
  password_version: number;
  created_at: number;
}

export interface TokenToImport {
  id: number;
  user_id: number;
  /** as in the source; limited to what the owner may hold when written */
  privileges: number;
  description: string;
  token_hash: string;
  private: number;
  last_updated: number;
}

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
  tokens: { imported: number; already_present: number; privileges_limited: number };
  skipped: { count: number; rows: SkippedRow[] };
}

export interface ImportOptions {
  dryRun: boolean;
  /** Unix seconds: the sign-up time of users whose source has none */
  now: number;
  /** Called after each page with the rows read of a table so far and its row count. */
  progress?: (table: SourceTable, done: number, total: number) => void;
}

type Problem = { problem: string };
const problem = (text: string): Problem => ({ problem: text });

/** An integer cell (the driver may hand big integers over as strings), or undefined. */
function integer(cell: SourceCell | undefined): number | undefined {
  if (typeof cell === 'number') return Number.isSafeInteger(cell) ? cell : undefined;
  if (typeof cell === 'bigint')
    return cell <= BigInt(Number.MAX_SAFE_INTEGER) && cell >= 0n ? Number(cell) : undefined;
  if (typeof cell === 'string' && /^-?\d{1,16}$/.test(cell.trim())) {
    const n = Number(cell.trim());
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

const text = (cell: SourceCell | undefined): string | undefined =>
  typeof cell === 'string' ? cell : Buffer.isBuffer(cell) ? cell.toString('utf8') : undefined;

/** The id of a source row, for the report: the number when it is one, else the cell as text. */
export const rowId = (cell: SourceCell): number | string => integer(cell) ?? String(cell);

const BCRYPT = /^\$2[abxy]\$\d\d\$[./A-Za-z0-9]{53}$/;
const MD5_HEX = /^[0-9a-fA-F]{32}$/;

/** A source user as tokend stores it, or why it cannot be imported. */
export function rowToUser(row: RippleUserRow, now: number): UserToImport | Problem {
  const id = integer(row.id);
  if (id === undefined || id < 1 || id > MAX_ID) return problem(`id is out of range (1 to ${MAX_ID})`);
  const username = text(row.username);
  if (username === undefined) return problem('username is not text');
  const nameProblem = usernameProblem(username);
  if (nameProblem !== undefined) return problem(`username ${JSON.stringify(username)}: ${nameProblem}`);
  const privileges = integer(row.privileges);
  if (privileges === undefined || privileges < 0 || privileges > MAX_PRIVILEGES)
    return problem(`privileges ${String(row.privileges)} is out of range (0 to ${MAX_PRIVILEGES})`);
  const version = integer(row.password_version);
  const hash = text(row.password_md5) ?? '';
  if (version === 2) {
    if (!BCRYPT.test(hash)) return problem('password_version is 2 but password_md5 is not a bcrypt hash');
  } else if (version !== LEGACY_PASSWORD_VERSION) {
    return problem(`password_version ${String(row.password_version)} is unknown (expected 1 or 2)`);
  }
  const registered = integer(row.register_datetime ?? null);
  return {
    id,
    username: username.trim(),
    username_safe: usernameSafe(username),
    privileges,
    password_hash: hash,
    password_version: version,
    created_at: registered !== undefined && registered > 0 ? registered : now,
  };
}

/** A source token as tokend stores it (privileges not yet limited), or why it cannot be imported. */
export function rowToToken(row: RippleTokenRow): TokenToImport | Problem {
  const id = integer(row.id);
  if (id === undefined || id < 1 || id > MAX_ID) return problem(`id is out of range (1 to ${MAX_ID})`);
  const owner = text(row.user) ?? (typeof row.user === 'number' ? String(row.user) : undefined);
  const userId = owner !== undefined && /^\d{1,10}$/.test(owner.trim()) ? Number(owner.trim()) : undefined;
  if (userId === undefined || userId < 1 || userId > MAX_ID)
    return problem(`user ${JSON.stringify(owner ?? null)} is not a user id`);
  const privileges = integer(row.privileges);
  if (privileges === undefined || privileges < 0 || privileges > MAX_PRIVILEGES)
    return problem(`privileges ${String(row.privileges)} is out of range (0 to ${MAX_PRIVILEGES})`);
  const description = text(row.description) ?? '';
  if (description.length > MAX_DESCRIPTION_LENGTH)
    return problem(`description is longer than ${MAX_DESCRIPTION_LENGTH} characters`);
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
    tokens: { imported: 0, already_present: 0, privileges_limited: 0 },
    skipped: { count: 0, rows: [] },
  };
  const skip = (table: SourceTable, id: number | string, reason: string) => {
    summary.skipped.count++;
    summary.skipped.rows.push({ table, id, reason });
  };
  // What this run imported (or, on a dry run, would have): the database answers for everything else,
  // except on a dry run, where nothing was written.
  const newUsers = new Map<number, number>(); // id → privileges (dry run only)
  const newNames = new Map<string, number>(); // username_safe → id
  const newHashes = new Map<string, number>(); // token_hash → id

  /** Inserts rows a page at a time; a row that collides with one written meanwhile is skipped. */
  const write = async <Row extends { id: number }>(
    table: 'users' | 'tokens',
    rows: Row[],
    onSkipped: (row: Row) => void,
  ): Promise<Row[]> => {
    if (options.dryRun || rows.length === 0) return rows;
    try {
      await db.transaction().execute((trx) =>
        trx
          .insertInto(table)
          .values(rows as never)
          .execute(),
      );
      return rows;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const written: Row[] = [];
    for (const row of rows) {
      try {
        await db
          .insertInto(table)
          .values(row as never)
          .execute();
        written.push(row);
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        onSkipped(row);
      }
    }
    return written;
  };

  // Users.
  const totalUsers = await source.count('users');
  let done = 0;
  for (let after = 0; ;) {
    const page = await source.users(after, PAGE_SIZE);
    if (page.length === 0) break;
    done += page.length;
    after = integer(page[page.length - 1]!.id) ?? after;
    const candidates: UserToImport[] = [];
    for (const row of page) {
      const user = rowToUser(row, options.now);
      if (isProblem(user)) skip('users', rowId(row.id), user.problem);
      else candidates.push(user);
    }
    if (candidates.length > 0) {
      const byId = new Map(
        (
          await db
            .selectFrom('users')
            .select(['id', 'username_safe'])
            .where(
              'id',
              'in',
              candidates.map((u) => u.id),
            )
            .execute()
        ).map((u) => [u.id, u.username_safe]),
      );
      const byName = new Map(
        (
          await db
            .selectFrom('users')
            .select(['id', 'username_safe'])
            .where(
              'username_safe',
              'in',
              candidates.map((u) => u.username_safe),
            )
            .execute()
        ).map((u) => [u.username_safe, u.id]),
      );
      const toWrite: UserToImport[] = [];
      for (const user of candidates) {
        const present = byId.get(user.id);
        const holder = byName.get(user.username_safe) ?? newNames.get(user.username_safe);
        if (present !== undefined) {
          if (present === user.username_safe) summary.users.already_present++;
          else skip('users', user.id, `id ${user.id} is already another user's in tokend`);
        } else if (holder !== undefined && holder !== user.id) {
          skip(
            'users',
            user.id,
            `username ${JSON.stringify(user.username)} is the same name as user #${holder}'s once case, width and spaces are folded`,
          );
        } else {
          newNames.set(user.username_safe, user.id);
          toWrite.push(user);
        }
      }
      const written = await write('users', toWrite, (user) =>
        skip('users', user.id, 'a user with this id or name was created in tokend during the import'),
      );
      if (options.dryRun) for (const user of written) newUsers.set(user.id, user.privileges);
      summary.users.imported += written.length;
      // Written rows are in the database now; only a dry run must remember them.
      if (!options.dryRun) newNames.clear();
    }
    options.progress?.('users', done, totalUsers);
  }

  // Tokens.
  const totalTokens = await source.count('tokens');
  done = 0;
  for (let after = 0; ;) {
    const page = await source.tokens(after, PAGE_SIZE);
    if (page.length === 0) break;
    done += page.length;
    after = integer(page[page.length - 1]!.id) ?? after;
    const candidates: TokenToImport[] = [];
    for (const row of page) {
      const token = rowToToken(row);
      if (isProblem(token)) skip('tokens', rowId(row.id), token.problem);
      else candidates.push(token);
    }
    if (candidates.length > 0) {
      const owners = new Map(
        (
          await db
            .selectFrom('users')
            .select(['id', 'privileges'])
            .where('id', 'in', [...new Set(candidates.map((t) => t.user_id))])
            .execute()
        ).map((u) => [u.id, Number(u.privileges)]),
      );
      const byId = new Map(
        (
          await db
            .selectFrom('tokens')
            .select(['id', 'user_id'])
            .where(
              'id',
              'in',
              candidates.map((t) => t.id),
            )
            .execute()
        ).map((t) => [t.id, t.user_id]),
      );
      const byHash = new Map(
        (
          await db
            .selectFrom('tokens')
            .select(['id', 'token_hash'])
            .where(
              'token_hash',
              'in',
              candidates.map((t) => t.token_hash),
            )
            .execute()
        ).map((t) => [t.token_hash.trimEnd(), t.id]),
      );
      const toWrite: TokenToImport[] = [];
      for (const token of candidates) {
        const ownerPrivileges = owners.get(token.user_id) ?? newUsers.get(token.user_id);
        const present = byId.get(token.id);
        const sameSecret = byHash.get(token.token_hash) ?? newHashes.get(token.token_hash);
        if (present !== undefined) {
          if (present === token.user_id) summary.tokens.already_present++;
          else skip('tokens', token.id, `id ${token.id} is already another user's token in tokend`);
        } else if (ownerPrivileges === undefined) {
          skip(
            'tokens',
            token.id,
            `its owner, user #${token.user_id}, is not in tokend (missing from the source, or skipped)`,
          );
        } else if (sameSecret !== undefined) {
          skip('tokens', token.id, `it has the same secret as token #${sameSecret}`);
        } else {
          const privileges = limit(token.privileges, ownerPrivileges);
          if (privileges !== token.privileges) summary.tokens.privileges_limited++;
          newHashes.set(token.token_hash, token.id);
          toWrite.push({ ...token, privileges });
        }
      }
      const written = await write('tokens', toWrite, (token) =>
        skip('tokens', token.id, 'a token with this id or secret was created in tokend during the import'),
      );
      summary.tokens.imported += written.length;
      if (!options.dryRun) newHashes.clear();
    }
    options.progress?.('tokens', done, totalTokens);
  }

  // Explicit ids leave PostgreSQL's identity sequences behind; move each past the largest id.
  // (MySQL's AUTO_INCREMENT and SQLite's rowid follow explicit ids by themselves.)
  if (!options.dryRun && store.dialect === 'postgres')
    for (const table of ['users', 'tokens'] as const)
      await sql`SELECT setval(pg_get_serial_sequence(${table}, 'id'), COALESCE((SELECT MAX(id) FROM ${sql.table(table)}), 0) + 1, false)`.execute(
        db,
      );
  return summary;
}
