// The device authorization grant (RFC 8628): what a device code and its user code are, and their rows.
// - A device code is 256 random bits, stored as SHA-256; a user code is 8 letters of USER_CODE_ALPHABET
//   (consonants only: no vowel spells a word, and none of 0/O, 1/I/L, 5/S, 2/Z… can be mistaken for
//   another: no digit at all), shown as XXXX-XXXX, stored as the SHA-256 of its 8 letters. It is compared
//   case-insensitively, without dashes or spaces.
// - A code lives DEVICE_CODE_TTL_S; the device polls every DEVICE_POLL_INTERVAL_S, 5 s more after each
//   poll that came too early (slow_down). It is pending until the signed-in user approves or denies it on
//   /device; an approved one is exchanged once (status used); rows stay DEVICE_CODE_KEEP_S past their
//   expiry (so that a late poll still hears expired_token and a used code invalid_grant), then are swept.
// - Bounds: an application has at most PENDING_DEVICE_CODES_PER_CLIENT_MAX codes waiting; a user's approved
//   codes not yet exchanged are bounded by the grant bounds, as unexchanged authorization codes are.
import { randomInt } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { OAuthGrantBounds } from '../config.ts';
import type { Db } from '../store/database.ts';
import type { OAuthDeviceCodeTable } from '../store/schema.ts';
import { isUniqueViolation } from '../store/errors.ts';
import { endOldestBeyond } from '../auth/mint.ts';
import { deleteInBatches } from '../store/batches.ts';
import { newOAuthSecret, sha256Hex } from './secrets.ts';

export type DeviceCodeRow = Selectable<OAuthDeviceCodeTable>;

export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
export const DEVICE_CODE_TTL_S = 600;
export const DEVICE_POLL_INTERVAL_S = 5;
/** How much a poll that came too early raises the interval (RFC 8628 §3.5). */
export const DEVICE_SLOW_DOWN_S = 5;
/** How long a row stays after its code expired, before the sweep deletes it. */
export const DEVICE_CODE_KEEP_S = 3600;
/** Codes one application may have waiting for a user at once; beyond it, 429 slow_down. */
export const PENDING_DEVICE_CODES_PER_CLIENT_MAX = 1000;

export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** A new user code, as shown: XXXX-XXXX. */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** What a person typed as a user code, as compared (8 letters, upper case), or undefined if it cannot be one. */
export function normalUserCode(typed: string): string | undefined {
  if (typed.length > 64) return undefined;
  const letters = typed.toUpperCase().replace(/[\s-]+/g, '');
  if (letters.length !== USER_CODE_LENGTH) return undefined;
  for (const c of letters) if (!USER_CODE_ALPHABET.includes(c)) return undefined;
  return letters;
}

/** A normal user code shown as XXXX-XXXX. */
export const shownUserCode = (normal: string): string => `${normal.slice(0, 4)}-${normal.slice(4)}`;

/** The stored form of a user code (normal). */
export const userCodeHash = (normal: string): string => sha256Hex(normal);

/** The status column's values. */
export type DeviceStatus = 'pending' | 'approved' | 'denied' | 'used';

/** A new device authorization of `clientId` for `scope`: its secrets (the row holds only their hashes). */
export async function startDeviceAuthorization(
  db: Db,
  clientId: string,
  scope: string,
  now: number,
): Promise<{ deviceCode: string; userCode: string }> {
  for (let attempt = 1; ; attempt++) {
    const deviceCode = newOAuthSecret();
    const userCode = newUserCode();
    try {
      await db
        .insertInto('oauth_device_codes')
        .values({
          device_code_hash: sha256Hex(deviceCode),
          user_code_hash: userCodeHash(userCode.replace('-', '')),
          client_id: clientId,
          scope,
          status: 'pending',
          user_id: null,
          auth_time: null,
          interval_s: DEVICE_POLL_INTERVAL_S,
          polled_at: null,
          created_at: now,
          expires_at: now + DEVICE_CODE_TTL_S,
        })
        .execute();
      return { deviceCode, userCode };
    } catch (err) {
      // A user code another row still holds (one in 2.56·10¹⁰): draw again.
      if (!isUniqueViolation(err) || attempt >= 5) throw err;
    }
  }
}

