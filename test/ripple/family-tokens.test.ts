// DATABASE_SCHEMA=ripple: the tokens tokend makes in place, as the Ripple family's own API sees them. The
// test plays that API: with a connection of its own it runs the family's token lookup, its very SQL
// (osuripple/api app/tokens.go: the row whose `token` is the MD5 hex of the secret), and finds every public
// API token tokend made (the API and its aliases, the token page, `tokend token create`, regenerating on the
// page) as one of its own: public, with the privileges granted. Web sessions and private tokens it never
// finds; an expiring token's row is gone after the first sweep past its expiry; tokens an earlier tokend
// stored as SHA-256 keep working on tokend, and `tokend migrate` says how many there are. Attacks: nothing a
// client sends makes tokend write a row the family would read with more than limit(requested, owner), or
// a private one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { RowDataPacket } from 'mysql2/promise';
import { IN_CI, answers } from '../helpers/dialects.ts';
import {
  PLAYER,
  familyDatabase,
  familyLookup,
  familyToken,
  inPlaceApp,
  md5,
  signUp,
  type FamilyDatabase,
  type InPlaceApp,
} from '../helpers/in-place.ts';
import {
  ALL_TOKEN_PRIVILEGES,
  TokenPrivilege as T,
  UserPrivilege as U,
  limit,
} from '../../src/auth/privileges.ts';
import { hashTokenSecret, newTokenSecret } from '../../src/auth/secret.ts';
import { insertToken } from '../../src/auth/mint.ts';
import { InjectBrowser, csrfOf, newSecretOf } from '../helpers/inject-browser.ts';
import { onlyJson, runCli } from '../helpers/cli.ts';
import { eventually } from '../helpers/waiting.ts';

const mysqlProblem = await answers('mysql');
if (mysqlProblem !== undefined && IN_CI)
  throw new Error(`CI=true but MariaDB does not answer: ${mysqlProblem}`);

/** A player who also reads advanced user details: AdminAccessRAP, and no other admin bit. */
const STAFF = PLAYER | U.AdminAccessRAP;

const ping = async (app: InPlaceApp, secret: string) => {
  const r = await app.api({ method: 'GET', path: '/ping', headers: { 'x-ripple-token': secret } });
  assert.equal(r.statusCode, 200, r.body);
  return r.json() as { user_id: number; privileges: number };
};

/** POST {base_url}/v1/<path> with a username and password: the token's secret and granted privileges. */
async function apiToken(
  app: InPlaceApp,
  user: { username: string; password: string },
  fields: Record<string, unknown>,
  path = '/tokens',
): Promise<{ token: string; privileges: number }> {
  const r = await app.api({
    method: 'POST',
    path,
    payload: { username: user.username, password: user.password, ...fields },
  });
  assert.equal(r.statusCode, 200, r.body);
  return r.json() as { token: string; privileges: number };
}

/** A token made on the token page: its id and its secret, shown once. */
async function pageToken(
  browser: InjectBrowser,
  fields: Record<string, string>,
): Promise<{ id: number; secret: string }> {
  const page = await browser.get('/tokens');
  const done = await browser.post('/tokens', { _csrf: csrfOf(page.body), ...fields });
  assert.equal(done.statusCode, 303, done.body);
  const location = String(done.headers.location);
  const id = Number(/created=(\d+)/.exec(location)?.[1]);
  const secret = newSecretOf((await browser.get(location)).body);
  assert.ok(id > 0 && secret, location);
  return { id, secret };
}

/** Regenerates one of the signed-in user's tokens on the page: the new token's id and secret. */
async function regenerated(browser: InjectBrowser, id: number): Promise<{ id: number; secret: string }> {
  const confirm = await browser.get(`/tokens/${id}/regenerate`);
  assert.equal(confirm.statusCode, 200, confirm.body);
  const done = await browser.post(`/tokens/${id}/regenerate`, { _csrf: csrfOf(confirm.body) });
  assert.equal(done.statusCode, 303, done.body);
  const location = String(done.headers.location);
  const secret = newSecretOf((await browser.get(location)).body);
  assert.ok(secret, location);
  return { id: Number(/created=(\d+)/.exec(location)?.[1]), secret };
}

