// tokend in place on a Ripple-family database (DATABASE_SCHEMA=ripple): a fresh MariaDB/MySQL database of
// the test's own in the family's form (docs/ripple-schema.sql: latin1, the family's users and tokens
// tables), tokend's additions applied as `tokend migrate` applies them, and apps on it; plus SQL run the
// way the family's programs run it (a user signed up as its website does, a token as its API and hanayo
// write one, its API's token lookup).
import type { TestContext } from 'node:test';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { loadConfig, type Config, type DatabaseConfig } from '../../src/config.ts';
import { buildApp, type BuildOptions } from '../../src/app.ts';
import { UserPrivilege } from '../../src/auth/privileges.ts';
import { migrateDatabase, openStore, type Store } from '../../src/store/database.ts';
import { createFamilyDatabase, type TestDatabase } from './databases.ts';
import { md5, signUpOnWebsite, writeFamilyToken } from './ripple-schema.ts';

export { md5 };

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
  options: BuildOptions = {},
): Promise<InPlaceApp> {
  await migrateDatabase(db.config, { explicit: true });
  const config = loadConfig({ LOG_LEVEL: 'silent', BCRYPT_COST: '4', ...env });
  config.database = db.config;
  const store = await openStore(db.config, { poolSize: 4 });
  const app = await buildApp(config, { ...options, store });
  await app.ready();
  t.after(() => app.close());
  const base = `${config.basePath}/v1`;
  return { app, store, config, api: ({ path, ...rest }) => app.inject({ ...rest, url: `${base}${path}` }) };
}

/** An ordinary player of the family: UserPublic + UserNormal. */
export const PLAYER = UserPrivilege.UserPublic | UserPrivilege.UserNormal;

let counter = 0;

/** A user as the family's website signs one up (signUpOnWebsite), with a name and password of its own. */
export async function signUp(
  db: FamilyDatabase,
  privileges = PLAYER,
): Promise<{ id: number; username: string; password: string }> {
  counter++;
  const username = `Player ${counter}`;
  const password = `password ${counter}`;
  const id = await signUpOnWebsite(db.family, {
    username,
    password,
    privileges,
    email: `p${counter}@example.com`,
  });
  return { id, username, password };
}

/** A token as the family's API and hanayo write one (writeFamilyToken), with a secret of its own. */
export async function familyToken(
  db: FamilyDatabase,
  user: string | number,
  options: { privileges?: number; private?: boolean; description?: string } = {},
): Promise<{ id: number; secret: string }> {
  const secret = `family-secret-${++counter}-${Math.random().toString(36).slice(2)}`;
  const id = await writeFamilyToken(db.family, { user, secret, ...options });
  return { id, secret };
}

/** A token as the family's API finds it: its columns, and its owner's privileges (null: no such user). */
export interface FamilyLookup {
  id: number;
  user: string;
  privileges: number;
  private: number;
  user_privileges: number | null;
}

/**
 * The family's API's token lookup, its very SQL (osuripple/api app/tokens.go), run on the family's own
 * connection: the row whose `token` is the MD5 hex of the secret sent, or undefined when it finds none.
 */
export async function familyLookup(db: FamilyDatabase, secret: string): Promise<FamilyLookup | undefined> {
  const [rows] = await db.family.query<RowDataPacket[]>(
    `SELECT t.id, t.user, t.privileges, t.private, u.privileges AS user_privileges
FROM tokens t
LEFT JOIN users u ON u.id = t.user
WHERE token = ? LIMIT 1`,
    [md5(secret)],
  );
  const row = rows[0];
  return (
    row && {
      id: Number(row.id),
      user: String(row.user),
      privileges: Number(row.privileges),
      private: Number(row.private),
      user_privileges: row.user_privileges === null ? null : Number(row.user_privileges),
    }
  );
}
