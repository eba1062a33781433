// Users: plain functions over the database handle or a transaction.
import type { Selectable } from 'kysely';
import type { Db } from '../store/database.ts';
import { followExplicitIds, insertReturningId } from '../store/sql-dialect.ts';
import { MAX_ID, type UserTable } from '../store/schema.ts';
import { canMatchText } from '../store/text.ts';
import { usernameSafe } from './username.ts';
import { decimalInteger } from '../decimal-integer.ts';
import { recordEvent, withEvents, type Act } from '../auth/security-log.ts';

export type UserRow = Selectable<UserTable>;

/** Ids are 32-bit integers in every dialect; anything else cannot name a user and is never sent to SQL. */
export const isPossibleUserId = (id: number): boolean => Number.isInteger(id) && id >= 1 && id <= MAX_ID;

export async function findUserById(db: Db, id: number): Promise<UserRow | undefined> {
  if (!isPossibleUserId(id)) return undefined;
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUserByUsername(db: Db, username: string): Promise<UserRow | undefined> {
  if (!canMatchText(username)) return undefined;
  return db
    .selectFrom('users')
    .selectAll()
    .where('username_safe', '=', usernameSafe(username))
    .executeTakeFirst();
}

/** A user named by id (all digits) or by username, as the CLI's `U` argument. */
export async function findUserByIdOrName(db: Db, ref: string): Promise<UserRow | undefined> {
  const id = decimalInteger(ref);
  if (id !== undefined) {
    const byId = await findUserById(db, id);
    if (byId) return byId;
  }
  return findUserByUsername(db, ref);
}

export interface NewUser {
  id?: number;
  username: string;
  passwordHash: string;
  passwordVersion: number;
  privileges: number;
  now: number;
}

export async function insertUser(db: Db, user: NewUser): Promise<number> {
  const id = await insertReturningId(db, 'users', {
    ...(user.id !== undefined ? { id: user.id } : {}),
    username: user.username,
    username_safe: usernameSafe(user.username),
    privileges: user.privileges,
    password_hash: user.passwordHash,
    password_version: user.passwordVersion,
    created_at: user.now,
  });
  if (user.id !== undefined) await followExplicitIds(db, 'users');
  return id;
}

/** Replaces a user's privileges (the security log's `privileges.changed`, published). */
export async function setUserPrivileges(
  db: Db,
  id: number,
  privileges: number,
  previous: number,
  act: Act,
): Promise<void> {
  await withEvents(db, act, async (trx) => {
    await trx.updateTable('users').set({ privileges }).where('id', '=', id).execute();
    await recordEvent(trx, act, {
      userId: id,
      kind: 'privileges.changed',
      detail: `${previous} → ${privileges}`,
    });
  });
}

/** Whether any user exists (the start-up says how to create the first one while none does). */
export async function hasAnyUser(db: Db): Promise<boolean> {
  return (await db.selectFrom('users').select('id').limit(1).executeTakeFirst()) !== undefined;
}

export async function listUsers(db: Db): Promise<Array<Pick<UserRow, 'id' | 'username' | 'privileges'>>> {
  return db.selectFrom('users').select(['id', 'username', 'privileges']).orderBy('id').execute();
}
