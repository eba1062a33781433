// The checks of one source row of tokend import-ripple (pure: no database).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rowToToken, rowToUser } from '../../src/ripple/import.ts';
import { MAX_EXPLICIT_ID } from '../../src/store/ids.ts';
import { NO_PASSWORD } from '../../src/users/passwords.ts';

const BCRYPT = `$2a$04$${'a'.repeat(53)}`;
const user = (over: Record<string, unknown> = {}) => ({
  id: 5,
  username: 'Some One',
  username_safe: 'some_one',
  privileges: 3,
  password_md5: BCRYPT,
  password_version: 2,
  ...over,
});
const token = (over: Record<string, unknown> = {}) => ({
  id: 7,
  user: '5',
  privileges: 2,
  description: 'app',
  token: 'ABCDEF0123456789abcdef0123456789',
  private: 0,
  last_updated: 1_600_000_000,
  ...over,
});
const reason = (v: object) => ('problem' in v ? (v as { problem: string }).problem : undefined);

describe('rowToUser', () => {
  it('keeps the id, folds the name, and takes the sign-up time when there is one', () => {
    assert.deepEqual(rowToUser(user({ register_datetime: '1500000000' }), 99), {
      id: 5,
      username: 'Some One',
      username_safe: 'some_one',
      privileges: 3,
      password_hash: BCRYPT,
      password_version: 2,
      created_at: 1_500_000_000,
    });
    assert.equal((rowToUser(user({ register_datetime: 0 }), 99) as { created_at: number }).created_at, 99);
  });
  it('takes big integers handed over as strings or bigints, and names from byte buffers', () => {
    const u = rowToUser(
      user({ id: String(MAX_EXPLICIT_ID), privileges: 3n, username: Buffer.from('Zoë') }),
      1,
    );
    assert.deepEqual(
      [(u as { id: number }).id, (u as { privileges: number }).privileges],
      [MAX_EXPLICIT_ID, 3],
    );
    assert.equal((u as { username_safe: string }).username_safe, 'zoë');
  });
  it('refuses what tokend cannot hold, saying why', () => {
    assert.match(reason(rowToUser(user({ id: 0 }), 1))!, /id 0 is below 1/);
    assert.match(reason(rowToUser(user({ id: -7n }), 1))!, /id -7 is below 1/);
    // The ids above MAX_EXPLICIT_ID are left to the ids tokend generates (src/store/ids.ts).
    for (const id of [MAX_EXPLICIT_ID + 1, '2147483647', '2147483648', '99999999999999999999'])
      assert.match(
        reason(rowToUser(user({ id }), 1))!,
        new RegExp(`id ${String(id)} is above ${MAX_EXPLICIT_ID}`),
        String(id),
      );
    assert.match(reason(rowToUser(user({ id: 1.5 }), 1))!, /id "1.5" is not an integer/);
    assert.match(reason(rowToUser(user({ username: 'Ρaul' }), 1))!, /may not mix Greek and Latin letters/);
    assert.match(
      reason(rowToUser(user({ privileges: 2 ** 31 }), 1))!,
      /privileges 2147483648 is out of range/,
    );
    assert.match(reason(rowToUser(user({ username: '  ' }), 1))!, /1 to 255 characters/);
    assert.match(reason(rowToUser(user({ username: null }), 1))!, /not text/);
    assert.match(reason(rowToUser(user({ password_md5: 'x' }), 1))!, /not a bcrypt hash/);
    assert.match(reason(rowToUser(user({ password_version: 0 }), 1))!, /password_version 0 is unknown/);
    // Version 1 hashes cannot be checked; they are kept, and sign-in keeps answering 418.
    assert.equal(
      reason(rowToUser(user({ password_version: 1, password_md5: 'ab'.repeat(16) }), 1)),
      undefined,
    );
  });
  it('takes an empty password_md5 (a bot) as no password, whatever its version said', () => {
    for (const version of [1, 2, '1']) {
      const bot = rowToUser(user({ password_md5: '', password_version: version }), 1);
      assert.deepEqual(
        [
          (bot as { password_hash: string }).password_hash,
          (bot as { password_version: number }).password_version,
        ],
        [NO_PASSWORD, 2],
        String(version),
      );
    }
    assert.match(reason(rowToUser(user({ password_md5: '', password_version: 7 }), 1))!, /7 is unknown/);
    assert.match(reason(rowToUser(user({ password_md5: ' ', password_version: 2 }), 1))!, /not a bcrypt/);
  });
});

describe('rowToToken', () => {
  it('keeps the MD5 hash in its legacy form, lower-cased, and parses the owner id', () => {
    assert.deepEqual(rowToToken(token({ user: ' 5 ', private: 2 })), {
      id: 7,
      user_id: 5,
      privileges: 2,
      description: 'app',
      token_hash: 'md5:abcdef0123456789abcdef0123456789',
      private: 1,
      last_updated: 1_600_000_000,
    });
  });
  it('refuses what tokend cannot hold, saying why', () => {
    assert.match(reason(rowToToken(token({ id: 2147483647 })))!, /id 2147483647 is above/);
    assert.match(reason(rowToToken(token({ id: -1 })))!, /id -1 is below 1/);
    assert.match(reason(rowToToken(token({ user: '5a' })))!, /user "5a" is not a user id/);
    assert.match(reason(rowToToken(token({ user: '0' })))!, /not a user id/);
    assert.match(reason(rowToToken(token({ token: 'abc' })))!, /not the MD5 hex/);
    assert.match(reason(rowToToken(token({ privileges: -1 })))!, /privileges -1 is out of range/);
    assert.match(reason(rowToToken(token({ description: 'x'.repeat(1025) })))!, /longer than 1024/);
    assert.match(reason(rowToToken(token({ last_updated: -3 })))!, /not a Unix time/);
  });
});
