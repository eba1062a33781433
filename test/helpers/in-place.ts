// tokend in place on a Ripple-family database (DATABASE_SCHEMA=ripple): a fresh MariaDB/MySQL database of
// the test's own in the family's form (docs/ripple-schema.sql: latin1, the family's users and tokens
// tables), tokend's additions applied as `tokend migrate` applies them, and apps on it; plus a connection
// for SQL run the way the family's programs run it.
import type { TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createConnection, type Connection } from 'mysql2/promise';
import { loadConfig, type Config, type DatabaseConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { migrateDatabase, openStore, type Store } from '../../src/store/database.ts';
import { createFamilyDatabase, type TestDatabase } from './databases.ts';

export interface FamilyDatabase {
  database: TestDatabase;
  config: Extract<DatabaseConfig, { kind: 'mysql' }>;
  /** A connection of the family's programs (the website, the admin panel), for their SQL. */
  family: Connection;
}

/** A fresh database of the family's form, dropped after the test; tokend's additions not applied. */
export async function familyDatabase(t: TestContext): Promise<FamilyDatabase> {
  const database = await createFamilyDatabase();
  const family = await createConnection({ uri: database.url });
  t.after(async () => {
    await family.end();
    await database.drop();
  });
  return {
    database: { ...database, env: { ...database.env, DATABASE_SCHEMA: 'ripple' } },
    config: { ...database.config, schema: 'ripple' },
    family,
  };
}

/**
 * A fresh database of the family's form and a connection to write it as the family does, both closed
 * after the test: a source for `tokend import-ripple`.
 */
export async function createRippleSource(t: TestContext): Promise<{ url: string; connection: Connection }> {
  const source = await createFamilyDatabase();
  t.after(() => source.drop());
  const connection = await createConnection({ uri: source.url });
  t.after(() => connection.end());
  return { url: source.url, connection };
}

export interface InPlaceApp {
  app: FastifyInstance;
  store: Store;
  config: Config;
  /** Requests under {base_url}/v1 (pass a path like '/tokens'). */
  api(options: InjectOptions & { path: string }): Promise<LightMyRequestResponse>;
}

/** A tokend app in place on the family database (closed after the test); `tokend migrate` run first. */
export async function inPlaceApp(
  t: TestContext,
  db: FamilyDatabase,
  env: Record<string, string> = {},
): Promise<InPlaceApp> {
  await migrateDatabase(db.config, { explicit: true });
  const config = loadConfig({ LOG_LEVEL: 'silent', BCRYPT_COST: '4', ...env });
  config.database = db.config;
  const store = await openStore(db.config, { poolSize: 4 });
  const app = await buildApp(config, { store });
  await app.ready();
  t.after(() => app.close());
  const base = `${config.basePath}/v1`;
  return { app, store, config, api: ({ path, ...rest }) => app.inject({ ...rest, url: `${base}${path}` }) };
}
