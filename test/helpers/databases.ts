// A fresh, empty database per test: a temp file for SQLite, a new database on the PostgreSQL/MySQL server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createConnection } from 'mysql2/promise';
import type { DatabaseConfig } from '../../src/config.ts';
import type { Dialect } from '../../src/store/database.ts';
import { MYSQL_URL, POSTGRES_URL } from './dialects.ts';

export interface TestDatabase {
  config: DatabaseConfig;
  /** The URL form, for DATABASE_URL of a child process. */
  url: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  const name = `tokend_t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tokend-test-'));
    const path = join(dir, 'tokend.db');
    return {
      config: { kind: 'sqlite', path },
      url: `sqlite:${path}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (dialect === 'postgres') {
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = withDatabase(POSTGRES_URL, name);
    return {
      config: { kind: 'postgres', url },
      url,
      async drop() {
        const c = new pg.Client({ connectionString: POSTGRES_URL });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  const admin = await createConnection({ uri: MYSQL_URL });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = withDatabase(MYSQL_URL, name);
  return {
    config: { kind: 'mysql', url },
    url,
    async drop() {
      const c = await createConnection({ uri: MYSQL_URL });
      await c.query(`DROP DATABASE IF EXISTS ${name}`);
      await c.end();
    },
  };
}
