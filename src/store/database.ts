// The store: one database handle behind Kysely, on SQLite (node:sqlite), PostgreSQL (pg) or MySQL/MariaDB
// (mysql2), each opened by its module in drivers/. Server databases get a bounded pool and bounded waits,
// so a dead or hung server fails a request in about `timeoutMs` (a 500 envelope) instead of holding it
// open. The SQL that differs between the dialects is written in sql-dialect.ts, and nowhere else.
import type { DatabaseConfig } from '../config.ts';
import type { Db, PoolName, PoolStats } from './types.ts';
import { migrateToLatest, pendingMigrations, type MigrationChain } from './migrator.ts';
import {
  checkFamilyDatabase,
  inPlaceMigrationTables,
  inPlaceTables,
  numericUserIds,
  readFamilyCharsets,
} from './ripple.ts';
import {
  IN_PLACE_MIGRATION_LOCK_TABLE,
  IN_PLACE_MIGRATION_TABLE,
  inPlaceMigrations,
} from './in-place-migrations.ts';
import type { UnknownRow } from 'kysely';
import { TOKEND_LAYOUT, databaseSchemaOf, familyLayout, type StoreLayout } from './layout.ts';
import { migrationStatements } from './dry-run.ts';
import { asOpenError } from './open-errors.ts';
import type { OpenedDatabase, PoolLimits } from './drivers/driver.ts';
import { openSqlite, sqliteKysely } from './drivers/sqlite.ts';
import { openPostgres, postgresKysely } from './drivers/postgres.ts';
import { mysqlKysely, openMysql } from './drivers/mysql.ts';

export type { Db, Dialect, PoolName, PoolStats } from './types.ts';

export type { DatabaseSchema, StoreLayout } from './layout.ts';
export { databaseSchemaOf } from './layout.ts';

export interface Store {
  readonly db: Db;
  /**
   * What the store's tables are like, where tokend's own and a Ripple-family database's in place
   * (src/store/ripple.ts) differ: the one object rules outside the store ask (src/store/layout.ts).
   */
  readonly layout: StoreLayout;
  /** Cheap round trip for readiness checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Connections of each pool, where the driver exposes them (PostgreSQL); for metrics. */
  poolStats?: () => Readonly<Partial<Record<PoolName, PoolStats>>>;
  /**
   * A fixed query of the per-request path (the credential lookup), prepared once: on PostgreSQL and
   * MySQL as a server-side prepared statement; on a SQLite file, read synchronously on a query-only
   * connection of the store's own, which in WAL mode sees only committed data, never a transaction
   * still open on the main connection.
   */
  hotQuery<Row>(sqlText: string): (parameters: readonly unknown[]) => Promise<Row[]>;
}

export interface OpenOptions {
  /** Connections per process (PostgreSQL, MySQL); DB_POOL_SIZE. */
  poolSize?: number;
  /** Longest wait for a connection (new or from the pool) and for a query's answer, in ms; DB_TIMEOUT_MS. */
  timeoutMs?: number;
  migrate?: boolean;
}

export const DEFAULT_POOL_SIZE = 10;
/** Most connections of the PostgreSQL lookup pool (see openPostgres); DB_POOL_SIZE caps it too. */
export const LOOKUP_POOL_MAX = 4;
export const DEFAULT_TIMEOUT_MS = 2000;
/** Migrations may wait for another instance's migration lock and may rewrite whole tables. */
const MIGRATION_QUERY_TIMEOUT_MS = 10 * 60_000;

/** A bare handle on the database of `config`: no per-request queries, no pool of their own. */
async function kyselyFor(config: DatabaseConfig, limits: PoolLimits): Promise<Db> {
  switch (config.kind) {
    case 'sqlite':
      return sqliteKysely(config);
    case 'postgres':
      return postgresKysely(config.url, limits);
    case 'mysql':
      return mysqlKysely(config.url, limits);
  }
}

/** The database of `config` for a store, with its per-request queries. */
async function openDatabase(config: DatabaseConfig, limits: PoolLimits): Promise<OpenedDatabase> {
  switch (config.kind) {
    case 'sqlite':
      return openSqlite(config);
    case 'postgres':
      return openPostgres(config.url, limits, {
        ...limits,
        poolSize: Math.min(LOOKUP_POOL_MAX, limits.poolSize),
      });
    case 'mysql':
      return openMysql(config.url, limits);
  }
}

/** The in-place mode's migrations (src/store/in-place-migrations.ts), recorded in a table of tokend's own. */
const IN_PLACE_CHAIN: MigrationChain = {
  migrations: inPlaceMigrations,
  tableName: IN_PLACE_MIGRATION_TABLE,
  lockTableName: IN_PLACE_MIGRATION_LOCK_TABLE,
};

