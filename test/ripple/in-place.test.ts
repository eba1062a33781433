// DATABASE_SCHEMA=ripple, black-box: tokend in place on a MariaDB/MySQL database made with the Ripple
// family's users and tokens tables. What the family's programs write with their own SQL (a new user, a
// ban, hanayo's private sign-in token, a developer token inserted or deleted) applies on the next request
// of two tokend instances on that database; what tokend writes stays readable by the family's query.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RowDataPacket } from 'mysql2/promise';
import { IN_CI, answers } from '../helpers/dialects.ts';
import {
  PLAYER,
  familyDatabase,
  familyLookup,
  familyToken,
  inPlaceApp,
  signUp,
  type FamilyDatabase,
  type InPlaceApp,
} from '../helpers/in-place.ts';
import {
  ALL_TOKEN_PRIVILEGES,
  FAMILY_PRIVATE_TOKEN_PRIVILEGES,
  TokenPrivilege,
  UserPrivilege,
  limit,
} from '../../src/auth/privileges.ts';
import { familyPasswordHash, md5 } from '../helpers/ripple-schema.ts';
import { hashTokenSecret } from '../../src/auth/secret.ts';
import { loadConfig } from '../../src/config.ts';
import { migrateDatabase, openStore, showPendingMigrations } from '../../src/store/database.ts';
import { inPlaceMigrationTables } from '../../src/store/ripple.ts';
import {
  FAMILY_CHANGES,
  IN_PLACE_MIGRATION_LOCK_TABLE,
  IN_PLACE_MIGRATION_TABLE,
  inPlaceMigrations,
} from '../../src/store/in-place-migrations.ts';
import { mysqlKysely } from '../../src/store/drivers/mysql.ts';
import { Migrator } from 'kysely/migration';
import { fixTokenPrivileges } from '../../src/tokens/repository.ts';
import { InjectBrowser, csrfOf } from '../helpers/inject-browser.ts';
import { runCli } from '../helpers/cli.ts';
import { startTokend } from '../helpers/real-server.ts';
import { eventually } from '../helpers/waiting.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { backChannel, obtainTokens, registerClient } from '../helpers/oauth.ts';

const mysqlProblem = await answers('mysql');
if (mysqlProblem !== undefined && IN_CI)
  throw new Error(`CI=true but MariaDB does not answer: ${mysqlProblem}`);

const U = UserPrivilege;
const T = TokenPrivilege;
const ADMIN = PLAYER | U.AdminAccessRAP | U.AdminManageUsers | U.AdminBanUsers;

const ping = async (app: InPlaceApp, secret: string) => {
  const r = await app.api({ method: 'GET', path: '/ping', headers: { 'x-ripple-token': secret } });
  assert.equal(r.statusCode, 200, r.body);
  return r.json() as { user_id: number; privileges: number; user_privileges: number };
};

/** What the family's programs read of every token (hanayo's /dev/tokens, the API's lookups). */
const FAMILY_SELECT = 'SELECT id, user, privileges, description, token, private, last_updated FROM tokens';

const login = (
  app: InPlaceApp,
  username: string,
  password: string,
  privileges = T.ReadConfidential | T.Write,
) =>
  app.api({
    method: 'POST',
    path: '/tokens',
    payload: { username, password, privileges, description: 'made by tokend' },
  });

const listed = async (app: InPlaceApp, secret: string) => {
  const r = await app.api({ method: 'GET', path: '/tokens', headers: { 'x-ripple-token': secret } });
  assert.equal(r.statusCode, 200, r.body);
  return (r.json() as { tokens: Array<{ id: number; description: string }> }).tokens;
};

