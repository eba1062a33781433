// A fresh, empty database per test: a temp file for SQLite, a new database on the PostgreSQL/MySQL server;
// for the in-place backend (`ripple`), a new database of the Ripple family's form on the MySQL server,
// with tokend's additions applied as `tokend migrate` applies them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createConnection } from 'mysql2/promise';
import type { DatabaseConfig } from '../../src/config.ts';
import { migrateDatabase } from '../../src/store/database.ts';
import { MYSQL_URL, POSTGRES_URL, type Backend } from './dialects.ts';
import { createRippleTables } from './ripple-schema.ts';

export interface TestDatabase {
  config: DatabaseConfig;
  /** The URL form, for DATABASE_URL of a child process. */
  url: string;
  /** The variables that name this database to a child process: DATABASE_URL, and DATABASE_SCHEMA in place. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

const uniqueName = () => `tokend_t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

/** A new, empty database on the MySQL/MariaDB server (the server's default character set). */
async function createMysqlDatabase(): Promise<TestDatabase & { config: { kind: 'mysql' } }> {
  const name = uniqueName();
  const admin = await createConnection({ uri: MYSQL_URL });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = withDatabase(MYSQL_URL, name);
  return {
    config: { kind: 'mysql', url },
    url,
    env: { DATABASE_URL: url },
    async drop() {
      const c = await createConnection({ uri: MYSQL_URL });
      await c.query(`DROP DATABASE IF EXISTS ${name}`);
      await c.end();
    },
  };
}

/**
 * A new database of the Ripple family's form (latin1, its `users` and `tokens` tables from
 * docs/ripple-schema.sql), as the family's programs have it: tokend's additions not applied.
 */
export async function createFamilyDatabase(): Promise<TestDatabase & { config: { kind: 'mysql' } }> {
  const database = await createMysqlDatabase();
  const connection = await createConnection({ uri: database.url });
  try {
    await createRippleTables(connection);
  } catch (err) {
    await database.drop();
    throw err;
  } finally {
    await connection.end();
  }
  return database;
}

export async function createTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tokend-test-'));
    const path = join(dir, 'tokend.db');
    return {
      config: { kind: 'sqlite', path },
      url: `sqlite:${path}`,
      env: { DATABASE_URL: `sqlite:${path}` },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (backend === 'postgres') {
    const name = uniqueName();
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = withDatabase(POSTGRES_URL, name);
    return {
      config: { kind: 'postgres', url },
      url,
      env: { DATABASE_URL: url },
      async drop() {
        const c = new pg.Client({ connectionString: POSTGRES_URL });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  if (backend === 'mysql') return createMysqlDatabase();
  const family = await createFamilyDatabase();
  const config = { ...family.config, schema: 'ripple' as const };
  try {
    await migrateDatabase(config, { explicit: true });
  } catch (err) {
    await family.drop();
    throw err;
  }
  return { ...family, config, env: { ...family.env, DATABASE_SCHEMA: 'ripple' } };
}
