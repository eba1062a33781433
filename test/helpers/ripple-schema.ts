// The Ripple family's `users` and `tokens` tables, made on a MariaDB/MySQL connection from the project's
// reference file docs/ripple-schema.sql, so every test's family database has the form the docs name
// (latin1, the family's columns and defaults); and rows written with the SQL the family's programs use.
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { hash as bcrypt } from '@node-rs/bcrypt';
import type { Connection, ResultSetHeader } from 'mysql2/promise';
import { IN_CI, answers } from './dialects.ts';

const SCHEMA_FILE = new URL('../../docs/ripple-schema.sql', import.meta.url);

/** The file's statements, in order: whole-line comments dropped, split where a line ends in `;`. */
export function rippleSchemaStatements(): string[] {
  const text = readFileSync(SCHEMA_FILE, 'utf8')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n');
  return text
    .split(/;[ \t]*$/m)
    .map((statement) => statement.trim())
    .filter((statement) => statement !== '');
}

/** Makes the connection's (empty) database the family's: latin1, its `users` and `tokens` tables. */
export async function createRippleTables(connection: Connection): Promise<void> {
  for (const statement of rippleSchemaStatements()) await connection.query(statement);
}

/**
 * Why no Ripple-family database can be made here (MariaDB does not answer), or undefined. With CI=true a
 * server that does not answer fails the run instead.
 */
export async function rippleSourceProblem(): Promise<string | undefined> {
  const problem = await answers('mysql');
  if (problem !== undefined && IN_CI) throw new Error(`CI=true but MariaDB does not answer: ${problem}`);
  return problem;
}

export const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

/** The family's `username_safe` of a name (hanayo's safeUsername): trimmed, lower case, spaces as `_`. */
export const familyUsernameSafe = (username: string): string =>
  username.trim().toLowerCase().replaceAll(' ', '_');

/** hanayo's password form: bcrypt of the lower-case MD5 hex of the password (password_version 2). */
export const familyPasswordHash = (password: string, cost = 4): Promise<string> =>
  bcrypt(md5(password), cost);

export interface WebsiteUser {
  /** the id to give the row; AUTO_INCREMENT's next when absent */
  id?: number;
  username: string;
  /** the password to hash as the website does; `null` writes an empty password_md5 (the family's bots) */
  password: string | null;
  /** the stored form of the password, when already made (a costlier bcrypt); `password` is then unused */
  passwordHash?: string;
  privileges: number;
  /** 2 (the website's) unless given; version 1 stores the unsalted MD5 hex */
  passwordVersion?: number;
  email?: string;
  /** unix seconds; the time of the insert when absent */
  registered?: number;
}

/**
 * A user row as the family's website (hanayo) signs one up: the columns of its INSERT, `salt` '', the
 * name's `username_safe`, the password's bcrypt(md5) with password_version 2. Returns the row's id.
 */
export async function signUpOnWebsite(connection: Connection, user: WebsiteUser): Promise<number> {
  const version = user.passwordVersion ?? 2;
  const hash =
    user.passwordHash ??
    (user.password === null
      ? ''
      : version === 1
        ? md5(user.password)
        : await familyPasswordHash(user.password));
  const [result] = await connection.query<ResultSetHeader>(
    `INSERT INTO users (id, username, username_safe, password_md5, salt, email, register_datetime, privileges, password_version)
     VALUES (?, ?, ?, ?, '', ?, ?, ?, ?)`,
    [
      user.id ?? null,
      user.username,
      familyUsernameSafe(user.username),
      hash,
      user.email ?? `${familyUsernameSafe(user.username)}@example.com`,
      user.registered ?? Math.floor(Date.now() / 1000),
      user.privileges,
      version,
    ],
  );
  return result.insertId;
}

/**
 * A token row as the family's API and hanayo write one: the owner's id as text, the MD5 hex of the secret,
 * `last_updated` now. Returns the row's id.
 */
export async function writeFamilyToken(
  connection: Connection,
  token: {
    user: string | number;
    secret: string;
    privileges?: number;
    private?: boolean;
    description?: string;
  },
): Promise<number> {
  const [result] = await connection.query<ResultSetHeader>(
    'INSERT INTO tokens (user, privileges, description, token, private, last_updated) VALUES (?, ?, ?, ?, ?, UNIX_TIMESTAMP())',
    [
      String(token.user),
      token.privileges ?? 0,
      token.description ?? '',
      md5(token.secret),
      token.private === true ? 1 : 0,
    ],
  );
  return result.insertId;
}
