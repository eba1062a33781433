// tokend in place on a Ripple-family database (DATABASE_SCHEMA=ripple): a fresh MariaDB/MySQL database of
// the test's own made with the family's users and tokens tables (docs/ripple-schema.sql), tokend's additions applied as
// `tokend migrate` applies them, and apps on it; plus SQL run the way the family's programs run it (a
// user signed up as its website does, a token as its API and hanayo write one, its API's token lookup).
import type { TestContext } from 'node:test';
import { createHash } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { hash as bcrypt } from '@node-rs/bcrypt';
import { createConnection, type Connection, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { loadConfig, type Config, type DatabaseConfig } from '../../src/config.ts';
import { buildApp, type BuildOptions } from '../../src/app.ts';
import { UserPrivilege } from '../../src/auth/privileges.ts';
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

/** The lower-case MD5 hex of a text (UTF-8): how the family stores a secret and a password. */
export const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

/** An ordinary player of the family: UserPublic + UserNormal. */
export const PLAYER = UserPrivilege.UserPublic | UserPrivilege.UserNormal;

let counter = 0;

/** A user as the family's website signs one up: password_md5 = bcrypt(md5(password)), version 2. */
export async function signUp(
  db: FamilyDatabase,
  privileges = PLAYER,
): Promise<{ id: number; username: string; password: string }> {
  counter++;
  const username = `Player ${counter}`;
  const password = `password ${counter}`;
  const [result] = await db.family.query<ResultSetHeader>(
    `INSERT INTO users (username, username_safe, password_md5, email, register_datetime, password_version, privileges)
     VALUES (?, ?, ?, ?, UNIX_TIMESTAMP(), 2, ?)`,
    [
      username,
      username.toLowerCase().replaceAll(' ', '_'),
      await bcrypt(md5(password), 4),
      `p${counter}@example.com`,
      privileges,
    ],
  );
  return { id: result.insertId, username, password };
}

/** A token as the family's API and hanayo write one: the MD5 hex of the secret, `user` as text. */
export async function familyToken(
  db: FamilyDatabase,
  user: string | number,
  options: { privileges?: number; private?: boolean; description?: string } = {},
): Promise<{ id: number; secret: string }> {
  const secret = `family-secret-${++counter}-${Math.random().toString(36).slice(2)}`;
  const [result] = await db.family.query<ResultSetHeader>(
    'INSERT INTO tokens (user, privileges, description, token, private, last_updated) VALUES (?, ?, ?, ?, ?, UNIX_TIMESTAMP())',
    [String(user), options.privileges ?? 0, options.description ?? '', md5(secret), options.private ? 1 : 0],
  );
  return { id: result.insertId, secret };
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
