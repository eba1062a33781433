// One database handle per dialect behind Kysely: SQLite (node:sqlite), PostgreSQL (pg), MySQL/MariaDB (mysql2).
// Server databases get a bounded pool and bounded waits, so a dead or hung server fails a request in about
// `timeoutMs` (a 500 envelope) instead of holding it open.
import {
  CompiledQuery,
  Kysely,
  MysqlDialect,
  PostgresDialect,
  SqliteDialect,
  type MysqlPool,
  type MysqlPoolConnection,
  type MysqlQueryResult,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from 'kysely';
// The drivers are loaded by makeKysely, only for the dialect configured (each costs MBs of idle memory).
import type pg from 'pg';
import type { ExecuteValues, Pool as RawMysqlPool, PoolConnection } from 'mysql2';
import type { DatabaseConfig } from '../config.ts';
import type { Database } from './schema.ts';
import { NodeSqliteDatabase, QueryOnlySqliteDatabase, sqliteFileProblem } from './node-sqlite.ts';
import { migrateToLatest } from './migrations.ts';
import { DatabaseTimeoutError } from './errors.ts';

export type Dialect = DatabaseConfig['kind'];
export type Db = Kysely<Database>;

export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /** Cheap round trip for readiness checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Connections of each pool, where the driver exposes them (PostgreSQL); for metrics. */
  poolStats?: () => Readonly<Partial<Record<PoolName, PoolStats>>>;
  /**
   * A fixed query of the per-request path (the credential lookup), prepared once: on PostgreSQL and
   * MySQL as a server-side prepared statement (prepareOnServer); on a SQLite file, read synchronously
   * on a query-only connection of the store's own, which in WAL mode sees only committed data, never a
   * transaction still open on the main connection.
   */
  hotQuery<Row>(sqlText: string): (parameters: readonly unknown[]) => Promise<Row[]>;
}

/** main: every query but the credential lookup; lookup: the credential lookup (PostgreSQL, see openStore). */
export type PoolName = 'main' | 'lookup';

export interface PoolStats {
  /** Connections open (busy and idle). */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  /** Largest number of connections the pool may open. */
  max: number;
}

const POOL_STATS = new WeakMap<Db, () => PoolStats>();

export interface OpenOptions {
  /** Connections per process (PostgreSQL, MySQL); DB_POOL_SIZE. */
  poolSize?: number;
  /** Longest wait for a connection (new or from the pool) and for a query's answer, in ms; DB_TIMEOUT_MS. */
  timeoutMs?: number;
  migrate?: boolean;
}

export const DEFAULT_POOL_SIZE = 10;
/** Most connections of the PostgreSQL lookup pool (see openStore); DB_POOL_SIZE caps it too. */
export const LOOKUP_POOL_MAX = 4;
export const DEFAULT_TIMEOUT_MS = 2000;
/** Migrations may wait for another instance's migration lock and may rewrite whole tables. */
const MIGRATION_QUERY_TIMEOUT_MS = 10 * 60_000;

/**
 * SQL texts that PostgreSQL and MySQL run as server-side prepared statements (Store.hotQuery): parsed
 * and planned once per connection, then only executed. Meant for the few fixed queries on the
 * per-request path (the credential lookup); every other query goes as text, so no connection collects
 * a statement per distinct IN-list. On PostgreSQL they run on the lookup pool, on MySQL on the main one.
 */
const PREPARED_STATEMENTS = new Map<string, string>();

/** Runs this exact SQL text as a prepared statement from now on (PostgreSQL, MySQL; SQLite caches all). */
function prepareOnServer(sqlText: string): void {
  if (!PREPARED_STATEMENTS.has(sqlText))
    PREPARED_STATEMENTS.set(sqlText, `tokend_${PREPARED_STATEMENTS.size + 1}`);
}

const noop = () => {};

let postgresDriver: Promise<typeof pg> | undefined;

/** pg, loaded on first use; it returns BIGINT as strings by default, and every BIGINT here fits in 2^53. */
function loadPostgresDriver(): Promise<typeof pg> {
  postgresDriver ??= import('pg').then(({ default: driver }) => {
    driver.types.setTypeParser(driver.types.builtins.INT8, (v) => Number(v));
    return driver;
  });
  return postgresDriver;
}

interface PoolLimits {
  poolSize: number;
  connectTimeoutMs: number;
  queryTimeoutMs: number;
  /**
   * PostgreSQL: the pool's sessions plan a prepared statement once, for any parameters
   * (plan_cache_mode = force_generic_plan), instead of again at each execution. See openStore.
   */
  genericPlans?: boolean;
}

