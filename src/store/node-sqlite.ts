// Adapts node:sqlite's DatabaseSync to the small interface Kysely's SqliteDialect drives,
// caching prepared statements so repeated queries skip SQLite's parser.
import { DatabaseSync, type StatementSync, type SQLInputValue } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

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
