// One database handle per dialect behind Kysely: SQLite (node:sqlite), PostgreSQL (pg), MySQL/MariaDB (mysql2).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { createPool as createMysqlPool } from 'mysql2';
import type { DatabaseConfig } from '../config.ts';
import type { Database } from './schema.ts';
import { NodeSqliteDatabase } from './node-sqlite.ts';
import { migrateToLatest } from './migrations.ts';

export type Dialect = DatabaseConfig['kind'];
export type Db = Kysely<Database>;

export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /** Cheap round trip for readiness checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  poolSize?: number;
  /** How long a query may wait for a connection or an answer before it fails (ms). */
  timeoutMs?: number;
  migrate?: boolean;
}

// pg returns BIGINT as strings by default; every BIGINT here (privileges, timestamps) fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

function makeKysely(config: DatabaseConfig, options: OpenOptions): Db {
  const poolSize = options.poolSize ?? 10;
  const timeoutMs = options.timeoutMs ?? 2000;
  switch (config.kind) {
    case 'sqlite': {
      if (config.path !== ':memory:') mkdirSync(dirname(config.path), { recursive: true });
      return new Kysely<Database>({
        dialect: new SqliteDialect({ database: new NodeSqliteDatabase(config.path) }),
      });
    }
    case 'postgres': {
      const pool = new pg.Pool({
        connectionString: config.url,
        max: poolSize,
        connectionTimeoutMillis: timeoutMs,
        query_timeout: timeoutMs * 5,
        keepAlive: true,
      });
      // An idle client that loses its server emits here; the pool replaces it on the next checkout.
      pool.on('error', () => {});
      return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    }
    case 'mysql': {
      const pool = createMysqlPool({
        uri: config.url,
        connectionLimit: poolSize,
        connectTimeout: timeoutMs,
        supportBigNumbers: true,
        enableKeepAlive: true,
      });
      pool.on('connection', (conn) => conn.on('error', () => {}));
      return new Kysely<Database>({ dialect: new MysqlDialect({ pool }) });
    }
  }
}

export async function openStore(config: DatabaseConfig, options: OpenOptions = {}): Promise<Store> {
  const db = makeKysely(config, options);
  const dialect = config.kind;
  try {
    if (options.migrate !== false) await migrateToLatest(db, dialect);
  } catch (err) {
    await db.destroy().catch(() => {});
    throw err;
  }
  return {
    db,
    dialect,
    async ping() {
      await db.selectFrom('users').select('id').limit(1).execute();
    },
    close: () => db.destroy(),
  };
}