/**
 * A pg pool whose clients are thrown away after a query timed out: such a client still waits for the
 * lost answer, and every later query on it would queue behind that answer.
 */
class PostgresPoolWithTimeouts implements PostgresPool {
  readonly Client: typeof pg.Client;
  private readonly pool: pg.Pool;
  private readonly clients = new WeakMap<pg.PoolClient, PostgresClientWithTimeouts>();
  constructor(driver: typeof pg, pool: pg.Pool) {
    this.Client = driver.Client;
    this.pool = pool;
  }
  get options(): object {
    return this.pool.options;
  }
  async connect(): Promise<PostgresPoolClient> {
    const raw = await this.pool.connect();
    let client = this.clients.get(raw);
    if (client === undefined) {
      // A checked-out client whose server goes away emits 'error'; the failing query reports it already.
      raw.on('error', () => {});
      client = new PostgresClientWithTimeouts(raw);
      this.clients.set(raw, client);
    }
    return client as unknown as PostgresPoolClient;
  }
  end(): Promise<void> {
    return this.pool.end();
  }
}

class PostgresClientWithTimeouts {
  private readonly raw: pg.PoolClient;
  private broken = false;
  constructor(raw: pg.PoolClient) {
    this.raw = raw;
  }
  get processID(): number | undefined {
    return (this.raw as unknown as { processID?: number }).processID;
  }
  async query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    try {
      // Text only: the prepared statements (PREPARED_STATEMENTS) run on the lookup pool (postgresHotQueries).
      const result = await this.raw.query(sql, parameters as unknown[]);
      return result as unknown as PostgresQueryResult<R>;
    } catch (err) {
      const timedOut = asTimeout(err);
      if (timedOut instanceof DatabaseTimeoutError) this.broken = true;
      throw timedOut;
    }
  }
  release(destroy?: boolean): void {
    this.raw.release(destroy === true || this.broken);
  }
}

/** mysql2 has neither a pool-acquire timeout nor a default query timeout; this adds both. */
class MysqlPoolWithTimeouts implements MysqlPool {
  private readonly pool: RawMysqlPool;
  private readonly limits: PoolLimits;
  private readonly connections = new WeakMap<PoolConnection, MysqlConnectionWithTimeout>();
  constructor(pool: RawMysqlPool, limits: PoolLimits) {
    this.pool = pool;
    this.limits = limits;
  }
  getConnection(callback: (error: unknown, connection: MysqlPoolConnection) => void): void {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      callback(new DatabaseTimeoutError('connection'), undefined as unknown as MysqlPoolConnection);
    }, this.limits.connectTimeoutMs);
    this.pool.getConnection((err, raw) => {
      if (settled) {
        // The caller gave up; hand a late connection straight back.
        raw?.release();
        return;
      }
      settled = true;
      clearTimeout(timer);
      if (err) return callback(err, undefined as unknown as MysqlPoolConnection);
      let connection = this.connections.get(raw);
      if (connection === undefined) {
        connection = new MysqlConnectionWithTimeout(raw, this.limits.queryTimeoutMs);
        this.connections.set(raw, connection);
      }
      callback(null, connection as unknown as MysqlPoolConnection);
    });
  }
  end(callback: (error: unknown) => void): void {
    // An error here comes from a connection that was already broken; closing the pool has still succeeded.
    this.pool.end(() => callback(null));
  }
}

class MysqlConnectionWithTimeout {
  private readonly raw: PoolConnection;
  private readonly timeoutMs: number;
  /** The prepared statements (PREPARED_STATEMENTS) this connection has run: mysql2 keeps them prepared. */
  private readonly prepared = new Set<string>();
  constructor(raw: PoolConnection, timeoutMs: number) {
    this.raw = raw;
    this.timeoutMs = timeoutMs;
  }
  get config(): object {
    return this.raw.config;
  }
  get threadId(): number {
    return this.raw.threadId;
  }
  connect(callback?: (error: unknown) => void): void {
    this.raw.connect(callback);
  }
  destroy(): void {
    this.raw.destroy();
  }
  release(): void {
    this.raw.release();
  }
  query(sql: string, parameters: unknown, callback?: (error: unknown, result: MysqlQueryResult) => void) {
    const options = { sql, timeout: this.timeoutMs };
    const values = parameters as unknown[];
    if (callback === undefined) return this.raw.query(options, values);
    const done = (err: unknown, result: unknown) => {
      if (err && (err as { code?: unknown }).code === 'PROTOCOL_SEQUENCE_TIMEOUT') {
        // The answer may still come; this connection cannot be trusted with another query.
        this.raw.destroy();
        return callback(new DatabaseTimeoutError('query', err), undefined as unknown as MysqlQueryResult);
      }
      callback(err, result as MysqlQueryResult);
    };
    if (!PREPARED_STATEMENTS.has(sql)) return this.raw.query(options, values, done);
    if (this.prepared.has(sql)) return this.raw.execute(options, values as ExecuteValues[], done);
    // The first execute of a statement on this connection PREPAREs it first, and mysql2 times out only
    // the EXECUTE: a server that hangs at the PREPARE is given up on here, after the same time.
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      this.raw.destroy();
      callback(new DatabaseTimeoutError('query'), undefined as unknown as MysqlQueryResult);
    }, this.timeoutMs);
    return this.raw.execute(options, values as ExecuteValues[], (err, result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!err) this.prepared.add(sql);
      done(err, result);
    });
  }
}

