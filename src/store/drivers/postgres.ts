// PostgreSQL through pg: a bounded pool whose waits are bounded too, so a dead or hung server fails a
// request in about DB_TIMEOUT_MS instead of holding it open, and a small pool of its own for the
// per-request queries, which run as prepared statements planned once.
import {
  Kysely,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from 'kysely';
// Loaded when a PostgreSQL database is opened, never otherwise (pg costs MBs of idle memory).
import type pg from 'pg';
import type { Db, PoolStats } from '../types.ts';
import type { Database } from '../schema.ts';
import { DatabaseTimeoutError } from '../errors.ts';
import { PreparedStatements, type HotQuery, type OpenedDatabase, type PoolLimits } from './driver.ts';

interface PostgresLimits extends PoolLimits {
  /**
   * The pool's sessions plan a prepared statement once, for any parameters
   * (plan_cache_mode = force_generic_plan), instead of again at each execution. See openPostgres.
   */
  genericPlans?: boolean;
}

const noop = () => {};

async function loadDriver(): Promise<typeof pg> {
  const { default: driver } = await import('pg');
  return driver;
}

/**
 * The store's types, given to each of its pools (never set process-wide, where they would change what
 * any other pg client in the process reads): pg returns BIGINT (and COUNT(*)) as strings by default,
 * and every BIGINT here fits in 2^53, so they are numbers, as src/store/schema.ts types them; a char(n)
 * value (the hash columns) comes back padded with spaces to n, which a hash shorter than its column (a
 * token's legacy MD5 form, src/auth/secret.ts) is not: it comes back as it was stored. The parsers run
 * once per value as pg reads a row, so no caller ever sees a padded hash or a numeric string.
 */
function storeTypes(driver: typeof pg): pg.CustomTypesConfig {
  const types = new driver.TypeOverrides();
  types.setTypeParser(driver.types.builtins.INT8, (v: string) => Number(v));
  types.setTypeParser(driver.types.builtins.BPCHAR, (v: string) => v.trimEnd());
  return types;
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
      // Text only: the prepared statements run on the lookup pool (openPostgres).
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

function makePool(driver: typeof pg, url: string, limits: PostgresLimits): pg.Pool {
  const pool = new driver.Pool({
    connectionString: url,
    types: storeTypes(driver),
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

const poolStats = (pool: pg.Pool, limits: PoolLimits): PoolStats => ({
  total: pool.totalCount,
  idle: pool.idleCount,
  waiting: pool.waitingCount,
  max: limits.poolSize,
});

/** pg reports a query that outlived query_timeout with this message. */
const asTimeout = (err: unknown): unknown =>
  err instanceof Error && err.message === 'Query read timeout' ? new DatabaseTimeoutError('query', err) : err;

/** A Kysely handle on the PostgreSQL database at `url`, and its pool's connections. */
function kyselyOn(driver: typeof pg, url: string, limits: PoolLimits) {
  const pool = makePool(driver, url, limits);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new PostgresPoolWithTimeouts(driver, pool) }),
  });
  return { db, stats: () => poolStats(pool, limits) };
}

/** A Kysely handle on the PostgreSQL database at `url` (for migrations: no lookup pool). */
export async function postgresKysely(url: string, limits: PoolLimits): Promise<Db> {
  return kyselyOn(await loadDriver(), url, limits).db;
}

/**
 * The PostgreSQL database at `url` for a store. The credential lookup (Store.hotQuery) runs on a small
 * pool of its own (`lookupLimits`), straight through pg, whose sessions plan it once. With a parameter
 * of its own for every execution, PostgreSQL otherwise keeps planning the lookup anew (its generic plan
 * for `token_hash = any($2)` looks costlier than the custom plans), and planning cost more than the
 * execution itself (bench/HISTORY.md).
 * Other queries keep the usual choice on the main pool: some (the expiry sweep's `expires_at <= $1`)
 * do need a plan for their actual parameters. The pool of its own also keeps lookups from queueing
 * behind slow queries (listing, fix_privileges) for a connection. pg-pool drops a connection whose
 * query failed (a timeout among others), as the main pool does.
 */
export async function openPostgres(
  url: string,
  limits: PoolLimits,
  lookupLimits: PoolLimits,
): Promise<OpenedDatabase> {
  const driver = await loadDriver();
  const main = kyselyOn(driver, url, limits);
  const lookupLimitsHere = { ...lookupLimits, genericPlans: true };
  const lookup = makePool(driver, url, lookupLimitsHere);
  const prepared = new PreparedStatements();
  // close may be called more than once (pg-pool's end may not).
  let ended: Promise<void> | undefined;
  return {
    db: main.db,
    hotQuery: <Row>(sqlText: string): HotQuery<Row> => {
      const name = prepared.add(sqlText);
      return async (parameters) => {
        try {
          const result = await lookup.query({ name, text: sqlText, values: parameters as unknown[] });
          return result.rows as Row[];
        } catch (err) {
          throw asTimeout(err);
        }
      };
    },
    poolStats: () => ({ main: main.stats(), lookup: poolStats(lookup, lookupLimitsHere) }),
    async close() {
      try {
        await main.db.destroy();
      } finally {
        await (ended ??= lookup.end());
      }
    },
  };
}
