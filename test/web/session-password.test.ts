// A web session lasts only while its owner's password is the one it was opened with: a password hash
// changed by another program writing the users table (not through tokend) ends it on its next use, and the
// row goes; API tokens of the same user keep working; a session from before the fingerprint was recorded
// lasts until it expires.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hash as bcrypt } from '@node-rs/bcrypt';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, build, type Harness, type TestUser } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import { passwordFingerprint } from '../../src/auth/secret.ts';

/** Signs `user` in on a browser of its own and returns the session's cookie and row id. */
async function signedIn(h: Harness, user: TestUser): Promise<{ rt: string; id: number }> {
  const browser = new InjectBrowser(h.app);
  await browser.signIn(user);
  const row = await h.store.db
    .selectFrom('tokens')
    .select('id')
    .where('user_id', '=', user.id)
    .where('session', '=', 1)
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  return { rt: browser.cookies.get('rt')!, id: row.id };
}

const tokensPage = (h: Harness, rt: string) =>
  h.app.inject({ method: 'GET', url: '/tokens', cookies: { rt } });

const storedHash = async (h: Harness, userId: number): Promise<string> =>
  (
    await h.store.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', userId)
      .executeTakeFirstOrThrow()
  ).password_hash;

/** What another program does: a new bcrypt hash written straight into the users table. */
const changePasswordBySql = async (h: Harness, userId: number, hash: string) =>
  h.store.db.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).execute();

/** A session's stored fingerprint, set by SQL: an older session's NULL, or a forged value. */
const setFingerprint = (h: Harness, sessionId: number, fingerprint: string | null) =>
  h.store.db
    .updateTable('tokens')
    .set({ password_fingerprint: fingerprint })
    .where('id', '=', sessionId)
    .execute();

for (const dialect of DIALECTS) {
  describe(`web session and password changes [${dialect}]`, () => {
    it('remembers the fingerprint of the stored password hash it was opened with', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const session = await signedIn(h, user);
      const row = await h.store.db
        .selectFrom('tokens')
        .select('password_fingerprint')
        .where('id', '=', session.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.password_fingerprint, passwordFingerprint(await storedHash(h, user.id)));
      // API tokens carry none
      const api = await h.createToken(user.id);
      const apiRow = await h.store.db
        .selectFrom('tokens')
        .select('password_fingerprint')
        .where('id', '=', api.id)
        .executeTakeFirstOrThrow();
      assert.equal(apiRow.password_fingerprint, null);
    });

    it("ends the session when another program changes the password, for good; API tokens and others' sessions stay", async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const other = await h.createUser();
      const session = await signedIn(h, user);
      const othersSession = await signedIn(h, other);
      const api = await h.createToken(user.id);
      assert.equal((await tokensPage(h, session.rt)).statusCode, 200);

      const before = await storedHash(h, user.id);
      await changePasswordBySql(h, user.id, await bcrypt('changed elsewhere', 4));
      // Attack: the cookie's secret presented to the API instead is nothing there either (and ends the row).
      const asApi = await h.api({ method: 'GET', path: '/ping', headers: { 'x-ripple-token': session.rt } });
      assert.equal(body(asApi).user_id, 0);
      const left = await h.store.db.selectFrom('tokens').select('id').where('id', '=', session.id).execute();
      assert.deepEqual(left, [], 'the session row was deleted');
      const page = await tokensPage(h, session.rt);
      assert.equal(page.statusCode, 303, page.body);
      assert.match(String(page.headers.location), /\/login/);

      // The very same hash set back does not bring the session back.
      await changePasswordBySql(h, user.id, before);
      assert.equal((await tokensPage(h, session.rt)).statusCode, 303);

      const ping = await h.api({ method: 'GET', path: '/ping', headers: { 'x-ripple-token': api.secret } });
      assert.equal(ping.statusCode, 200, ping.body);
      assert.equal(body(ping).user_id, user.id);
      assert.equal((await tokensPage(h, othersSession.rt)).statusCode, 200);
      // A new sign-in with the current password works.
      assert.equal((await tokensPage(h, (await signedIn(h, user)).rt)).statusCode, 200);
    });

    it('keeps a session from before the fingerprint was recorded (NULL) working after a password change', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const session = await signedIn(h, user);
      await setFingerprint(h, session.id, null);
      await changePasswordBySql(h, user.id, await bcrypt('changed elsewhere', 4));
      assert.equal((await tokensPage(h, session.rt)).statusCode, 200);
    });

    it('refuses a session whose fingerprint was forged to another value, and deletes it', async (t) => {
      const h = await build(t, dialect);
      const user = await h.createUser();
      const session = await signedIn(h, user);
      await setFingerprint(h, session.id, '0000000000000000');
      const page = await tokensPage(h, session.rt);
      assert.equal(page.statusCode, 303, page.body);
      assert.match(String(page.headers.location), /\/login/);
      const left = await h.store.db.selectFrom('tokens').select('id').where('id', '=', session.id).execute();
      assert.deepEqual(left, [], 'the session row was deleted');
    });
  });
}