function makePostgresPool(driver: typeof pg, url: string, limits: PoolLimits): pg.Pool {
  const pool = new driver.Pool({
    connectionString: url,
    max: limits.poolSize,
    // Covers both opening a connection and waiting for a free one.
    connectionTimeoutMillis: limits.connectTimeoutMs,
    query_timeout: limits.queryTimeoutMs,
    keepAlive: true,
    // Run on each new connection before the pool hands it out. A server older than PostgreSQL 12 has
    // no such setting and refuses it (42704); its statements are then planned as usual. Any other
    // failure (a lost connection, a timeout) fails the checkout, and the pool drops the connection.
    onConnect: limits.genericPlans
      ? (client) =>
          client.query('SET plan_cache_mode = force_generic_plan').then(noop, (err: unknown) => {
            if ((err as { code?: unknown }).code !== '42704') throw err;
          })
      : undefined,
  });
  // An idle client that loses its server emits here; the pool replaces it on the next checkout.
  pool.on('error', () => {});
  return pool;
}

const postgresPoolStats = (pool: pg.Pool, limits: PoolLimits): PoolStats => ({
  total: pool.totalCount,
  idle: pool.idleCount,
  waiting: pool.waitingCount,
  max: limits.poolSize,
});

/** pg reports a query that outlived query_timeout with this message. */
const asTimeout = (err: unknown): unknown =>
  err instanceof Error && err.message === 'Query read timeout' ? new DatabaseTimeoutError('query', err) : err;

/** The queries of the per-request path (Store.hotQuery), and the pool they run on if it is their own. */
interface HotQueries {
  run<Row>(sqlText: string): (parameters: readonly unknown[]) => Promise<Row[]>;
  stats?: () => PoolStats;
  close(): Promise<void>;
}

/** On a SQLite file: on the query-only connection, with no query builder and no pool in between. */
const hotQueriesOnSqlite = (queryOnly: QueryOnlySqliteDatabase): HotQueries => ({
  run: <Row>(sqlText: string) => {
    const read = queryOnly.rows<Row>(sqlText);
    return async (parameters: readonly unknown[]) => read(parameters);
  },
  close: async () => queryOnly.close(),
});

/** Through Kysely, on the store's own connections (MySQL, SQLite's in-memory database). */
const hotQueriesOn = (db: Db): HotQueries => ({
  run:
    <Row>(sqlText: string) =>
    async (parameters: readonly unknown[]) =>
      (await db.executeQuery<Row>(CompiledQuery.raw(sqlText, [...parameters]))).rows,
  close: async () => {},
});

/**
 * PostgreSQL: the credential lookup runs on a small pool of its own, straight through pg, whose
 * sessions plan it once. With a parameter of its own for every execution, PostgreSQL otherwise keeps
 * planning the lookup anew (its generic plan for `token_hash = any($2)` looks costlier than the custom
 * plans): 0.17 ms of planning for 0.05 ms of execution, ~130 µs of the server's CPU per lookup against
 * ~50 µs planned once (bench/README.md). Other queries keep the usual choice on the main pool: some
 * (the expiry sweep's `expires_at <= $1`) do need a plan for their actual parameters. The pool of its
 * own also keeps lookups from queueing behind slow queries (listing, fix_privileges) for a connection.
 * pg-pool drops a connection whose query failed (a timeout among others), as the main pool does.
 */
