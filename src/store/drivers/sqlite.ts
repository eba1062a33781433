// SQLite through node:sqlite: its DatabaseSync adapted to the small interface Kysely's SqliteDialect
// drives (caching prepared statements so repeated queries skip SQLite's parser), a query-only second
// connection for the per-request queries, and the words for a file that cannot be opened.
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync, type SQLInputValue } from 'node:sqlite';
import { Kysely, SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';
import type { DatabaseConfig } from '../../config.ts';
import type { Db } from '../types.ts';
import type { Database } from '../schema.ts';
import { sqliteOpenError } from '../open-errors.ts';
import { hotQueryThrough, type HotQuery, type OpenedDatabase } from './driver.ts';

type SqliteConfig = Extract<DatabaseConfig, { kind: 'sqlite' }>;

const STATEMENT_CACHE_SIZE = 256;

function bind(parameters: readonly unknown[]): SQLInputValue[] {
  return parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : (p as SQLInputValue)));
}

class CachedStatement implements SqliteStatement {
  readonly reader: boolean;
  private readonly stmt: StatementSync;
  constructor(stmt: StatementSync) {
    this.stmt = stmt;
    this.reader = stmt.columns().length > 0;
  }
  all(parameters: ReadonlyArray<unknown>): unknown[] {
    return this.stmt.all(...bind(parameters));
  }
  run(parameters: ReadonlyArray<unknown>) {
    return this.stmt.run(...bind(parameters));
  }
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    return this.stmt.iterate(...bind(parameters));
  }
}

export class NodeSqliteDatabase implements SqliteDatabase {
  readonly raw: DatabaseSync;
  private readonly cache = new Map<string, CachedStatement>();

  constructor(path: string) {
    // A busy timeout lets the CLI and the server write to one file at once.
    this.raw = new DatabaseSync(path, { timeout: 5000 });
    // WAL: readers never block the writer. synchronous=FULL: a commit is on disk before we answer,
    // so an acknowledged token survives a crash of the process or of the machine.
    this.raw.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;');
  }

  prepare(query: string): SqliteStatement {
    // Kysely begins a transaction with a plain (deferred) `begin`. A transaction that reads before it
    // writes (minting counts the owner's tokens first) must not start as a reader: when another process
    // on the file (WORKERS > 1, the CLI) commits meanwhile, SQLite cannot upgrade it and answers
    // "database is locked" at once, whatever the busy timeout. BEGIN IMMEDIATE takes the write lock first,
    // waiting its turn through the busy timeout. Every transaction tokend runs writes.
    const sql = query === 'begin' ? 'begin immediate' : query;
    let stmt = this.cache.get(sql);
    if (stmt === undefined) {
      stmt = new CachedStatement(this.raw.prepare(sql));
      if (this.cache.size >= STATEMENT_CACHE_SIZE)
        this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(sql, stmt);
    }
    return stmt;
  }

  close(): void {
    this.cache.clear();
    if (this.raw.isOpen) this.raw.close();
  }
}

/**
 * A second connection to the same file that can only read (PRAGMA query_only), for the queries of the
 * per-request path (the credential lookup): statements prepared once and run synchronously. In WAL
 * mode each read sees the last commit, never the uncommitted writes of a transaction open on the main
 * connection. Opened on first use.
 */
export class QueryOnlySqliteDatabase {
  private readonly path: string;
  private raw: DatabaseSync | undefined;
  private closed = false;
  constructor(path: string) {
    this.path = path;
  }

  private open(): DatabaseSync {
    // A lookup after the store was closed fails as on the main connection, instead of reopening.
    if (this.closed) throw new Error('the database connection is closed');
    if (this.raw === undefined) {
      const raw = new DatabaseSync(this.path, { timeout: 5000 });
      raw.exec('PRAGMA query_only = ON;');
      this.raw = raw;
    }
    return this.raw;
  }

  /**
   * Every row of `sql` for the parameters; the statement is prepared on the first call. SQLite hands
   * rows over as arrays (no column name to look up per row), and they are named here.
   */
  rows<Row>(sql: string): (parameters: readonly unknown[]) => Row[] {
    let stmt: StatementSync | undefined;
    let names: string[] = [];
    return (parameters) => {
      if (stmt === undefined) {
        stmt = this.open().prepare(sql);
        stmt.setReturnArrays(true);
        names = stmt.columns().map((column) => column.name);
      }
      const found = stmt.all(...bind(parameters)) as unknown as unknown[][];
      return found.map((values) => {
        const row: Record<string, unknown> = {};
        for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
        return row as Row;
      });
    };
  }

