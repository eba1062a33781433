// tokend in place on a Ripple-family database (DATABASE_SCHEMA=ripple): a fresh MariaDB/MySQL database of
// the test's own made with the family's users and tokens tables (docs/ripple-schema.sql), tokend's additions applied as
// `tokend migrate` applies them, and apps on it; plus SQL run the way the family's programs run it.
import type { TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createConnection, type Connection } from 'mysql2/promise';
import { loadConfig, type Config, type DatabaseConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { migrateDatabase, openStore, type Store } from '../../src/store/database.ts';
import { createTestDatabase, type TestDatabase } from './databases.ts';
import { createRippleTables } from './ripple-schema.ts';

export interface FamilyDatabase {
  database: TestDatabase;
  config: Extract<DatabaseConfig, { kind: 'mysql' }>;
  /** A connection of the family's programs (the website, the admin panel), for their SQL. */
  family: Connection;
}

/** A fresh database with the family's tables, dropped after the test; tokend's additions not applied. */
export async function familyDatabase(t: TestContext): Promise<FamilyDatabase> {
  const database = await createTestDatabase('mysql');
  const family = await createConnection({ uri: database.url });
  t.after(async () => {
    await family.end();
    await database.drop();
  });
  await createRippleTables(family);
  if (database.config.kind !== 'mysql') throw new Error('a family database is MySQL or MariaDB');
  return { database, config: { ...database.config, schema: 'ripple' }, family };
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