async function postgresHotQueries(url: string, limits: PoolLimits): Promise<HotQueries> {
  const limitsHere = { ...limits, genericPlans: true };
  const pool = makePostgresPool(await loadPostgresDriver(), url, limitsHere);
  // Store.close may be called more than once (pg-pool's end may not).
  let ended: Promise<void> | undefined;
  return {
    run: <Row>(sqlText: string) => {
      const name = PREPARED_STATEMENTS.get(sqlText);
      return async (parameters: readonly unknown[]) => {
        try {
          const result = await pool.query({ name, text: sqlText, values: parameters as unknown[] });
          return result.rows as Row[];
        } catch (err) {
          throw asTimeout(err);
        }
      };
    },
    stats: () => postgresPoolStats(pool, limitsHere),
    close: () => (ended ??= pool.end()),
  };
}

// ---- when the database cannot be opened or reached ------------------------------------------------

/**
 * The database DATABASE_URL names cannot be opened (SQLite) or reached (a server): one line naming
 * DATABASE_URL (its password removed), the cause and what to do.
 */
export class DatabaseOpenError extends Error {
  override readonly name = 'DatabaseOpenError';
}

/** A database URL fit for messages and logs: the password (in the user part or the query) as ***. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    for (const key of [...u.searchParams.keys()]) if (/pass/i.test(key)) u.searchParams.set(key, '***');
    return u.toString();
  } catch {
    return url.replace(/(\/\/[^:/@]*):[^@]*@/, '$1:***@').replace(/(pass[^=&]*=)[^&]*/gi, '$1***');
  }
}

const databaseUrlOf = (config: DatabaseConfig): string =>
  config.kind === 'sqlite' ? `sqlite:${config.path}` : redactDatabaseUrl(config.url);

function sqliteOpenError(config: Extract<DatabaseConfig, { kind: 'sqlite' }>, reason: string) {
  return new DatabaseOpenError(
    `cannot open the SQLite database of DATABASE_URL=${databaseUrlOf(config)}: ${reason}; ` +
      'fix that, or set DATABASE_URL to another file',
  );
}