describe(
  'tokend in place on a Ripple-family database',
  { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
  () => {
    it("reads the family's users as they are at each request, on two instances", async (t) => {
      const db = await familyDatabase(t);
      const instances = [await inPlaceApp(t, db), await inPlaceApp(t, db)] as const;
      // A user the website signs up now can sign in at once, on either instance.
      const user = await signUp(db);
      const made = await login(instances[1], user.username, user.password);
      assert.equal(made.statusCode, 200, made.body);
      const { token } = made.json() as { token: string };
      for (const app of instances) {
        const p = await ping(app, token);
        assert.deepEqual(
          [p.user_id, p.privileges, p.user_privileges],
          [user.id, T.ReadConfidential | T.Write, PLAYER],
        );
      }

      // The admin panel bans: the next request of each instance carries nothing, and signing in is refused.
      await db.family.query('UPDATE users SET privileges = 0 WHERE id = ?', [user.id]);
      for (const app of instances) {
        assert.equal((await ping(app, token)).privileges, 0);
        assert.equal((await login(app, user.username, user.password)).statusCode, 402);
      }
      // Unbanned: the stored privileges are back, nothing was rewritten meanwhile.
      await db.family.query('UPDATE users SET privileges = ? WHERE id = ?', [PLAYER, user.id]);
      for (const app of instances)
        assert.equal((await ping(app, token)).privileges, T.ReadConfidential | T.Write);

      // A password changed by the website: the old one fails, the new one signs in.
      await db.family.query('UPDATE users SET password_md5 = ? WHERE id = ?', [
        await familyPasswordHash('new password'),
        user.id,
      ]);
      for (const app of instances) {
        assert.notEqual((await login(app, user.username, user.password)).statusCode, 200);
        assert.equal((await login(app, user.username, 'new password')).statusCode, 200);
      }
    });

    it("authenticates, lists and deletes the family's tokens as the family writes them, on two instances", async (t) => {
      const db = await familyDatabase(t);
      const instances = [await inPlaceApp(t, db), await inPlaceApp(t, db)] as const;
      const user = await signUp(db);
      const other = await signUp(db);
      // A developer token the website inserted, and one tokend makes: listed together, in id order.
      const dev = await familyToken(db, user.id, {
        privileges: T.ReadConfidential,
        description: 'from hanayo',
      });
      const mine = (await login(instances[0], user.username, user.password)).json() as { token: string };
      const othersToken = await familyToken(db, other.id, { description: "someone else's" });
      for (const app of instances) {
        assert.deepEqual(
          (await listed(app, dev.secret)).map((tk) => tk.description),
          ['from hanayo', 'made by tokend'],
        );
        assert.equal((await ping(app, dev.secret)).privileges, T.ReadConfidential);
      }

      // The website deletes its token: gone on the next request of both instances.
      await db.family.query('DELETE FROM tokens WHERE id = ?', [dev.id]);
      for (const app of instances) {
        assert.equal((await ping(app, dev.secret)).user_id, 0);
        assert.deepEqual(
          (await listed(app, mine.token)).map((tk) => tk.description),
          ['made by tokend'],
        );
      }
      // A privilege change by SQL applies too.
      await db.family.query('UPDATE tokens SET privileges = ? WHERE id = ?', [T.Write, othersToken.id]);
      assert.equal((await ping(instances[1], othersToken.secret)).privileges, T.Write);

      // tokend deletes a family token by id: the family's own table no longer has it.
      const again = await familyToken(db, user.id, { description: 'to revoke' });
      const revoked = await instances[1].api({
        method: 'DELETE',
        path: `/tokens/${again.id}`,
        headers: { 'x-ripple-token': mine.token },
      });
      assert.equal(revoked.statusCode, 200, revoked.body);
      const [rows] = await db.family.query<RowDataPacket[]>('SELECT id FROM tokens WHERE id = ?', [again.id]);
      assert.equal(rows.length, 0);
      // Another user's token is not this user's to delete or see.
      const refused = await instances[0].api({
        method: 'DELETE',
        path: `/tokens/${othersToken.id}`,
        headers: { 'x-ripple-token': mine.token },
      });
      assert.equal(refused.statusCode, 404, refused.body);
      assert.equal((await ping(instances[0], othersToken.secret)).user_id, other.id);
    });

    it("gives the family's private token every privilege but Bancho, limited by its owner, and never a web session", async (t) => {
      const db = await familyDatabase(t);
      const instances = [await inPlaceApp(t, db), await inPlaceApp(t, db)] as const;
      const admin = await signUp(db, ADMIN);
      // hanayo's sign-in: a private token stored with privileges 0.
      const session = await familyToken(db, admin.id, { private: true, description: 'hanayo session' });
      for (const app of instances) {
        const p = await ping(app, session.secret);
        assert.equal(p.user_id, admin.id);
        assert.equal(p.privileges, limit(FAMILY_PRIVATE_TOKEN_PRIVILEGES, ADMIN));
        // what an admin holds: more than a player's, and only what the admin may
        assert.ok(
          (p.privileges & T.ManageUser) !== 0 && (p.privileges & T.ReadConfidential) !== 0,
          String(p.privileges),
        );
        assert.equal(p.privileges & T.ManageAPIKeys, 0);
        // the family's (Beatmap << 1) - 1: no Bancho, which the admin may hold
        assert.equal(p.privileges & T.Bancho, 0);
        // never listed
        assert.deepEqual(await listed(app, session.secret), []);
      }
      // Demoted in the admin panel: the private token follows the owner on the next request.
      await db.family.query('UPDATE users SET privileges = ? WHERE id = ?', [PLAYER, admin.id]);
      for (const app of instances) {
        const p = await ping(app, session.secret);
        // a player's: ReadConfidential and Write, as the family's API answers (6, not 8198 with Bancho)
        assert.equal(p.privileges, T.ReadConfidential | T.Write);
      }
      // Restricted in the admin panel ((p | 2) & ~1): the family's API keeps the token's privileges, so
      // does tokend; banned (no UserNormal): nothing, admin bits included (the family would keep those).
      await db.family.query('UPDATE users SET privileges = (privileges | 2) & ~1 WHERE id = ?', [admin.id]);
      for (const app of instances)
        assert.equal((await ping(app, session.secret)).privileges, T.ReadConfidential | T.Write);
      await db.family.query('UPDATE users SET privileges = ? WHERE id = ?', [
        ADMIN & ~U.UserNormal,
        admin.id,
      ]);
      for (const app of instances) assert.equal((await ping(app, session.secret)).privileges, 0);
      // hanayo's sign-out clears its cookie and leaves this row: the token works on until the row is
      // deleted (here by hand), then it is nothing on the next request.
      await db.family.query('DELETE FROM tokens WHERE id = ?', [session.id]);
      for (const app of instances) assert.equal((await ping(app, session.secret)).user_id, 0);

      // Attack: a family private row, even marked as tokend's session in its own column, in the rt cookie,
      // opens none of tokend's pages.
      const crafted = await familyToken(db, admin.id, { private: true });
      await db.family.query(
        'UPDATE tokens SET tokend_session = 1, tokend_password_at = UNIX_TIMESTAMP() WHERE id = ?',
        [crafted.id],
      );
      for (const app of instances) {
        const page = await app.app.inject({ method: 'GET', url: '/tokens', cookies: { rt: crafted.secret } });
        assert.equal(page.statusCode, 303, page.body);
        assert.match(String(page.headers.location), /\/login/);
      }
    });

    it('refuses rows crafted to escalate: privileges beyond the owner, a user that is not an id written plainly', async (t) => {
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db);
      const player = await signUp(db);
      const admin = await signUp(db, ADMIN);
      const greedy = await familyToken(db, player.id, { privileges: ALL_TOKEN_PRIVILEGES });
      assert.equal((await ping(app, greedy.secret)).privileges, limit(ALL_TOKEN_PRIVILEGES, PLAYER));
      assert.equal((await ping(app, greedy.secret)).privileges & T.ManageUser, 0);
      // `user` is text: forms MySQL would cast to the admin's id belong to nobody, public or private.
      const forms = [
        `0${admin.id}`,
        `${admin.id} `,
        ` ${admin.id}`,
        `${admin.id}abc`,
        `${admin.id}.0`,
        '+' + admin.id,
        'abc',
        '',
      ];
      for (const form of forms)
        for (const isPrivate of [false, true]) {
          const row = await familyToken(db, form, { private: isPrivate, privileges: T.ManageUser });
          const p = await ping(app, row.secret);
          assert.deepEqual([p.user_id, p.privileges], [0, 0], JSON.stringify(form));
        }
      // and none of them is listed as the admin's
      const adminToken = await familyToken(db, admin.id, { description: 'plain' });
      assert.deepEqual(
        (await listed(app, adminToken.secret)).map((tk) => tk.description),
        ['plain'],
      );
      // nor stops a fix of every user's tokens (MariaDB's strict mode would refuse to read '1abc' as a
      // number there): the greedy row is limited, the rows of nobody are left as they are.
      const fixed = await fixTokenPrivileges(app.store.db, { kind: 'all' });
      assert.equal(fixed.rows, 1, 'the greedy row, and only it, is rewritten');
      const [rows] = await db.family.query<RowDataPacket[]>('SELECT id, user, privileges FROM tokens');
      assert.equal(rows.find((r) => r.id === greedy.id)?.privileges, limit(ALL_TOKEN_PRIVILEGES, PLAYER));
      for (const form of forms)
        assert.ok(
          rows.filter((r) => r.user === form).every((r) => r.privileges === T.ManageUser),
          JSON.stringify(form),
        );
    });

    it("writes every row so that the family's programs read it: its API tokens in the family's form, its sessions in none the family matches", async (t) => {
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db);
      const user = await signUp(db);
      await familyToken(db, user.id, { description: 'family' });
      const made = (await login(app, user.username, user.password)).json() as { token: string };
      const expiring = await app.api({
        method: 'POST',
        path: '/tokens',
        payload: { username: user.username, password: user.password, privileges: T.Write, expires_in: 3600 },
      });
      assert.equal(expiring.statusCode, 200, expiring.body);
      // a web sign-in writes its session into the family's table too
      const browser = new InjectBrowser(app.app);
      await browser.signIn(user);

      const [rows] = await db.family.query<RowDataPacket[]>(FAMILY_SELECT);
      assert.equal(rows.length, 4);
      for (const row of rows) {
        assert.equal(typeof row.id, 'number');
        assert.equal(row.user, String(user.id));
        assert.equal(typeof row.privileges, 'number');
        assert.equal(typeof row.description, 'string');
        assert.equal(typeof row.private, 'number');
        assert.equal(typeof row.last_updated, 'number');
        assert.ok(row.token.length > 0 && row.token.length <= 127, row.token);
      }
      const stored = rows.find((r) => r.description === 'made by tokend')!;
      // tokend's API token is stored as the family stores its own: the MD5 hex of the secret, never the
      // secret; the family's lookup finds it, public, with the privileges granted.
      assert.equal(stored.token, md5(made.token));
      assert.ok(!rows.some((r) => r.token === made.token));
      assert.deepEqual(await familyLookup(db, made.token), {
        id: stored.id,
        user: String(user.id),
        privileges: T.ReadConfidential | T.Write,
        private: 0,
        user_privileges: PLAYER,
      });
      // the session is private, stored as SHA-256 (64 characters, which no MD5 hex equals): the family's
      // lookup never finds it, and its listing leaves it out as it leaves out its own private rows
      const sessions = rows.filter((r) => r.private === 1);
      assert.equal(sessions.length, 1);
      const cookie = browser.cookies.get('rt')!;
      assert.equal(sessions[0]!.token, hashTokenSecret(cookie));
      assert.equal(await familyLookup(db, cookie), undefined);
    });

    it('signs in on the web and shows the family tokens on the token page beside its own', async (t) => {
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db);
      const user = await signUp(db);
      await familyToken(db, user.id, { description: 'Made on the website' });
      const browser = new InjectBrowser(app.app);
      await browser.signIn(user);
      let page = await browser.get('/tokens');
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /Made on the website/);
      const created = await browser.post('/tokens', {
        _csrf: csrfOf(page.body),
        description: 'Made on the token page',
        privileges: 'Write',
      });
      assert.ok([200, 303].includes(created.statusCode), created.body);
      page = await browser.get('/tokens');
      assert.match(page.body, /Made on the website/);
      assert.match(page.body, /Made on the token page/);
      const [rows] = await db.family.query<RowDataPacket[]>(
        "SELECT user, private FROM tokens WHERE description = 'Made on the token page'",
      );
      assert.deepEqual(
        rows.map((r) => [r.user, r.private]),
        [[String(user.id), 0]],
      );
    });

    it("ends a web session when the family's website changes the password, on every instance, and keeps API tokens", async (t) => {
      const db = await familyDatabase(t);
      const instances = [await inPlaceApp(t, db), await inPlaceApp(t, db)] as const;
      const user = await signUp(db);
      const family = await familyToken(db, user.id, { description: 'family' });
      const made = await login(instances[0], user.username, user.password);
      assert.equal(made.statusCode, 200, made.body);
      const apiToken = (made.json() as { token: string }).token;
      // one session for each instance to see first, and one whose fingerprint predates this rule (NULL)
      const cookies: string[] = [];
      for (let i = 0; i < 3; i++) {
        const browser = new InjectBrowser(instances[i % 2]!.app);
        await browser.signIn(user);
        cookies.push(browser.cookies.get('rt')!);
      }
      const [sessions] = await db.family.query<RowDataPacket[]>(
        'SELECT id, tokend_password_fingerprint AS fingerprint FROM tokens WHERE tokend_session = 1 AND user = ? ORDER BY id',
        [String(user.id)],
      );
      assert.equal(sessions.length, 3);
      for (const row of sessions) assert.match(String(row.fingerprint), /^[0-9a-f]{16}$/);
      await db.family.query('UPDATE tokens SET tokend_password_fingerprint = NULL WHERE id = ?', [
        sessions[2]!.id,
      ]);
      const tokensPage = (i: number, rt: string) =>
        instances[i]!.app.inject({ method: 'GET', url: '/tokens', cookies: { rt } });
      for (const [i, rt] of cookies.entries()) assert.equal((await tokensPage(i % 2, rt)).statusCode, 200);

      // The website's password change: bcrypt(md5(new password)), version 2.
      const [[before]] = await db.family.query<RowDataPacket[]>(
        'SELECT password_md5 FROM users WHERE id = ?',
        [user.id],
      );
      const newPassword = 'a new password';
      await db.family.query('UPDATE users SET password_md5 = ?, password_version = 2 WHERE id = ?', [
        await familyPasswordHash(newPassword),
        user.id,
      ]);
      for (const i of [0, 1]) {
        const page = await tokensPage(i, cookies[i]!);
        assert.equal(page.statusCode, 303, page.body);
        assert.match(String(page.headers.location), /\/login/);
      }
      // Each instance ended the session it saw: the rows are gone from the family's table.
      const [left] = await db.family.query<RowDataPacket[]>(
        'SELECT id FROM tokens WHERE tokend_session = 1 AND user = ? ORDER BY id',
        [String(user.id)],
      );
      assert.deepEqual(
        left.map((r) => r.id),
        [sessions[2]!.id],
      );
      // The session from before the fingerprint lasts until it expires.
      assert.equal((await tokensPage(0, cookies[2]!)).statusCode, 200);
      // API tokens, tokend's and the family's, are no session: a password change leaves them working.
      for (const app of instances) {
        assert.equal((await ping(app, apiToken)).user_id, user.id);
        assert.equal((await ping(app, family.secret)).user_id, user.id);
      }
      // Set back to the very same hash: the ended sessions stay ended, on either instance.
      await db.family.query('UPDATE users SET password_md5 = ? WHERE id = ?', [
        before!.password_md5,
        user.id,
      ]);
      for (const i of [0, 1])
        for (const rt of cookies.slice(0, 2)) assert.equal((await tokensPage(i, rt)).statusCode, 303);
      // A sign-in with the password the user has now opens a session that works.
      const again = new InjectBrowser(instances[1].app);
      await again.signIn(user);
      assert.equal((await again.get('/tokens')).statusCode, 200);
    });

    it("runs OAuth on tables of its own beside the family's, for the family's users as they are now", async (t) => {
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db);
      const owner = await signUp(db);
      const user = await signUp(db);
      const client = await registerClient(app, { ownerId: owner.id });
      const browser = new InjectBrowser(app.app);
      await browser.signIn(user);
      const tokens = await obtainTokens(app, browser, client);
      const bearer = (token: string) =>
        app.api({ method: 'GET', path: '/ping', headers: { authorization: `Bearer ${token}` } });
      const before = (await bearer(tokens.access_token)).json() as { user_id: number; privileges: number };
      assert.deepEqual([before.user_id, before.privileges], [user.id, T.ReadConfidential]);
      // banned by the admin panel: the bearer token carries nothing on the next request
      await db.family.query('UPDATE users SET privileges = 0 WHERE id = ?', [user.id]);
      assert.equal(((await bearer(tokens.access_token)).json() as { privileges: number }).privileges, 0);
      // an application's own token (client credentials, no user) works in place too
      const own = await backChannel(app, '/oauth/token', client, { grant_type: 'client_credentials' });
      assert.equal(own.statusCode, 200, own.body);
      const ownSelf = await app.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `Bearer ${(own.json() as { access_token: string }).access_token}` },
      });
      assert.equal(ownSelf.statusCode, 200, ownSelf.body);
      // tokend's OAuth rows are in its own tables; the family's tables hold none of them
      const [tables] = await db.family.query<RowDataPacket[]>(
        "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
      );
      assert.deepEqual(
        tables.map((r) => r.name),
        [
          'tokend_event_outbox',
          'tokend_event_outbox_state',
          'tokend_migration',
          'tokend_migration_lock',
          'tokend_oauth_access_tokens',
          'tokend_oauth_clients',
          'tokend_oauth_codes',
          'tokend_oauth_consents',
          'tokend_oauth_device_codes',
          'tokend_oauth_refresh_tokens',
          'tokend_oauth_signing_keys',
          'tokend_security_log',
          'tokend_token_reveals',
          'tokens',
          'users',
        ],
      );
    });

    it("refuses a description longer than the family's column holds, or with a character it cannot store, with a 400 that says why", async (t) => {
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db);
      const user = await signUp(db);
      const create = (description: string) =>
        app.api({
          method: 'POST',
          path: '/tokens',
          payload: { username: user.username, password: user.password, description },
        });
      const lastDescription = async () =>
        (
          await db.family.query<RowDataPacket[]>('SELECT description FROM tokens ORDER BY id DESC LIMIT 1')
        )[0][0]!.description as string;
      const r = await create('x'.repeat(256));
      assert.equal(r.statusCode, 400, r.body);
      assert.match((r.json() as { message: string }).message, /longer than 255 characters/);
      assert.equal((await create('x'.repeat(255))).statusCode, 200);
      // The column counts characters: 255 euro signs (three bytes each in UTF-8, one in latin1) fit, 256 do not.
      const euros = await create('€'.repeat(255));
      assert.equal(euros.statusCode, 200, euros.body);
      assert.equal(await lastDescription(), '€'.repeat(255));
      assert.equal((await create('€'.repeat(256))).statusCode, 400);
      // Latin-1 text is stored as it is, and the family's programs read it back the same.
      assert.equal((await create('Café für Zoë – “test”')).statusCode, 200);
      assert.equal(await lastDescription(), 'Café für Zoë – “test”');
      // What latin1 cannot hold is refused, naming the first such character; nothing is stored changed.
      const count = async () =>
        (await db.family.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM tokens'))[0][0]!.n as number;
      const before = await count();
      for (const [description, first] of [
        ['日本', 'U\\+65E5 "日"'],
        ['ok 😀', 'U\\+1F600 "😀"'],
        ['Ελληνικά', 'U\\+0395 "Ε"'],
      ] as const) {
        const refused = await create(description);
        assert.equal(refused.statusCode, 400, refused.body);
        assert.match(
          (refused.json() as { message: string }).message,
          new RegExp(
            `^Invalid body: the description holds a character the server's database cannot store \\(${first}\\): its tokens description column holds only Latin-1 \\(Windows-1252\\) characters\\.$`,
          ),
        );
      }
      assert.equal(await count(), before);
    });

    it('takes every character where the family converted its tokens table to utf8mb4, read when tokend starts', async (t) => {
      const db = await familyDatabase(t);
      await db.family.query('ALTER TABLE tokens CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci');
      const app = await inPlaceApp(t, db);
      const user = await signUp(db);
      // 255 emoji (two UTF-16 units each) fit the varchar(255), 256 do not.
      for (const [description, status] of [
        ['😀'.repeat(255), 200],
        ['日本', 200],
        ['😀'.repeat(256), 400],
      ] as const) {
        const r = await app.api({
          method: 'POST',
          path: '/tokens',
          payload: { username: user.username, password: user.password, description },
        });
        assert.equal(r.statusCode, status, r.body);
      }
      const [rows] = await db.family.query<RowDataPacket[]>('SELECT description FROM tokens ORDER BY id');
      assert.deepEqual(
        rows.map((row) => row.description),
        ['😀'.repeat(255), '日本'],
      );
    });
  },
);

