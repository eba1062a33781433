// DATABASE_SCHEMA=ripple, black-box: tokend in place on a MariaDB/MySQL database made with the Ripple
// family's users and tokens tables. What the family's programs write with their own SQL (a new user, a
// ban, hanayo's private sign-in token, a developer token inserted or deleted) applies on the next request
// of two tokend instances on that database; what tokend writes stays readable by the family's query.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { hash as bcrypt } from '@node-rs/bcrypt';
import type { RowDataPacket } from 'mysql2/promise';
import { IN_CI, answers } from '../helpers/dialects.ts';
import { familyDatabase, inPlaceApp, type FamilyDatabase, type InPlaceApp } from '../helpers/in-place.ts';
import { TokenPrivilege, UserPrivilege } from '../../src/auth/privileges.ts';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

const mysqlProblem = await answers('mysql');
if (mysqlProblem !== undefined && IN_CI) throw new Error(`CI=true but MariaDB does not answer: ${mysqlProblem}`);

const U = UserPrivilege;
const T = TokenPrivilege;
/** An ordinary player of the family: UserPublic + UserNormal. */
const PLAYER = U.UserPublic | U.UserNormal;
const ADMIN = PLAYER | U.AdminAccessRAP | U.AdminManageUsers | U.AdminBanUsers;

let counter = 0;

/** A user as the family's website signs one up: password_md5 = bcrypt(md5(password)), version 2. */
async function signUp(db: FamilyDatabase, privileges = PLAYER): Promise<{ id: number; username: string; password: string }> {
  counter++;
  const username = `Player ${counter}`;
  const password = `password ${counter}`;
  const [result] = await db.family.query<RowDataPacket[]>(
    `INSERT INTO users (username, username_safe, password_md5, email, register_datetime, password_version, privileges)
     VALUES (?, ?, ?, ?, UNIX_TIMESTAMP(), 2, ?)`,
    [username, username.toLowerCase().replaceAll(' ', '_'), await bcrypt(md5(password), 4), `p${counter}@example.com`, privileges],
  );
  return { id: (result as unknown as { insertId: number }).insertId, username, password };
}

/** A token as the family's API and hanayo write one: the MD5 hex of the secret, `user` as text. */
async function familyToken(
  db: FamilyDatabase,
  user: string | number,
  options: { privileges?: number; private?: boolean; description?: string } = {},
): Promise<{ id: number; secret: string }> {
  const secret = `family-secret-${++counter}-${Math.random().toString(36).slice(2)}`;
  const [result] = await db.family.query(
    'INSERT INTO tokens (user, privileges, description, token, private, last_updated) VALUES (?, ?, ?, ?, ?, UNIX_TIMESTAMP())',
    [String(user), options.privileges ?? 0, options.description ?? '', md5(secret), options.private ? 1 : 0],
  );
  return { id: (result as unknown as { insertId: number }).insertId, secret };
}

const ping = async (app: InPlaceApp, secret: string) => {
  const r = await app.api({ method: 'GET', path: '/ping', headers: { 'x-ripple-token': secret } });
  assert.equal(r.statusCode, 200, r.body);
  return r.json() as { user_id: number; privileges: number; user_privileges: number };
};

describe('tokend in place on a Ripple-family database', { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` }, () => {
  it('sees users and tokens as the family writes them, on the next request of two instances', async (t) => {
    const db = await familyDatabase(t);
    const one = await inPlaceApp(t, db);
    const two = await inPlaceApp(t, db);
    const user = await signUp(db);
    const token = await familyToken(db, user.id, { privileges: T.ReadConfidential | T.Write });
    for (const app of [one, two]) {
      const p = await ping(app, token.secret);
      assert.equal(p.user_id, user.id);
      assert.equal(p.privileges, T.ReadConfidential | T.Write);
    }
  });
});