const errorCode = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** The server and user a URL names, for messages. */
function urlParts(url: string): { server: string; user: string; database: string } {
  try {
    const u = new URL(url);
    return {
      server: u.host || 'localhost',
      user: decodeURIComponent(u.username),
      database: decodeURIComponent(u.pathname.replace(/^\//, '')),
    };
  } catch {
    return { server: 'the server', user: '', database: '' };
  }
}

/**
 * Why a connection to a database server failed, in words with the fix, or undefined when `err` is not
 * a failure to connect (a failing query, a bug): that one is reported as it is.
 */
export function connectionFailure(err: unknown, url: string, timeoutMs: number): string | undefined {
  // Node reports a refused connection to every address of a name (::1 and 127.0.0.1) as an AggregateError.
  if (err instanceof AggregateError && err.errors.length > 0)
    return connectionFailure(err.errors[0], url, timeoutMs);
  const { server, user, database } = urlParts(url);
  const message = err instanceof Error ? err.message : String(err);
  const as = user === '' ? 'the user given' : `user "${user}"`;
  switch (errorCode(err)) {
    case 'ECONNREFUSED':
      return `connection refused by ${server}: is the database server running and listening on that host and port?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name of ${server} does not resolve: check the host in DATABASE_URL`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${server} is unreachable from this machine: check the host in DATABASE_URL and the network`;
    case 'ETIMEDOUT':
      return `${server} did not answer in time: check the host and port in DATABASE_URL and any firewall`;
    case 'ECONNRESET':
      return `${server} closed the connection: is a database server of the kind DATABASE_URL names listening there?`;
    // Then PostgreSQL's SQLSTATEs and MySQL/MariaDB's codes (mysql2).
    case '3D000':
    case 'ER_BAD_DB_ERROR':
      return `the server has no database "${database}": create it, or correct its name in DATABASE_URL`;
    case '28P01':
    case '28000':
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR':
      return `authentication failed for ${as} (${message}): check the user and password in DATABASE_URL`;
    case 'ER_DBACCESS_DENIED_ERROR':
      return `${as} may not use the database "${database}" (${message}): grant it, or use another user`;
    case 'ER_HOST_NOT_PRIVILEGED':
      return `the server accepts no connection from this machine (${message}): allow it on the server`;
    case '57P03':
      return `the server is starting up or shutting down (${message}): try again in a moment`;
  }
  if (err instanceof DatabaseTimeoutError && err.waitedFor === 'connection')
    return `no connection to ${server} within DB_TIMEOUT_MS (${timeoutMs} ms): is the server up and reachable?`;
  if (/timeout exceeded when trying to connect|connection timeout/i.test(message))
    return `no connection to ${server} within DB_TIMEOUT_MS (${timeoutMs} ms): is the server up and reachable?`;
  if (/client password must be a string|password authentication failed/i.test(message))
    return `the server wants a password for ${as} and DATABASE_URL gives none (or a wrong one): add it as user:password@`;
  return undefined;
}

/** `err` as a DatabaseOpenError when it is a failure to connect to the server, else `err` itself. */
function asOpenError(err: unknown, config: DatabaseConfig, timeoutMs: number): unknown {
  if (config.kind === 'sqlite' || err instanceof DatabaseOpenError) return err;
  const cause = connectionFailure(err, config.url, timeoutMs);
  if (cause === undefined) return err;
  const what = `cannot connect to the database of DATABASE_URL=${databaseUrlOf(config)}`;
  return new DatabaseOpenError(`${what}: ${cause}`, { cause: err });
}

async function makeKysely(config: DatabaseConfig, limits: PoolLimits): Promise<Db> {
  switch (config.kind) {
    case 'sqlite': {
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
    case 'postgres': {
      const pg = await loadPostgresDriver();
      const pool = makePostgresPool(pg, config.url, limits);
      const db = new Kysely<Database>({
        dialect: new PostgresDialect({ pool: new PostgresPoolWithTimeouts(pg, pool) }),
      });
      POOL_STATS.set(db, () => postgresPoolStats(pool, limits));
      return db;
    }
    case 'mysql': {
      const { createPool: createMysqlPool } = await import('mysql2');
      const pool = createMysqlPool({
        uri: config.url,
        connectionLimit: limits.poolSize,
        connectTimeout: limits.connectTimeoutMs,
        supportBigNumbers: true,
        enableKeepAlive: true,
      });
      pool.on('connection', (conn) => conn.on('error', () => {}));
      return new Kysely<Database>({
        dialect: new MysqlDialect({ pool: new MysqlPoolWithTimeouts(pool, limits) }),
      });
    }
  }
}

/**
 * Applies pending migrations (start-up and `tokend migrate`); returns the names applied. It uses a
 * short-lived handle of its own, whose queries may wait long: for another instance's migration lock, or
 * for a migration that rewrites a whole table.
 */
export async function migrateDatabase(
  config: DatabaseConfig,
  options: { timeoutMs?: number } = {},
): Promise<string[]> {
  const connectTimeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const migrationDb = await makeKysely(config, {
    poolSize: 2,
    connectTimeoutMs,
    queryTimeoutMs: MIGRATION_QUERY_TIMEOUT_MS,
  });
  try {
    return await migrateToLatest(migrationDb, config.kind);
  } catch (err) {
    // The migration's first query is the first connection: a server that cannot be reached fails here.
    throw asOpenError(err, config, connectTimeoutMs);
  } finally {
    await migrationDb.destroy();
  }
}

function poolStatsOf(db: Db, hot: HotQueries): Store['poolStats'] {
  const main = POOL_STATS.get(db);
  const lookup = hot.stats;
  if (!main) return undefined;
  return () => (lookup ? { main: main(), lookup: lookup() } : { main: main() });
}

export async function openStore(config: DatabaseConfig, options: OpenOptions = {}): Promise<Store> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const db = await makeKysely(config, {
    poolSize: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectTimeoutMs: timeoutMs,
    queryTimeoutMs: timeoutMs,
  });
  const dialect = config.kind;
  // An in-memory SQLite database exists only on its own handle, so it has no second connection.
  const hot =
    config.kind === 'postgres'
      ? await postgresHotQueries(config.url, {
          poolSize: Math.min(LOOKUP_POOL_MAX, options.poolSize ?? DEFAULT_POOL_SIZE),
          connectTimeoutMs: timeoutMs,
          queryTimeoutMs: timeoutMs,
        })
      : config.kind === 'sqlite' && config.path !== ':memory:'
        ? hotQueriesOnSqlite(new QueryOnlySqliteDatabase(config.path))
        : hotQueriesOn(db);
  try {
    // An in-memory SQLite database exists only on its own handle.
    if (options.migrate !== false)
      await (config.kind === 'sqlite' && config.path === ':memory:'
        ? migrateToLatest(db, dialect)
        : migrateDatabase(config, { timeoutMs }));
  } catch (err) {
    await db.destroy().catch(() => {});
    await hot.close().catch(() => {});
    throw err;
  }
  return {
    db,
    dialect,
    async ping() {
      await db.selectFrom('users').select('id').limit(1).execute();
    },
    async close() {
      await db.destroy();
      await hot.close();
    },
    poolStats: poolStatsOf(db, hot),
    hotQuery<Row>(sqlText: string) {
      prepareOnServer(sqlText);
      return hot.run<Row>(sqlText);
    },
  };
}