/** Names the family's latin1 columns cannot hold, and one they can that no account has. */
const BEYOND_LATIN1 = ['アリス', 'Ελένη', 'Алиса', '😀😀', 'Zoë 日本', 'x\u0100'];
const UNKNOWN_LATIN1 = 'Nobody Zoë';

describe(
  "tokend in place on the family's latin1 database",
  { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
  () => {
    it('finds no account for a name latin1 cannot hold, as for any unknown name: the API, web sign-in, the CLI', async (t) => {
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db);
      const user = await signUp(db);
      const answer = async (username: string) => {
        const r = await app.api({
          method: 'POST',
          path: '/tokens',
          payload: { username, password: user.password },
        });
        return [r.statusCode, (r.json() as { message: string }).message];
      };
      const unknown = await answer(UNKNOWN_LATIN1);
      assert.ok((unknown[0] as number) >= 400 && (unknown[0] as number) < 500, String(unknown));
      for (const name of BEYOND_LATIN1) assert.deepEqual(await answer(name), unknown, name);
      // the account itself, by a name latin1 holds, still signs in
      assert.equal((await login(app, user.username, user.password)).statusCode, 200);

      const signIn = async (username: string) => {
        const browser = new InjectBrowser(app.app);
        const page = await browser.get('/login');
        const r = await browser.post('/login', {
          _csrf: csrfOf(page.body),
          username,
          password: user.password,
        });
        return [r.statusCode, browser.cookies.has('rt')];
      };
      const unknownOnPage = await signIn(UNKNOWN_LATIN1);
      assert.equal(unknownOnPage[1], false);
      for (const name of BEYOND_LATIN1) assert.deepEqual(await signIn(name), unknownOnPage, name);

      const env = db.database.env;
      for (const args of [
        ['token', 'create', '--user', BEYOND_LATIN1[0]!],
        ['token', 'list', '--user', BEYOND_LATIN1[1]!],
        ['user', 'ban', '--user', BEYOND_LATIN1[2]!],
      ]) {
        const r = await runCli(args, { env });
        assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stderr, `tokend: no user with id or username ${JSON.stringify(args[3])}\n`);
      }
    });

    it('answers a client_id latin1 cannot hold as an unknown client, at /oauth/token, /oauth/introspect, /oauth/revoke and /oauth/authorize', async (t) => {
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db);
      const owner = await signUp(db);
      const user = await signUp(db);
      const client = await registerClient(app, { ownerId: owner.id });
      const browser = new InjectBrowser(app.app);
      await browser.signIn(user);
      const tokens = await obtainTokens(app, browser, client);
      const answers = async (clientId: string) => {
        const as = { ...client, id: clientId };
        const out: Array<[number, string]> = [];
        for (const [path, fields] of [
          ['/oauth/token', { grant_type: 'client_credentials' }],
          ['/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }],
          ['/oauth/introspect', { token: tokens.access_token }],
          ['/oauth/revoke', { token: tokens.refresh_token }],
        ] as const) {
          const r = await backChannel(app, path, as, fields);
          out.push([r.statusCode, r.body]);
        }
        const page = await browser.get(
          `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: client.redirectUri, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
        );
        out.push([page.statusCode, page.statusCode === 200 ? 'a page' : String(page.headers.location)]);
        return out;
      };
      const unknown = await answers('no-such-client');
      for (const [status] of unknown) assert.ok(status >= 400 && status < 500, JSON.stringify(unknown));
      for (const id of ['アプリ', 'é'.repeat(64), '😀', `${client.id}日`])
        assert.deepEqual(await answers(id), unknown, id);
      // and the grant is whole: nothing above revoked it
      const self = await app.api({
        method: 'GET',
        path: '/tokens/self',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(self.statusCode, 200, self.body);
    });

    it("keeps an application's name in any script, in tokend's own utf8mb4 tables", async (t) => {
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db);
      const owner = await signUp(db);
      const user = await signUp(db);
      const browser = new InjectBrowser(app.app);
      await browser.signIn(owner);
      const form = await browser.get('/applications/new');
      const made = await browser.post('/applications/new', {
        _csrf: csrfOf(form.body),
        name: 'アプリ 😀',
        redirect_uris: 'https://app.example/callback',
        type: 'confidential',
      });
      assert.equal(made.statusCode, 303, made.body);
      assert.match((await browser.get('/applications')).body, /アプリ 😀/);
      const [[row]] = await db.family.query<RowDataPacket[]>(
        'SELECT id FROM tokend_oauth_clients WHERE name = ?',
        ['アプリ 😀'],
      );
      assert.ok(row, 'stored as it was typed');
      // its consent page names it
      const consenting = new InjectBrowser(app.app);
      await consenting.signIn(user);
      const consent = await consenting.get(
        `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: row.id as string, redirect_uri: 'https://app.example/callback', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
      );
      assert.equal(consent.statusCode, 200, consent.body);
      assert.match(consent.body, /アプリ 😀/);
    });

    it('bans, unbans and sets privileges from the CLI, the security log keeping each change', async (t) => {
      const db = await familyDatabase(t);
      await inPlaceApp(t, db);
      const user = await signUp(db);
      const env = db.database.env;
      const privileges = async () =>
        (
          await db.family.query<RowDataPacket[]>('SELECT privileges FROM users WHERE id = ?', [user.id])
        )[0][0]!.privileges as number;
      for (const [args, expected] of [
        [['user', 'ban', '--user', user.username], 0],
        [['user', 'unban', '--user', String(user.id)], PLAYER],
        [['user', 'set-privileges', '--user', user.username, '--privileges', String(ADMIN)], ADMIN],
      ] as const) {
        const r = await runCli([...args], { env });
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(await privileges(), expected, args.join(' '));
      }
      const [events] = await db.family.query<RowDataPacket[]>(
        'SELECT kind, detail FROM tokend_security_log WHERE user_id = ? ORDER BY id',
        [user.id],
      );
      assert.deepEqual(
        events.map((e) => e.detail),
        [`${PLAYER} → 0`, `0 → ${PLAYER}`, `${PLAYER} → ${ADMIN}`],
      );
    });

    it("makes tokend's own tables utf8mb4 in the latin1 database, leaving the family's latin1", async (t) => {
      const db = await familyDatabase(t);
      await inPlaceApp(t, db);
      const [tables] = await db.family.query<RowDataPacket[]>(
        "SELECT TABLE_NAME AS name, TABLE_COLLATION AS collation FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
      );
      const [[database]] = await db.family.query<RowDataPacket[]>(
        'SELECT DEFAULT_CHARACTER_SET_NAME AS charset FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()',
      );
      assert.equal(database!.charset, 'latin1');
      for (const { name, collation } of tables)
        assert.equal(
          collation,
          name === 'users' || name === 'tokens' ? 'latin1_swedish_ci' : 'utf8mb4_bin',
          name as string,
        );
      // no text column of tokend's own tables is in another set (a column may name its own)
      const [columns] = await db.family.query<RowDataPacket[]>(
        "SELECT TABLE_NAME AS t, COLUMN_NAME AS c, CHARACTER_SET_NAME AS charset FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'tokend\\_%' AND CHARACTER_SET_NAME IS NOT NULL AND TABLE_NAME NOT IN ('tokend_users', 'tokend_tokens')",
      );
      assert.ok(columns.length > 10);
      for (const column of columns) assert.equal(column.charset, 'utf8mb4', `${column.t}.${column.c}`);
    });

    it('converts the latin1 tables an earlier tokend made to utf8mb4 at the next tokend migrate, keeping their rows', async (t) => {
      const db = await familyDatabase(t);
      // As an earlier tokend left them: its in-place migrations up to 0018 (none of the later ones, which
      // come after 0019 by name), then its own tables in the database's latin1. (A column a foreign key
      // joins cannot change its character set while the key is there.)
      const earlier = (
        await mysqlKysely(db.config.url, { poolSize: 1, connectTimeoutMs: 5000, queryTimeoutMs: 60_000 })
      ).withPlugin(inPlaceMigrationTables());
      try {
        const migrated = await new Migrator({
          db: earlier,
          provider: { getMigrations: async () => inPlaceMigrations() },
          migrationTableName: IN_PLACE_MIGRATION_TABLE,
          migrationLockTableName: IN_PLACE_MIGRATION_LOCK_TABLE,
        }).migrateTo('0018_security_log');
        assert.equal(migrated.error, undefined);
      } finally {
        await earlier.destroy();
      }
      const owner = await signUp(db);
      const client = 'earlier-client';
      await db.family.query(
        "INSERT INTO tokend_oauth_clients (id, name, name_key, secret_hash, redirect_uris, owner_id, avatar, created_at) VALUES (?, 'Plain name', REPEAT('0', 64), NULL, '[]', ?, '', 0)",
        [client, owner.id],
      );
      const keyed = ['oauth_codes', 'oauth_access_tokens', 'oauth_refresh_tokens', 'oauth_consents'];
      for (const table of keyed)
        await db.family.query(`ALTER TABLE tokend_${table} DROP FOREIGN KEY tokend_${table}_ibfk_1`);
      for (const table of [...keyed, 'oauth_clients', 'token_reveals', 'security_log'])
        await db.family.query(`ALTER TABLE tokend_${table} CONVERT TO CHARACTER SET latin1`);
      for (const table of keyed)
        await db.family.query(
          `ALTER TABLE tokend_${table} ADD CONSTRAINT tokend_${table}_ibfk_1 FOREIGN KEY (client_id) REFERENCES tokend_oauth_clients (id) ON DELETE CASCADE`,
        );

      const env = db.database.env;
      const dry = await runCli(['migrate', '--dry-run'], { env });
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(
        dry.stdout,
        /ALTER TABLE tokend_oauth_clients CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin/,
      );
      const applied = await runCli(['migrate'], { env });
      assert.equal(applied.code, 0, applied.stderr);
      const [collations] = await db.family.query<RowDataPacket[]>(
        "SELECT DISTINCT TABLE_COLLATION AS c FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' AND TABLE_NAME LIKE 'tokend\\_%' AND TABLE_NAME NOT LIKE 'tokend\\_migration%'",
      );
      assert.deepEqual(
        collations.map((r) => r.c),
        ['utf8mb4_bin'],
      );
      const [[kept]] = await db.family.query<RowDataPacket[]>(
        'SELECT name FROM tokend_oauth_clients WHERE id = ?',
        [client],
      );
      assert.equal(kept!.name, 'Plain name');
      // and the foreign keys hold again
      await assert.rejects(
        db.family.query(
          "INSERT INTO tokend_oauth_consents (user_id, client_id, scope, updated_at) VALUES (1, 'no-such-client', '', 0)",
        ),
        /foreign key constraint fails/,
      );
    });
  },
);

