// What each dialect's driver module (sqlite.ts, postgres.ts, mysql.ts) hands to openStore and
// migrateDatabase, and the parts they share.
import { CompiledQuery } from 'kysely';
import type { Db, PoolName, PoolStats } from '../types.ts';

export interface PoolLimits {
  poolSize: number;
  connectTimeoutMs: number;
  queryTimeoutMs: number;
}

/** A fixed query of the per-request path, ready to run with its parameters (Store.hotQuery). */
export type HotQuery<Row> = (parameters: readonly unknown[]) => Promise<Row[]>;

/** A database opened for a store: the Kysely handle, and how the per-request queries run beside it. */
export interface OpenedDatabase {
  readonly db: Db;
  /** Store.hotQuery */
  hotQuery<Row>(sqlText: string): HotQuery<Row>;
  /** Store.poolStats */
  readonly poolStats?: () => Readonly<Partial<Record<PoolName, PoolStats>>>;
  /** Closes the handle and whatever the hot queries opened of their own; may be called more than once. */
  close(): Promise<void>;
}

/**
 * SQL texts that a store runs as server-side prepared statements (Store.hotQuery on PostgreSQL and
 * MySQL), each with a name of its own: parsed and planned once per connection, then only executed.
 * Meant for the few fixed queries of the per-request path (the credential lookup); every other query
 * goes as text, so no connection collects a statement per distinct IN-list. One per store.
 */
export class PreparedStatements {
  private readonly names = new Map<string, string>();

  /** Runs this exact SQL text as a prepared statement from now on; returns its name. */
  add(sqlText: string): string {
    let name = this.names.get(sqlText);
    if (name === undefined) {
      name = `tokend_${this.names.size + 1}`;
      this.names.set(sqlText, name);
    }
    return name;
  }

  has(sqlText: string): boolean {
    return this.names.has(sqlText);
  }
}

/** Hot queries through Kysely, on the handle's own connections (MySQL, SQLite's in-memory database). */
export const hotQueryThrough =
  (db: Db) =>
  <Row>(sqlText: string): HotQuery<Row> =>
  async (parameters) =>
    (await db.executeQuery<Row>(CompiledQuery.raw(sqlText, [...parameters]))).rows;