/** Codes of the application still waiting for a user at `now`. */
export async function countPendingDeviceCodes(db: Db, clientId: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('oauth_device_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('client_id', '=', clientId)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return row.n;
}

export async function findDeviceCode(db: Db, deviceCodeHash: string): Promise<DeviceCodeRow | undefined> {
  return db
    .selectFrom('oauth_device_codes')
    .selectAll()
    .where('device_code_hash', '=', deviceCodeHash)
    .executeTakeFirst();
}

/** The code waiting for a user with this (normal) user code at `now`, or undefined. */
export async function findPendingByUserCode(
  db: Db,
  normal: string,
  now: number,
): Promise<DeviceCodeRow | undefined> {
  return db
    .selectFrom('oauth_device_codes')
    .selectAll()
    .where('user_code_hash', '=', userCodeHash(normal))
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * The user's decision on a pending code: approved (with when the user signed in, the id_token's
 * auth_time) or denied. False when it is no longer pending (decided elsewhere, or expired).
 */
export async function decideDeviceCode(
  db: Db,
  deviceCodeHash: string,
  decision: { status: 'approved' | 'denied'; userId: number; authTime: number | null },
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('oauth_device_codes')
    .set({ status: decision.status, user_id: decision.userId, auth_time: decision.authTime })
    .where('device_code_hash', '=', deviceCodeHash)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * A poll at `now`: recorded when the interval since the last one is up (one second of leeway for clocks
 * that round), in one atomic update. Otherwise the interval grows by DEVICE_SLOW_DOWN_S and this poll
 * counts as the last one: returns the new interval. Undefined: the poll was in time.
 */
export async function recordPoll(db: Db, deviceCodeHash: string, now: number): Promise<number | undefined> {
  const inTime = await db
    .updateTable('oauth_device_codes')
    .set({ polled_at: now })
    .where('device_code_hash', '=', deviceCodeHash)
    .where((eb) =>
      eb.or([
        eb('polled_at', 'is', null),
        eb(sql<number>`${sql.ref('polled_at')} + ${sql.ref('interval_s')}`, '<=', now + 1),
      ]),
    )
    .executeTakeFirst();
  if (Number(inTime.numUpdatedRows) === 1) return undefined;
  await db
    .updateTable('oauth_device_codes')
    .set((eb) => ({ polled_at: now, interval_s: eb('interval_s', '+', DEVICE_SLOW_DOWN_S) }))
    .where('device_code_hash', '=', deviceCodeHash)
    .where('interval_s', '<', DEVICE_CODE_TTL_S)
    .execute();
  const row = await findDeviceCode(db, deviceCodeHash);
  return row ? row.interval_s : DEVICE_POLL_INTERVAL_S;
}

/** Marks an approved code used; false when it already was (exactly one exchange wins a race). */
export async function claimDeviceCode(db: Db, deviceCodeHash: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_device_codes')
    .set({ status: 'used' })
    .where('device_code_hash', '=', deviceCodeHash)
    .where('status', '=', 'approved')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * After an approval: the user's approved codes not yet exchanged beyond the grant bounds (with this
 * application, and in all) end, the oldest first; the new one stays.
 */
export async function endApprovalsBeyond(
  db: Db,
  approved: { device_code_hash: string; user_id: number; client_id: string },
  bounds: OAuthGrantBounds,
): Promise<void> {
  const others = (clientId: string | undefined) => async (offset: number, limit: number) => {
    let query = db
      .selectFrom('oauth_device_codes')
      .select('device_code_hash')
      .where('user_id', '=', approved.user_id)
      .where('status', '=', 'approved')
      .where('device_code_hash', '<>', approved.device_code_hash);
    if (clientId !== undefined) query = query.where('client_id', '=', clientId);
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('device_code_hash', 'desc')
      .offset(offset)
      .limit(limit)
      .execute();
    return rows.map((r) => r.device_code_hash);
  };
  const end = async (hashes: string[]) =>
    Number(
      (await db.deleteFrom('oauth_device_codes').where('device_code_hash', 'in', hashes).executeTakeFirst())
        .numDeletedRows,
    );
  await endOldestBeyond(bounds.perClient - 1, others(approved.client_id), end);
  await endOldestBeyond(bounds.perUser - 1, others(undefined), end);
}

/** Deletes the rows DEVICE_CODE_KEEP_S past their expiry, in batches; returns how many. */
export function deleteExpiredDeviceCodes(db: Db, now: number): Promise<number> {
  return deleteInBatches(
    async (limit) =>
      (
        await db
          .selectFrom('oauth_device_codes')
          .select('device_code_hash')
          .where('expires_at', '<=', now - DEVICE_CODE_KEEP_S)
          .limit(limit)
          .execute()
      ).map((r) => r.device_code_hash),
    async (hashes) =>
      Number(
        (await db.deleteFrom('oauth_device_codes').where('device_code_hash', 'in', hashes).executeTakeFirst())
          .numDeletedRows,
      ),
  );
}