/** The environment of a `tokend` command on the family database. */
const cliEnv = (db: FamilyDatabase) => ({ DATABASE_URL: db.database.url, DATABASE_SCHEMA: 'ripple' });

/** Every row of the user's the family's programs read, with the form of its `token` column. */
async function rowsOf(db: FamilyDatabase, userId: number) {
  const [rows] = await db.family.query<RowDataPacket[]>(
    'SELECT id, privileges, private, CHAR_LENGTH(token) AS length, tokend_created_at, tokend_session FROM tokens WHERE user = ? ORDER BY id',
    [String(userId)],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    privileges: Number(r.privileges),
    private: Number(r.private),
    length: Number(r.length),
    /** made by tokend (the family's programs leave it null) */
    tokend: r.tokend_created_at !== null,
    session: Number(r.tokend_session) === 1,
  }));
}

describe(
  "tokens tokend makes in place, as the family's API finds them",
  { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
  () => {
    it('finds every public API token tokend makes (API, aliases, token page, CLI, regenerate), public and with the privileges granted; never a session or a private token', async (t) => {
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db);
      const user = await signUp(db, STAFF);
      const found = async (secret: string, privileges: number, what: string) => {
        const row = await familyLookup(db, secret);
        assert.ok(row, `${what}: the family's lookup finds it`);
        assert.deepEqual(
          [row.user, row.private, row.privileges, row.user_privileges],
          [String(user.id), 0, privileges, STAFF],
          what,
        );
        // and tokend answers it as before, with the same privileges
        const p = await ping(app, secret);
        assert.deepEqual([p.user_id, p.privileges], [user.id, privileges], what);
        return row;
      };

      // The API and its two aliases: what is asked beyond the owner (ManageUser) is not granted.
      const asked = T.ReadConfidential | T.Write | T.ViewUserAdvanced | T.ManageUser;
      for (const path of ['/tokens', '/tokens/new', '/token/new']) {
        const made = await apiToken(app, user, { privileges: asked, description: path }, path);
        assert.equal(made.privileges, limit(asked, STAFF));
        await found(made.token, limit(asked, STAFF), `POST ${path}`);
      }
      // The token page.
      const browser = new InjectBrowser(app.app);
      await browser.signIn(user);
      const onPage = await pageToken(browser, { description: 'from the page', privileges: 'Write' });
      assert.equal((await found(onPage.secret, T.Write, 'the token page')).id, onPage.id);
      // `tokend token create`.
      const cli = onlyJson(
        await runCli(
          [
            'token',
            'create',
            '--user',
            String(user.id),
            '--privileges',
            'ReadConfidential,ManageRoles',
            '--json',
          ],
          { env: cliEnv(db) },
        ),
      );
      assert.equal(cli.privileges, T.ReadConfidential);
      assert.equal((await found(String(cli.token), T.ReadConfidential, 'token create')).id, cli.id);
      // Regenerating on the page: the new secret is found, the old one no longer.
      const again = await regenerated(browser, onPage.id);
      assert.equal((await found(again.secret, T.Write, 'regenerated')).id, again.id);
      assert.equal(await familyLookup(db, onPage.secret), undefined);

      // What the family never finds: the web session (the rt cookie), a private token made by the CLI.
      assert.equal(await familyLookup(db, browser.cookies.get('rt')!), undefined, 'the web session');
      const secretOne = onlyJson(
        await runCli(
          ['token', 'create', '--user', String(user.id), '--private', '--privileges', 'Write', '--json'],
          { env: cliEnv(db) },
        ),
      );
      assert.equal(await familyLookup(db, String(secretOne.token)), undefined, 'a private token');
      assert.equal((await ping(app, String(secretOne.token))).privileges, T.Write, 'tokend knows it');
      // Every row tokend wrote: its public tokens in the family's form (32), its private ones in none the
      // family matches (64).
      for (const row of (await rowsOf(db, user.id)).filter((r) => r.tokend))
        assert.equal(row.length, row.private === 0 ? 32 : 64, JSON.stringify(row));
    });

    it("deletes an expiring token's row at the first sweep after its expiry, within TOKEN_SWEEP_INTERVAL_S; nothing else", async (t) => {
      // The app's clock is the test's, and so is the sweep's timer: no sleeping through an interval.
      t.mock.timers.enable({ apis: ['setInterval'] });
      let now = 2_000_000_000;
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db, { TOKEN_SWEEP_INTERVAL_S: '60' }, { clock: () => now });
      const user = await signUp(db);
      const hanayo = await familyToken(db, user.id, { private: true, description: 'hanayo sign-in' });
      const dev = await familyToken(db, user.id, { privileges: T.Write, description: 'hanayo /dev/tokens' });
      const forever = await apiToken(app, user, { privileges: T.Write });
      const soon = await apiToken(app, user, { privileges: T.Write, expires_in: 30 });
      const later = await apiToken(app, user, { privileges: T.Write, expires_in: 3600 });
      for (const secret of [forever.token, soon.token, later.token])
        assert.equal((await familyLookup(db, secret))?.private, 0);

      // Expired: tokend refuses it at once; the family's API, which knows no expiry, until the sweep.
      now += 30;
      assert.equal((await ping(app, soon.token)).user_id, 0);
      assert.ok(await familyLookup(db, soon.token), 'still there before the sweep');
      t.mock.timers.tick(59_999);
      assert.ok(await familyLookup(db, soon.token), 'no sweep before the interval has passed');
      t.mock.timers.tick(1);
      assert.ok(
        await eventually(100, 50, async () => (await familyLookup(db, soon.token)) === undefined),
        'the sweep at the end of the interval deleted the expired row',
      );
      // Nothing else went: the family's rows (no expiry), tokend's without one, and the one not yet expired.
      for (const secret of [hanayo.secret, dev.secret, forever.token, later.token])
        assert.ok(await familyLookup(db, secret), secret);
      assert.equal((await ping(app, later.token)).user_id, user.id);
    });

    it('keeps tokens stored as SHA-256 by an earlier tokend working on tokend only; tokend migrate says how many', async (t) => {
      const db = await familyDatabase(t);
      const app = await inPlaceApp(t, db);
      const user = await signUp(db);
      // What an earlier tokend wrote: public tokens by the SHA-256 of their secret, a private one, and a
      // session; plus one of those public ones already expired.
      const old = async (options: { private?: boolean; expiresAt?: number; session?: boolean } = {}) => {
        const secret = newTokenSecret();
        const id = await insertToken(app.store.db, {
          userId: user.id,
          privileges: T.Write,
          description: 'from an earlier tokend',
          tokenHash: hashTokenSecret(secret),
          private: options.private ?? false,
          now: Math.floor(Date.now() / 1000),
          expiresAt: options.expiresAt ?? null,
          ...(options.session && { session: { passwordAt: 0, passwordFingerprint: '0'.repeat(16) } }),
        });
        return { id, secret };
      };
      const olds = [await old(), await old(), await old()];
      await old({ private: true });
      await old({ private: true, session: true });
      await old({ expiresAt: 1 });
      await apiToken(app, user, { privileges: T.Write }); // in the family's form: not counted
      for (const { secret } of olds) {
        assert.equal((await ping(app, secret)).privileges, T.Write, 'it keeps working on tokend');
        assert.equal(await familyLookup(db, secret), undefined, "the family's API does not know it");
      }

      const env = cliEnv(db);
      const dry = await runCli(['migrate', '--dry-run'], { env });
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(
        dry.stdout,
        /^3 public API tokens are stored as SHA-256 \(made by a tokend older than this one\): they keep working on tokend, but answer to tokend only, not to the rest of the server's API; regenerate them on the token page for tokens the whole server accepts\.$/m,
      );
      assert.deepEqual(onlyJson(await runCli(['migrate', '--dry-run', '--json'], { env })), {
        pending: [],
        tokend_only_tokens: 3,
      });
      const applied = await runCli(['migrate'], { env });
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(
        applied.stdout,
        /^The database is up to date\.\n3 public API tokens are stored as SHA-256 /,
      );
      assert.deepEqual(onlyJson(await runCli(['migrate', '--json'], { env })), {
        applied: [],
        tokend_only_tokens: 3,
      });

      // Regenerated on the page, one of them is the family's too; the count follows.
      const browser = new InjectBrowser(app.app);
      await browser.signIn(user);
      const fresh = await regenerated(browser, olds[0]!.id);
      assert.equal((await familyLookup(db, fresh.secret))?.privileges, T.Write);
      assert.equal(
        onlyJson(await runCli(['migrate', '--json'], { env })).tokend_only_tokens,
        2,
        'two are left',
      );
    });

    it('says there are none before tokend has made any (its additions still to apply) and on a database without them', async (t) => {
      const db = await familyDatabase(t);
      const env = cliEnv(db);
      const dry = await runCli(['migrate', '--dry-run', '--json'], { env });
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(onlyJson(dry).tokend_only_tokens, 0);
      const applied = await runCli(['migrate'], { env });
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(
        applied.stdout,
        /\nNo public API token here answers to tokend only: tokend stores each one it makes as the family stores its tokens\.\n$/,
      );
    });

    it("the compatibility guide's undo restores the family's table and keeps what the family can use alone", async (t) => {
      const db = await familyDatabase(t);
      const [[before]] = await db.family.query<RowDataPacket[]>('SHOW CREATE TABLE tokens');
      const app = await inPlaceApp(t, db);
      const user = await signUp(db);
      const hanayo = await familyToken(db, user.id, { private: true });
      const kept = await apiToken(app, user, { privileges: T.Write });
      const expiring = await apiToken(app, user, { privileges: T.Write, expires_in: 3600 });
      const browser = new InjectBrowser(app.app);
      await browser.signIn(user);
      await app.app.close();

      const page = readFileSync(new URL('../../docs/compatibility.md', import.meta.url), 'utf8');
      const undo = /\*\*Undoing it\.\*\*[^`]*```sql\n([\s\S]*?)```/.exec(page)?.[1];
      assert.ok(undo, 'the guide has its undo');
      for (const statement of undo
        .split(/;\n/)
        .map((x) => x.trim())
        .filter(Boolean))
        await db.family.query(statement);
      const [[after]] = await db.family.query<RowDataPacket[]>('SHOW CREATE TABLE tokens');
      // the same definition (its next id aside: rows were made meanwhile)
      const definition = (row: RowDataPacket | undefined) =>
        String(row!['Create Table']).replace(/ AUTO_INCREMENT=\d+/, '');
      assert.equal(definition(after), definition(before));
      const [tables] = await db.family.query<RowDataPacket[]>(
        'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME',
      );
      assert.deepEqual(
        tables.map((r) => r.name),
        ['tokens', 'users'],
      );
      // What the family's API can use alone stays: hanayo's sign-in and tokend's token without an expiry.
      assert.ok(await familyLookup(db, hanayo.secret));
      assert.equal((await familyLookup(db, kept.token))?.privileges, T.Write);
      // What nothing would end without tokend is gone: the expiring token, the web session.
      assert.equal(await familyLookup(db, expiring.token), undefined);
      const [left] = await db.family.query<RowDataPacket[]>(
        'SELECT CHAR_LENGTH(token) AS length FROM tokens',
      );
      assert.deepEqual(
        left.map((r) => Number(r.length)),
        [32, 32],
      );
    });

    it('attack: nothing a client sends makes tokend write a row the family reads with more than limit(requested, owner), or a private one', async (t) => {
      const db = await familyDatabase(t);
      // every attempt is a password login: the login limits must not stop them first
      const app = await inPlaceApp(t, db, { LOGIN_RATE_LIMIT: '1000', LOGIN_IP_RATE_LIMIT: '1000' });
      const user = await signUp(db, STAFF);
      const mayHold = limit(ALL_TOKEN_PRIVILEGES, STAFF);
      // The API: fields the family's table has, privileges beyond every bit, as text, negative, huge.
      const attempts: Array<Record<string, unknown>> = [
        { privileges: ALL_TOKEN_PRIVILEGES, private: true },
        { privileges: 2 ** 31 - 1, private: 1, session: 1 },
        { privileges: 2 ** 32 + T.ManageUser + T.Write },
        { privileges: Number.MAX_SAFE_INTEGER, token: md5('chosen secret'), token_hash: 'x' },
        { privileges: T.ManageAPIKeys | T.Write, user: 1, user_id: 1, id: 0 },
        { privileges: -1 },
        { privileges: '8191' },
        { privileges: 2 ** 53 },
        { privileges: T.Write, expires_in: -5 },
      ];
      for (const fields of attempts) {
        const r = await app.api({
          method: 'POST',
          path: '/tokens',
          payload: { username: user.username, password: user.password, ...fields },
        });
        if (r.statusCode !== 200) {
          assert.equal(r.statusCode, 400, `${JSON.stringify(fields)}: ${r.body}`);
          continue;
        }
        const made = r.json() as { token: string; privileges: number };
        const row = await familyLookup(db, made.token);
        assert.ok(row, JSON.stringify(fields));
        assert.equal(row.private, 0, JSON.stringify(fields));
        assert.equal(row.privileges, limit(Number(fields.privileges), STAFF), JSON.stringify(fields));
      }
      assert.equal(await familyLookup(db, 'chosen secret'), undefined, 'no client picks its secret');
      // The token page: a private field and every privilege by name.
      const browser = new InjectBrowser(app.app);
      await browser.signIn(user);
      const page = await browser.get('/tokens');
      const posted = await browser.post('/tokens', {
        _csrf: csrfOf(page.body),
        description: 'page',
        privileges: 'ManageAPIKeys',
        private: '1',
        session: '1',
      });
      assert.ok([303, 400].includes(posted.statusCode), posted.body);

      // A row the family wrote asking for everything, regenerated by its owner: the new one is limited.
      const greedy = await familyToken(db, user.id, { privileges: ALL_TOKEN_PRIVILEGES });
      const fresh = await regenerated(browser, greedy.id);
      assert.equal((await familyLookup(db, fresh.secret))?.privileges, mayHold);
      // Demoted by the admin panel, the owner regenerates a token made while staff: limited by now.
      const staffToken = await apiToken(app, user, { privileges: T.ViewUserAdvanced | T.Write });
      const staffRow = (await familyLookup(db, staffToken.token))!;
      await db.family.query('UPDATE users SET privileges = ? WHERE id = ?', [PLAYER, user.id]);
      const demoted = await regenerated(browser, staffRow.id);
      assert.equal((await familyLookup(db, demoted.secret))?.privileges, T.Write);
      // hanayo's sign-in (a private row) and another user's token cannot be regenerated: they are not
      // the user's public tokens.
      const hanayo = await familyToken(db, user.id, { private: true });
      const other = await signUp(db);
      const othersToken = await familyToken(db, other.id, { privileges: T.Write });
      for (const id of [hanayo.id, othersToken.id]) {
        const confirm = await browser.get(`/tokens/${id}/regenerate`);
        assert.notEqual(confirm.statusCode, 200, `${id}: ${confirm.body.slice(0, 200)}`);
      }
      // Restricted, then banned, by the admin panel: no token is made at all (402).
      for (const privileges of [(PLAYER | 2) & ~1, 0]) {
        await db.family.query('UPDATE users SET privileges = ? WHERE id = ?', [privileges, user.id]);
        const r = await app.api({
          method: 'POST',
          path: '/tokens',
          payload: { username: user.username, password: user.password, privileges: T.Write },
        });
        assert.equal(r.statusCode, 402, r.body);
      }

      // Every row tokend wrote for this user: its public ones readable by the family, none with more than
      // the owner may hold (as staff at most), none private in the family's form; sessions in SHA-256.
      const rows = (await rowsOf(db, user.id)).filter((r) => r.tokend);
      assert.ok(rows.length >= 8, JSON.stringify(rows));
      for (const row of rows) {
        if (row.length === 32) {
          assert.equal(row.private, 0, JSON.stringify(row));
          assert.equal(row.privileges & ~mayHold, 0, JSON.stringify(row));
        } else {
          assert.equal(row.length, 64, JSON.stringify(row));
          assert.equal(row.private, 1, JSON.stringify(row));
        }
        if (row.session) assert.equal(row.length, 64, JSON.stringify(row));
      }
      assert.ok(rows.some((r) => r.session));
    });
  },
);
