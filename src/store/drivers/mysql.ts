// MySQL and MariaDB through mysql2: a bounded pool with the waits mysql2 leaves unbounded bounded, so a
// dead or hung server fails a request in about DB_TIMEOUT_MS instead of holding it open; the
// per-request queries run on it as server-side prepared statements.
import {
  Kysely,
  MysqlDialect,
  type MysqlPool,
  type MysqlPoolConnection,
  type MysqlQueryResult,
} from 'kysely';
// Loaded when a MySQL database is opened, never otherwise (mysql2 costs MBs of idle memory).
import type { ExecuteValues, Pool as RawMysqlPool, PoolConnection } from 'mysql2';
import type { Db } from '../types.ts';
import type { Database } from '../schema.ts';
import { DatabaseTimeoutError } from '../errors.ts';
import {
  PreparedStatements,
  hotQueryThrough,
  type HotQuery,
  type OpenedDatabase,
  type PoolLimits,
} from './driver.ts';

/** mysql2 has neither a pool-acquire timeout nor a default query timeout; this adds both. */
class MysqlPoolWithTimeouts implements MysqlPool {
  private readonly pool: RawMysqlPool;
  private readonly limits: PoolLimits;
  private readonly prepared: PreparedStatements;
  private readonly connections = new WeakMap<PoolConnection, MysqlConnectionWithTimeout>();
  constructor(pool: RawMysqlPool, limits: PoolLimits, prepared: PreparedStatements) {
    this.pool = pool;
    this.limits = limits;
    this.prepared = prepared;
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
        connection = new MysqlConnectionWithTimeout(raw, this.limits.queryTimeoutMs, this.prepared);
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
  /** The store's prepared statements (Store.hotQuery); every other query goes as text. */
  private readonly statements: PreparedStatements;
  /** The prepared statements this connection has run: mysql2 keeps them prepared. */
  private readonly prepared = new Set<string>();
  constructor(raw: PoolConnection, timeoutMs: number, statements: PreparedStatements) {
    this.raw = raw;
    this.timeoutMs = timeoutMs;
    this.statements = statements;
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
    if (!this.statements.has(sql)) return this.raw.query(options, values, done);
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

/** A Kysely handle on the MySQL database at `url`; `prepared` are the texts it runs as prepared statements. */
export async function mysqlKysely(
  url: string,
  limits: PoolLimits,
  prepared: PreparedStatements = new PreparedStatements(),
): Promise<Db> {
  const { createPool } = await import('mysql2');
  const pool = createPool({
    uri: url,
    connectionLimit: limits.poolSize,
    connectTimeout: limits.connectTimeoutMs,
    // BIGINT (and COUNT(*)) as numbers, as src/store/schema.ts types them: every one here fits in 2^53
    // (one that did not would come back as a string rather than lose digits).
    supportBigNumbers: true,
    enableKeepAlive: true,
  });
  pool.on('connection', (conn) => conn.on('error', () => {}));
  return new Kysely<Database>({
    dialect: new MysqlDialect({ pool: new MysqlPoolWithTimeouts(pool, limits, prepared) }),
  });
}

/**
 * The MySQL database at `url` for a store. The per-request queries (Store.hotQuery) run on the main
 * pool, as prepared statements: each connection prepares one the first time it runs it.
 */
export async function openMysql(url: string, limits: PoolLimits): Promise<OpenedDatabase> {
  const prepared = new PreparedStatements();
  const db = await mysqlKysely(url, limits, prepared);
  const through = hotQueryThrough(db);
  return {
    db,
    hotQuery: <Row>(sqlText: string): HotQuery<Row> => {
      prepared.add(sqlText);
      return through<Row>(sqlText);
    },
    close: () => db.destroy(),
  };
}