/** A Ripple-family database still needs tokend's additions, which only `tokend migrate` applies. */
export class PendingMigrationsError extends Error {
  override readonly name = 'PendingMigrationsError';
}

/** A short-lived handle for migrations, whose queries may wait long (another instance's lock, a rewrite). */
async function withMigrationHandle<T>(
  config: DatabaseConfig,
  timeoutMs: number | undefined,
  use: (db: Db, chain: MigrationChain | undefined) => Promise<T>,
): Promise<T> {
  const connectTimeoutMs = timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const bare = await kyselyFor(config, {
    poolSize: 2,
    connectTimeoutMs,
    queryTimeoutMs: MIGRATION_QUERY_TIMEOUT_MS,
  });
  try {
    if (databaseSchemaOf(config) === 'tokend') return await use(bare, undefined);
    await checkFamilyDatabase(bare);
    return await use(bare.withPlugin(inPlaceMigrationTables()), IN_PLACE_CHAIN);
  } catch (err) {
    // The migration's first query is the first connection: a server that cannot be reached fails here.
    throw asOpenError(err, config, connectTimeoutMs);
  } finally {
    await bare.destroy();
  }
}

/**
 * Applies pending migrations (start-up and `tokend migrate`); returns the names applied. On a
 * Ripple-family database (DATABASE_SCHEMA=ripple) only `tokend migrate` applies them (`explicit`), after
 * `--dry-run` has shown them: at start-up a pending one stops tokend with a message saying so.
 */
export async function migrateDatabase(
  config: DatabaseConfig,
  options: { timeoutMs?: number; explicit?: boolean } = {},
): Promise<string[]> {
  return withMigrationHandle(config, options.timeoutMs, async (db, chain) => {
    if (chain !== undefined && options.explicit !== true) {
      const pending = await pendingMigrations(db, config.kind, chain);
      if (pending.length > 0)
        throw new PendingMigrationsError(
          `DATABASE_SCHEMA=ripple: the Ripple-family database needs tokend's additions ` +
            `(${pending.map((p) => p.name).join(', ')}); see them with \`tokend migrate --dry-run\`, ` +
            'then apply them with `tokend migrate` (docs/compatibility.md)',
        );
      return [];
    }
    return migrateToLatest(db, config.kind, chain);
  });
}

/** The migrations `migrateDatabase` would apply, each with the SQL it would run (`tokend migrate --dry-run`). */
export async function showPendingMigrations(
  config: DatabaseConfig,
  options: { timeoutMs?: number } = {},
): Promise<Array<{ name: string; statements: string[] }>> {
  return withMigrationHandle(config, options.timeoutMs, async (db, chain) => {
    const pending = await pendingMigrations(db, config.kind, chain);
    const plugins = chain === undefined ? [] : [inPlaceMigrationTables()];
    const shown: Array<{ name: string; statements: string[] }> = [];
    for (const { name, migration } of pending)
      shown.push({ name, statements: await migrationStatements(config.kind, migration, plugins) });
    return shown;
  });
}

export async function openStore(config: DatabaseConfig, options: OpenOptions = {}): Promise<Store> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const opened = await openDatabase(config, {
    poolSize: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectTimeoutMs: timeoutMs,
    queryTimeoutMs: timeoutMs,
  });
  const schema = databaseSchemaOf(config);
  let db = opened.db;
  let layout = TOKEND_LAYOUT;
  try {
    // An in-memory SQLite database exists only on its own handle.
    if (options.migrate !== false)
      await (config.kind === 'sqlite' && config.path === ':memory:'
        ? migrateToLatest(db, config.kind)
        : migrateDatabase(config, { timeoutMs }));
    // In place: the family's columns' character sets, read once, decide which values reach them.
    if (schema === 'ripple') {
      const charsets = await readFamilyCharsets(opened.db).catch((err: unknown) => {
        throw asOpenError(err, config, timeoutMs);
      });
      db = opened.db.withPlugin(inPlaceTables(charsets));
      layout = familyLayout(charsets);
    }
  } catch (err) {
    await opened.close().catch(() => {});
    throw err;
  }
  return {
    db,
    layout,
    async ping() {
      await db.selectFrom('users').select('id').limit(1).execute();
    },
    close: () => opened.close(),
    poolStats: opened.poolStats,
    hotQuery<Row>(sqlText: string) {
      const read = opened.hotQuery<Row>(sqlText);
      if (schema === 'tokend') return read;
      // run as compiled, past the plugin: its rows get the plugin's numeric user ids here
      return async (parameters) => {
        const rows = await read(parameters);
        numericUserIds(rows as UnknownRow[]);
        return rows;
      };
    },
  };
}
