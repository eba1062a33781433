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

for (const target of DIALECTS.filter((d) => d !== 'sqlite')) {
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

for (const target of DIALECTS) {
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
