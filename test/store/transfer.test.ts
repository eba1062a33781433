// Moving from SQLite to a server database: `tokend export` on the SQLite file, `tokend migrate` and
// `tokend import` on a fresh PostgreSQL (and MySQL) database; tokens made before work after, and new
// rows get fresh ids.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { loadConfig } from '../../src/config.ts';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/database.ts';
import { runCli, onlyJson } from '../helpers/cli.ts';
import { MAX_ID } from '../../src/store/schema.ts';
import { MAX_EXPLICIT_ID } from '../../src/store/ids.ts';
import { issueAccessToken } from '../../src/oauth/issue.ts';
import { nowSeconds } from '../../src/auth/clock.ts';

/**
 * The backends an import goes into. In place (`ripple`) there is nothing to import into: the family's
 * database is the one copy of its accounts, and `tokend import` refuses it (test/ripple/in-place.test.ts).
 */
const TARGETS = DIALECTS.filter((d) => d !== 'ripple');

for (const target of TARGETS.filter((d) => d !== 'sqlite')) {
  describe(`tokend export from SQLite, tokend import into ${target}`, () => {
    it('keeps users and tokens: a token made before works after', { timeout: 60_000 }, async (t) => {
      const source = await build(t, 'sqlite');
      const alice = await source.createUser({ username: 'Alice Smith', password: 'alice-pw' });
      const bob = await source.createUser({ privileges: 0 }); // banned
      const login = await source.api({
        method: 'POST',
        path: '/tokens',
        payload: { username: 'alice smith', password: 'alice-pw', description: 'from the API' },
      });
      assert.equal(login.statusCode, 200, login.body);
      const secret = body(login).token as string;
      const hidden = await source.createToken(alice.id, { private: true, description: 'web' });
      await source.createToken(bob.id, { description: 'bob' });
      await source.app.tokend.lastUsed.flush();
      await source.store.db
        .insertInto('oauth_clients')
        .values({
          id: 'client-one',
          name: 'One',
          owner_id: alice.id,
          avatar: '',
          redirect_uris: '["https://one.example/cb"]',
          secret_hash: 'ab'.repeat(32),
          created_at: 1,
        })
        .execute();
      // An application's own token (client credentials): a row of no user.
      const appToken = await issueAccessToken(
        source.store.db,
        { clientId: 'client-one', userId: null, scope: '', family: 'c'.repeat(64) },
        nowSeconds(),
      );

      const dir = mkdtempSync(join(tmpdir(), 'tokend-transfer-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'export.jsonl');
      const exported = await runCli(['export', '--file', file, '--json'], {
        env: { DATABASE_URL: source.database.url },
      });
      assert.equal(exported.code, 0, exported.stderr);
      assert.deepEqual((onlyJson(exported).counts as Record<string, number>).users, 2);
      assert.deepEqual((onlyJson(exported).counts as Record<string, number>).tokens, 3);
      assert.deepEqual((onlyJson(exported).counts as Record<string, number>).oauth_clients, 1);
      const text = readFileSync(file, 'utf8');
      assert.ok(!text.includes(secret), 'the file never holds a token secret');
      assert.ok(!text.includes('alice-pw'), 'the file never holds a password');

      const database = await createTestDatabase(target);
      t.after(() => database.drop());
      const env = { DATABASE_URL: database.url };
      assert.equal((await runCli(['migrate'], { env })).code, 0);
      const imported = await runCli(['import', '--file', file, '--json'], { env });
      assert.equal(imported.code, 0, imported.stderr);
      assert.deepEqual(onlyJson(imported).counts, onlyJson(exported).counts);

      const config = loadConfig({ LOG_LEVEL: 'silent', BCRYPT_COST: '4' });
      config.database = database.config;
      const app = await buildApp(config, { store: await openStore(database.config) });
      t.after(() => app.close());
      const headers = { 'x-ripple-token': secret };
      const self = await app.inject({ method: 'GET', url: '/api/v1/tokens/self', headers });
      assert.equal(self.statusCode, 200, self.body);
      assert.equal(body(self).description, 'from the API');
      const list = await app.inject({ method: 'GET', url: '/api/v1/tokens', headers });
      assert.deepEqual(
        (body(list).tokens as Array<{ id: number }>).map((x) => x.id),
        [body(self).id],
        'the private token stays unlisted',
      );
      // The password still verifies, and new rows get ids past the imported ones.
      const again = await app.inject({
        method: 'POST',
        url: '/api/v1/tokens',
        payload: { username: 'alice_smith', password: 'alice-pw' },
      });
      assert.equal(again.statusCode, 200, again.body);
      const fresh = await app.inject({
        method: 'GET',
        url: '/api/v1/tokens/self',
        headers: { 'x-ripple-token': body(again).token as string },
      });
      assert.ok((body(fresh).id as number) > hidden.id, `new token id ${String(body(fresh).id)}`);
      const banned = await app.inject({
        method: 'POST',
        url: '/api/v1/tokens',
        payload: { id: bob.id, password: bob.password },
      });
      assert.equal(banned.statusCode, 402, banned.body);

      const client = await app.tokend.store.db
        .selectFrom('oauth_clients')
        .selectAll()
        .executeTakeFirstOrThrow();
      assert.equal(client.redirect_uris, '["https://one.example/cb"]');
      assert.equal(client.owner_id, alice.id);
      const own = await app.inject({
        method: 'GET',
        url: '/api/v1/tokens/self',
        headers: { authorization: `Bearer ${appToken.access_token}` },
      });
      assert.equal(own.statusCode, 200, own.body);
      assert.equal(body(own).client_id, 'client-one');
      assert.equal(body(own).user_id, undefined, 'still the application’s own, for no user');

      // A second import into the now non-empty database is refused.
      const twice = await runCli(['import', '--file', file], { env });
      assert.equal(twice.code, 1);
      assert.match(twice.stderr, /not empty/);
    });

    it('refuses a cut-off file and imports nothing', { timeout: 60_000 }, async (t) => {
      const source = await build(t, 'sqlite');
      const user = await source.createUser();
      await source.createToken(user.id);
      const dir = mkdtempSync(join(tmpdir(), 'tokend-transfer-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'export.jsonl');
      assert.equal(
        (await runCli(['export', '--file', file], { env: { DATABASE_URL: source.database.url } })).code,
        0,
      );
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
      writeFileSync(file, `${lines.slice(0, -1).join('\n')}\n`);

      const database = await createTestDatabase(target);
      t.after(() => database.drop());
      const r = await runCli(['import', '--file', file], { env: { DATABASE_URL: database.url } });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /cut off/);
      const store = await openStore(database.config, { migrate: false });
      t.after(() => store.close());
      assert.deepEqual(await store.db.selectFrom('users').select('id').execute(), []);
    });
  });
}

for (const target of TARGETS) {
  describe(`tokend import of ids at the end of the range into ${target}`, () => {
    it('refuses a file with an id above MAX_EXPLICIT_ID, saying why; the database stays usable', async (t) => {
      // A database whose user got the last 32-bit id (by hand, or by an older import).
      const source = await build(t, 'sqlite');
      const edge = await source.createUser({ id: MAX_ID, username: 'edge' });
      await source.createToken(edge.id);
      const dir = mkdtempSync(join(tmpdir(), 'tokend-transfer-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'export.jsonl');
      const exported = await runCli(['export', '--file', file], {
        env: { DATABASE_URL: source.database.url },
      });
      assert.equal(exported.code, 0, exported.stderr);

      const database = await createTestDatabase(target);
      t.after(() => database.drop());
      const env = { DATABASE_URL: database.url };
      const r = await runCli(['import', '--file', file], { env });
      assert.equal(r.code, 1, r.stdout);
      assert.match(
        r.stderr,
        new RegExp(`line 2: users: id ${MAX_ID} is above ${MAX_EXPLICIT_ID}, the largest id tokend takes`),
      );
      // Nothing was written, and new users and their tokens get ids as before.
      const created = await runCli(['user', 'create', '--username', 'after', '--password', 'pw', '--json'], {
        env,
      });
      assert.equal(created.code, 0, created.stderr);
      assert.equal(onlyJson(created).id, 1);
      const config = loadConfig({ LOG_LEVEL: 'silent', BCRYPT_COST: '4' });
      config.database = database.config;
      const app = await buildApp(config, { store: await openStore(database.config) });
      t.after(() => app.close());
      const login = await app.inject({
        method: 'POST',
        url: '/api/v1/tokens',
        payload: { username: 'after', password: 'pw' },
      });
      assert.equal(login.statusCode, 200, login.body);
    });
  });
}

/** An export file with these users (and no other rows), as `tokend export` writes it. */
function exportOf(users: Array<{ id: number; username: string; username_safe?: string }>): string {
  const lines = [
    { format: 'tokend-export', version: 1, exported_at: 1, tables: ['users'] },
    ...users.map((user) => ({
      table: 'users',
      row: {
        ...user,
        privileges: 3,
        password_hash: '$2b$04$' + 'a'.repeat(53),
        password_version: 2,
        created_at: 1,
      },
    })),
    { end: true, counts: { users: users.length } },
  ];
  return lines.map((line) => JSON.stringify(line)).join('\n') + '\n';
}

const user = (id: number, username: string, username_safe = username.toLowerCase()) => ({
  id,
  username,
  username_safe,
});

// Hostile files: each is refused at the line named, for the reason given, and writes nothing.
const HOSTILE_USERS: Array<[string, string, RegExp]> = [
  [
    'a username_safe that is not the name folded (so `user create alice` would make a second alice)',
    exportOf([user(1, 'Alice', 'zzz'), user(2, 'bob')]),
    /line 2: users: username_safe "zzz" is not "alice", the form tokend gives username "Alice"/,
  ],
  [
    'a name mixing Latin and Cyrillic letters',
    exportOf([user(1, 'bob'), user(2, '\u0430lice')]),
    /line 3: users: username "\u0430lice": a username may not mix Cyrillic and Latin letters/,
  ],
  [
    'a zero-width space',
    exportOf([user(1, 'x\u200by', 'xy')]),
    // The name as the terminal gets it: its zero-width space written as an escape (src/shown-text.ts).
    /line 2: users: username "x\\u200by": a username may not contain control, format or invisible characters/,
  ],
  [
    'two names that fold together, in one batch',
    exportOf([user(4, 'Dup'), user(5, 'Ｄｕｐ', 'dup')]),
    /line 3: users: username "Ｄｕｐ" is the same name as user #4's once case, width and spaces are folded/,
  ],
  [
    'two names that fold together, in batches far apart',
    exportOf([
      ...Array.from({ length: 1200 }, (_, i) => user(i + 1, `user ${i + 1}`, `user_${i + 1}`)),
      user(2000, 'USER_7', 'user_7'),
    ]),
    /line 1202: users: username "USER_7" is the same name as user #7's once case, width and spaces are folded/,
  ],
];

for (const target of TARGETS) {
  describe(`tokend import of hostile usernames into ${target}`, () => {
    for (const [what, file, reason] of HOSTILE_USERS)
      it(`refuses ${what}, naming the line and the reason; nothing is written`, async (t) => {
        const dir = mkdtempSync(join(tmpdir(), 'tokend-transfer-'));
        t.after(() => rmSync(dir, { recursive: true, force: true }));
        const path = join(dir, 'hostile.jsonl');
        writeFileSync(path, file);
        const database = await createTestDatabase(target);
        t.after(() => database.drop());
        const r = await runCli(['import', '--file', path], { env: { DATABASE_URL: database.url } });
        assert.equal(r.code, 1, r.stdout);
        assert.match(r.stderr, reason);
        assert.match(r.stderr, /nothing was imported/);
        const store = await openStore(database.config, { migrate: false });
        t.after(() => store.close());
        assert.deepEqual(await store.db.selectFrom('users').select('id').execute(), []);
      });

    it('keeps the name folded as tokend folds it: `user create` cannot make a second one', async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'tokend-transfer-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const path = join(dir, 'export.jsonl');
      // A file without username_safe: tokend computes it.
      writeFileSync(path, exportOf([{ id: 1, username: 'Alice Smith' }]));
      const database = await createTestDatabase(target);
      t.after(() => database.drop());
      const env = { DATABASE_URL: database.url };
      const imported = await runCli(['import', '--file', path], { env });
      assert.equal(imported.code, 0, imported.stderr);
      const again = await runCli(['user', 'create', '--username', 'ALICE_SMITH', '--password', 'p'], {
        env,
      });
      assert.equal(again.code, 1, again.stdout);
      assert.match(again.stderr, /a user named "Alice Smith" already exists \(id 1\)/);
      const store = await openStore(database.config, { migrate: false });
      t.after(() => store.close());
      const rows = await store.db.selectFrom('users').select(['id', 'username_safe']).execute();
      assert.deepEqual(
        rows.map((row) => [Number(row.id), row.username_safe]),
        [[1, 'alice_smith']],
      );
    });
  });
}
