// The grants docs/compatibility.md lists for the database user in place (DATABASE_SCHEMA=ripple), held to
// the truth: a MariaDB user made with exactly the page's statements (read from the page itself) runs
// `tokend migrate`, `tokend serve` (tokens made, read, listed, used, expired and swept; a web sign-in) and
// the CLI's commands, and reaches no other table of the family's database.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { IN_CI, answers } from '../helpers/dialects.ts';
import { familyDatabase, familyLookup, signUp, type FamilyDatabase } from '../helpers/in-place.ts';
import { onlyJson, runCli } from '../helpers/cli.ts';
import { request, startTokend } from '../helpers/real-server.ts';
import { FetchBrowser } from '../helpers/fetch-browser.ts';
import { csrfOf } from '../helpers/inject-browser.ts';
import { eventually } from '../helpers/waiting.ts';
import { TokenPrivilege as T } from '../../src/auth/privileges.ts';

const mysqlProblem = await answers('mysql');
if (mysqlProblem !== undefined && IN_CI)
  throw new Error(`CI=true but MariaDB does not answer: ${mysqlProblem}`);

const PAGE = new URL('../../docs/compatibility.md', import.meta.url);

/** The statements of the page's block under "**The database user.**", one per line. */
function documentedGrants(): string[] {
  const text = readFileSync(PAGE, 'utf8');
  const at = text.indexOf('**The database user.**');
  assert.ok(at >= 0, 'docs/compatibility.md has its paragraph on the database user');
  const block = /```sql\n([\s\S]*?)```/.exec(text.slice(at))?.[1];
  assert.ok(block, 'the paragraph has its SQL block');
  return block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => line.replace(/;$/, ''));
}

/** A user of the test's own made with exactly the page's statements, for the family database `db`. */
async function documentedUser(t: TestContext, db: FamilyDatabase) {
  const name = `tk_${randomBytes(6).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  const database = new URL(db.database.url).pathname.slice(1);
  const statements = documentedGrants().map((statement) =>
    statement
      .replaceAll("'tokend'@'127.0.0.1'", `'${name}'@'%'`)
      .replace("'a long random password'", `'${password}'`)
      .replaceAll(' ON ripple.', ` ON \`${database}\`.`),
  );
  // An administrator's connection of its own: the user outlives the family's connection until dropped.
  const admin = await createConnection({ uri: db.database.url });
  t.after(async () => {
    await admin.query(`DROP USER IF EXISTS '${name}'@'%'`);
    await admin.end();
  });
  for (const statement of statements) {
    // one table each: nothing database-wide, nothing on a table the page does not name
    if (statement.startsWith('GRANT')) assert.match(statement, /^GRANT [A-Z, ]+ ON `[^`]+`\.\w+ TO /);
    await admin.query(statement);
  }
  const url = new URL(db.database.url);
  url.username = name;
  url.password = password;
  return url.toString();
}

/** What `serve` does for a user, over its real port: tokens made, read, listed, swept; a web sign-in. */
async function serveAsTheUser(
  db: FamilyDatabase,
  server: Awaited<ReturnType<typeof startTokend>>,
  user: { id: number; username: string; password: string },
): Promise<void> {
  const base = server.baseUrl;
  const made = await request(`${base}/tokens`, {
    method: 'POST',
    json: { username: user.username, password: user.password, privileges: T.ReadConfidential | T.Write },
  });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  const secret = String(made.body.token);
  const auth = { 'x-ripple-token': secret };
  const ping = await request(`${base}/ping`, { headers: auth });
  assert.deepEqual([ping.body.user_id, ping.body.privileges], [user.id, T.ReadConfidential | T.Write]);
  const listed = await request(`${base}/tokens`, { headers: auth });
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  assert.equal((listed.body.tokens as unknown[]).length, 1);
  assert.equal((await familyLookup(db, secret))?.private, 0);
  // an expiring token, swept (a delete through the view) once it has expired
  const brief = await request(`${base}/tokens`, {
    method: 'POST',
    json: { username: user.username, password: user.password, expires_in: 1 },
  });
  assert.equal(brief.status, 200, JSON.stringify(brief.body));
  assert.ok(
    await eventually(100, 100, async () => (await familyLookup(db, String(brief.body.token))) === undefined),
    'the sweep deleted the expired token',
  );
  // a web sign-in (a session, the security log) and the token page
  const browser = new FetchBrowser();
  const origin = `http://127.0.0.1:${server.port}`;
  const form = await browser.go(`${origin}/login`);
  const signedIn = await browser.go(`${origin}/login`, {
    method: 'POST',
    form: { _csrf: csrfOf(await form.text()), username: user.username, password: user.password },
  });
  assert.equal(signedIn.status, 303);
  assert.equal((await browser.go(`${origin}/tokens`)).status, 200);
  const deleted = await request(`${base}/tokens/self/delete`, { method: 'POST', headers: auth });
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
}

describe(
  "the database user's grants in place, as docs/compatibility.md lists them",
  { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
  () => {
    it('are enough for tokend migrate, serve and the CLI, and reach no other table', async (t) => {
      const db = await familyDatabase(t);
      // another table of the family's, which tokend's user must not reach
      await db.family.query('CREATE TABLE scores (id INT PRIMARY KEY, userid INT NOT NULL)');
      const user = await signUp(db);
      const url = await documentedUser(t, db);
      const env = { DATABASE_URL: url, DATABASE_SCHEMA: 'ripple' };

      const dry = await runCli(['migrate', '--dry-run'], { env });
      assert.equal(dry.code, 0, dry.stderr);
      const applied = await runCli(['migrate', '--json'], { env });
      assert.equal(applied.code, 0, applied.stderr);
      assert.ok((onlyJson(applied).applied as string[]).includes('0000_ripple_in_place'), applied.stdout);

      const server = await startTokend({ ...env, TOKEN_SWEEP_INTERVAL_S: '1', LOG_LEVEL: 'warn' });
      try {
        await serveAsTheUser(db, server, user);
      } finally {
        await server.stop();
      }
      // the server logged no failure: every query it ran was allowed
      assert.doesNotMatch(server.output(), /denied|"level":50/, server.output());

      // The CLI's commands that write: a token, a ban and its end, an application and its token.
      for (const args of [
        ['token', 'create', '--user', String(user.id), '--privileges', 'Write'],
        ['user', 'ban', '--user', String(user.id)],
        ['user', 'unban', '--user', String(user.id)],
        ['user', 'set-privileges', '--user', String(user.id), '--privileges', '3'],
        ['user', 'passwd', '--user', String(user.id), '--password', 'a new password'],
        ['token', 'list', '--user', String(user.id)],
        ['audit', '--user', String(user.id)],
      ]) {
        const r = await runCli([...args, '--json'], { env });
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      }
      const client = onlyJson(
        await runCli(
          ['client', 'create', '--name', 'Grants', '--redirect-uri', 'https://app.example/cb', '--json'],
          { env },
        ),
      );
      const bearer = await runCli(
        [
          'client',
          'token',
          '--client',
          String(client.id),
          '--user',
          String(user.id),
          '--scope',
          'write',
          '--json',
        ],
        { env },
      );
      assert.equal(bearer.code, 0, bearer.stderr);

      // Nothing else of the family's database: another table is out of reach.
      const tokendUser = await createConnection({ uri: url });
      t.after(() => tokendUser.end());
      await assert.rejects(tokendUser.query('SELECT * FROM scores'), /denied/);
      await assert.rejects(tokendUser.query('DROP VIEW tokend_tokens'), /denied/);
    });
  },
);