describe(
  'tokend migrate on a Ripple-family database',
  { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
  () => {
    const createTable = async (db: FamilyDatabase) =>
      (await db.family.query<RowDataPacket[]>('SHOW CREATE TABLE tokens'))[0][0]!['Create Table'] as string;

    it('shows what it would add, adds nothing until asked, and undoes it exactly', async (t) => {
      const db = await familyDatabase(t);
      const before = await createTable(db);
      // serve does not change the family's database: it says what to run
      await assert.rejects(openStore(db.config), /tokend migrate --dry-run/);
      const env = { DATABASE_URL: db.database.url, DATABASE_SCHEMA: 'ripple' };
      const serve = await runCli(['serve'], { env: { ...env, PORT: '0' } });
      assert.equal(serve.code, 1, serve.stdout);
      assert.match(
        serve.stderr,
        /needs tokend's additions \(0000_ripple_in_place, .*`tokend migrate --dry-run`/,
      );
      assert.equal(await createTable(db), before, 'serve changes nothing');
      const dry = await runCli(['migrate', '--dry-run'], { env });
      assert.equal(dry.code, 0, dry.stderr);
      for (const statement of FAMILY_CHANGES) assert.ok(dry.stdout.includes(statement), statement);
      assert.match(
        dry.stdout,
        /create table `tokend_oauth_clients` .* DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin/,
      );
      assert.equal(await createTable(db), before, '--dry-run changes nothing');

      const applied = await runCli(['migrate', '--json'], { env });
      assert.equal(applied.code, 0, applied.stderr);
      assert.ok(
        (JSON.parse(applied.stdout) as { applied: string[] }).applied.includes('0000_ripple_in_place'),
      );
      const after = await createTable(db);
      // only additions: every column and key of the family's table is still there as it was
      for (const line of before.split('\n').filter((l) => /^\s+(`|PRIMARY)/.test(l)))
        assert.ok(after.includes(line.replace(/,$/, '')), line);
      assert.equal((await showPendingMigrations(db.config)).length, 0);
      // now it serves, and says on what; it does not ask for a first user (the family's are the users)
      const server = await startTokend({ ...env, LOG_LEVEL: 'info' });
      try {
        await eventually(100, 50, async () => server.output().includes('"msg":"database: '));
        assert.match(
          server.output(),
          /the Ripple-family database at mysql:\/\/.*, in place \(DATABASE_SCHEMA=ripple\)/,
        );
        assert.doesNotMatch(server.output(), /no user exists yet/);
      } finally {
        await server.stop();
      }
      const again = await runCli(['migrate', '--dry-run'], { env });
      assert.match(again.stdout, /up to date/);

      // undone, the table is what it was
      const [migration] = (await import('../../src/store/in-place-migrations.ts')).IN_PLACE_MIGRATIONS;
      const { Kysely, MysqlDialect } = await import('kysely');
      const handle = new Kysely<Record<string, never>>({
        dialect: new MysqlDialect({ pool: (await import('mysql2')).createPool({ uri: db.database.url }) }),
      });
      t.after(() => handle.destroy());
      await migration![1]('mysql').down!(handle);
      assert.equal(await createTable(db), before);
    });

    it('refuses a database without the family tables, and a URL that is not MySQL, each with a clear message', async (t) => {
      const empty = await createTestDatabase('mysql');
      t.after(() => empty.drop());
      if (empty.config.kind !== 'mysql') throw new Error('a MySQL database');
      await assert.rejects(
        migrateDatabase({ ...empty.config, schema: 'ripple' }, { explicit: true }),
        /not a Ripple-family database \(missing users\.id, .*tokens\.last_updated\)/,
      );
      assert.throws(
        () => loadConfig({ DATABASE_URL: 'sqlite:x.db', DATABASE_SCHEMA: 'ripple' }),
        /DATABASE_SCHEMA.*mysql:\/\/.*not sqlite/,
      );
      assert.throws(
        () => loadConfig({ DATABASE_SCHEMA: 'hanayo' }),
        /DATABASE_SCHEMA.*expected tokend or ripple/,
      );
    });

    it("makes no users: tokend user create, import and import-ripple refuse, so no name can collide with the family's", async (t) => {
      const db = await familyDatabase(t);
      await migrateDatabase(db.config, { explicit: true });
      const taken = await signUp(db);
      const env = { DATABASE_URL: db.database.url, DATABASE_SCHEMA: 'ripple' };
      for (const args of [
        ['user', 'create', '--username', taken.username, '--password', 'whatever password'],
        ['user', 'create', '--username', 'brand new', '--password', 'whatever password'],
        ['import', '--file', '/nonexistent.jsonl'],
        ['import-ripple', '--from', db.database.url],
      ]) {
        const r = await runCli(args, { env });
        assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        assert.match(r.stderr, /not done on a Ripple-family database \(DATABASE_SCHEMA=ripple\)/);
      }
      const [users] = await db.family.query<RowDataPacket[]>('SELECT username FROM users');
      assert.deepEqual(
        users.map((u) => u.username),
        [taken.username],
      );
    });
  },
);