  close(): void {
    this.closed = true;
    if (this.raw?.isOpen) this.raw.close();
    this.raw = undefined;
  }
}

// ---- before opening a file -------------------------------------------------------------------------

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** The user this process runs as, for "not writable for user …". */
function whoAmI(): string {
  try {
    return `user ${userInfo().username}`;
  } catch {
    return `uid ${process.getuid?.() ?? '?'}`;
  }
}

/** Why a file-system call on `what` failed, in words (for the errors SQLite's own messages leave vague). */
function refusal(err: unknown, what: string): string {
  switch (codeOf(err)) {
    case 'EACCES':
    case 'EPERM':
      return `${what}: permission denied for ${whoAmI()}`;
    case 'EROFS':
      return `${what} is on a read-only file system`;
    case 'ENOSPC':
      return `no space left on the device of ${what}`;
    default:
      return `${what}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * Why tokend cannot open (and write) the SQLite database at `path`, in words naming the path, or
 * undefined when it can. A missing directory is created when its parent exists (so the default
 * data/tokend.db works in a fresh checkout); a longer missing chain is more likely a typo, and is reported.
 * SQLite in WAL mode also creates `-wal` and `-shm` files beside the database, so the directory must be
 * writable too.
 */
export function sqliteFileProblem(path: string): string | undefined {
  const file = resolve(path);
  const dir = dirname(file);
  // The nearest ancestor of the file that exists.
  let existing = dir;
  for (;;) {
    try {
      if (!statSync(existing).isDirectory()) return `${existing} is a file, not a directory`;
      break;
    } catch (err) {
      const code = codeOf(err);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return refusal(err, existing);
      const up = dirname(existing);
      if (up === existing) return `the directory ${dir} does not exist`;
      existing = up;
    }
  }
  if (existing !== dir) {
    if (existing !== dirname(dir)) return `the directory ${dir} does not exist (nor does ${dirname(dir)})`;
    try {
      mkdirSync(dir);
    } catch (err) {
      return `the directory ${dir} does not exist and cannot be created: ${refusal(err, dirname(dir))}`;
    }
  }
  try {
    const stats = statSync(file);
    if (stats.isDirectory()) return `${file} is a directory, not a database file`;
    try {
      accessSync(file, constants.R_OK | constants.W_OK);
    } catch (err) {
      const code = codeOf(err);
      return code === 'EACCES' || code === 'EPERM'
        ? `the file ${file} is read-only for ${whoAmI()}`
        : refusal(err, file);
    }
  } catch (err) {
    if (codeOf(err) !== 'ENOENT') return refusal(err, file);
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    const code = codeOf(err);
    return code === 'EACCES' || code === 'EPERM'
      ? `the directory ${dir} is not writable for ${whoAmI()} (SQLite writes its -wal and -shm files beside the database)`
      : refusal(err, dir);
  }
  return undefined;
}

// ---- opening ---------------------------------------------------------------------------------------

/** A Kysely handle on the SQLite database of `config`, or a DatabaseOpenError saying why there is none. */
export function sqliteKysely(config: SqliteConfig): Db {
  let database: NodeSqliteDatabase;
  if (config.path !== ':memory:') {
    const problem = sqliteFileProblem(config.path);
    if (problem !== undefined) throw sqliteOpenError(config, problem);
  }
  try {
    database = new NodeSqliteDatabase(config.path);
  } catch (err) {
    // What the checks above cannot see: a file that is no SQLite database, a lock, a full disk.
    throw sqliteOpenError(config, `${config.path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
}

/**
 * The SQLite database of `config` for a store. On a file, the per-request queries read synchronously
 * on a query-only connection of their own (QueryOnlySqliteDatabase), with no query builder in between;
 * an in-memory database exists only on its own handle, so they run through Kysely there.
 */
export function openSqlite(config: SqliteConfig): OpenedDatabase {
  const db = sqliteKysely(config);
  if (config.path === ':memory:') return { db, hotQuery: hotQueryThrough(db), close: () => db.destroy() };
  const queryOnly = new QueryOnlySqliteDatabase(config.path);
  return {
    db,
    hotQuery: <Row>(sqlText: string): HotQuery<Row> => {
      const read = queryOnly.rows<Row>(sqlText);
      return async (parameters) => read(parameters);
    },
    async close() {
      try {
        await db.destroy();
      } finally {
        queryOnly.close();
      }
    },
  };
}
