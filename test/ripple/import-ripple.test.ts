// tokend import-ripple, black-box: a MariaDB database made with the Ripple family's columns is imported
// into each tokend backend by the CLI; then users sign in with their old passwords and old tokens
// authenticate over HTTP, by every transport, before and after their stored hash is upgraded.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { hash as bcrypt } from '@node-rs/bcrypt';
import { DIALECTS } from '../helpers/dialects.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { createRippleTables, rippleSourceProblem } from '../helpers/ripple-schema.ts';
import { cliHarness, MAIN, runCli, runProcess } from '../helpers/cli.ts';
import { openStore } from '../../src/store/database.ts';
import { hashTokenSecret } from '../../src/auth/secret.ts';
import type { ImportSummary } from '../../src/ripple/import.ts';
import { MAX_ID } from '../../src/store/schema.ts';
import { MAX_EXPLICIT_ID } from '../../src/store/ids.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

const ADMIN = 3 | 8 | 16 | 32; // UserPublic, UserNormal, AdminAccessRAP, AdminManageUsers, AdminBanUsers
const SECRET = {
  alice: 'aliceS3cretFromRipple0000000000',
  alicePrivate: 'alicePrivateSecret',
  bob: 'bobAdminSecret',
};

/** The source users and tokens, and what the import must say of each skipped row. */
async function seedSource(url: string) {
  const c = await createConnection({ uri: url });
  await createRippleTables(c);
  // Names beyond Latin-1 (an invisible character, a ligature that NFKC makes 18 characters, Cyrillic in
  // seedEdges): a family database whose users table was converted to utf8mb4, as some servers' is. The
  // family's own latin1 columns hold none of them.
  await c.query(
    'ALTER TABLE users MODIFY username varchar(30) CHARACTER SET utf8mb4 NOT NULL, ' +
      'MODIFY username_safe varchar(30) CHARACTER SET utf8mb4 NOT NULL',
  );
  const v2 = async (password: string) => bcrypt(md5(password), 4);
  const users: Array<[number, string, string, number, number, number]> = [
    // id, username, password_md5, password_version, privileges, register_datetime
    [1000, 'Alice', await v2('alice password'), 2, 3, 1_500_000_000],
    [1001, 'Bob Admin', await v2('bob password'), 2, ADMIN, 1_500_000_100],
    [1002, 'Old Timer', md5('old password'), 1, 3, 1_400_000_000],
    [1003, 'ALICE', await v2('x'), 2, 3, 0], // the same name as Alice, folded
    [1004, 'Banned One', await v2('banned password'), 2, 0, 0],
    [1005, 'zero\u200bwidth', await v2('x'), 2, 3, 0],
    [1006, 'Negative', await v2('x'), 2, -5, 0],
    [1007, 'Bad Hash', 'not-a-bcrypt-hash', 2, 3, 0],
    [1008, 'Version Three', await v2('x'), 3, 3, 0],
    [1009, '\ufdfa'.repeat(16), await v2('x'), 2, 3, 0], // 288 characters once normalised
  ];
  for (const [id, username, hash, version, privileges, registered] of users)
    await c.query(
      "INSERT INTO users (id, username, username_safe, password_md5, salt, email, password_version, privileges, register_datetime) VALUES (?, ?, ?, ?, '', ?, ?, ?, ?)",
      [
        id,
        username,
        `${username.toLowerCase().replaceAll(' ', '_')}#${id}`,
        hash,
        `${id}@example.com`,
        version,
        privileges,
        registered,
      ],
    );
  const tokens: Array<[number, string, number, string, string, number]> = [
    // id, user, privileges, description, token, private
    [1, '1000', 2 | 4, 'alice app', md5(SECRET.alice), 0],
    [2, '1000', 2, 'alice private', md5(SECRET.alicePrivate), 1],
    [3, '1001', 2 | 128, 'bob admin tool', md5(SECRET.bob).toUpperCase(), 0],
    [4, '1000', 128, 'alice asked too much', md5('alice too much'), 0],
    [5, '9999', 2, 'nobody', md5('nobody'), 0],
    [6, 'abc', 2, 'not an id', md5('abc'), 0],
    [7, '1003', 2, 'owner skipped', md5('owner skipped'), 0],
    [8, '1000', 2, 'bad hash', 'zzzz', 0],
    [9, '1004', 2, 'banned owner', md5('banned owner'), 0],
    [10, '1000', 2, 'same secret', md5(SECRET.alice), 0],
    [11, '1000', 2, 'nul\0here', md5('nul'), 0],
  ];
  for (const [id, user, privileges, description, token, priv] of tokens)
    await c.query(
      'INSERT INTO tokens (id, user, privileges, description, token, private, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [id, user, privileges, description, token, priv, 1_600_000_000 + id],
    );
  await c.end();
}

const EXPECTED_SKIPS: Array<[string, number, RegExp]> = [
  ['users', 1003, /same name as user #1000/],
  ['users', 1005, /invisible/],
  ['users', 1006, /privileges -5 is out of range/],
  ['users', 1007, /not a bcrypt hash/],
  ['users', 1008, /password_version 3 is unknown/],
  ['users', 1009, /longer than 255 characters once normalised/],
  ['tokens', 5, /owner, user #9999, is not in the source database/],
  ['tokens', 6, /"abc" is not a user id/],
  ['tokens', 7, /owner, user #1003, was skipped/],
  ['tokens', 8, /not the MD5 hex/],
  ['tokens', 10, /same secret as token #1/],
  ['tokens', 11, /NUL character/],
];

type Summary = ImportSummary;

const mysqlProblem = await rippleSourceProblem();

async function sourceDatabase(t: TestContext) {
  const source = await createTestDatabase('mysql');
  t.after(() => source.drop());
  await seedSource(source.url);
  return source;
}

/**
 * The backends an import goes into. In place (`ripple`) there is nothing to import into: the family's
 * database is the one copy of its accounts, and `tokend import-ripple` refuses it (below).
 */
const IMPORT_TARGETS = DIALECTS.filter((d) => d !== 'ripple');

if (DIALECTS.includes('ripple'))
  describe('tokend import-ripple into ripple', { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` }, () => {
    it('refuses: in place the users are the family database itself, nothing is written', async (t) => {
      const source = await sourceDatabase(t);
      const h = await cliHarness(t, 'ripple');
      for (const args of [[], ['--dry-run']]) {
        const r = await h.cli(['import-ripple', '--from', source.url, ...args]);
        assert.equal(r.code, 1, r.stdout);
        assert.match(r.stderr, /not done on a Ripple-family database \(DATABASE_SCHEMA=ripple\)/);
      }
      const store = await openStore(h.database.config);
      t.after(() => store.close());
      assert.deepEqual(await store.db.selectFrom('users').select('id').execute(), []);
    });
  });

for (const dialect of IMPORT_TARGETS) {
  describe(
    `tokend import-ripple into ${dialect}`,
    { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
    () => {
      it('imports users and tokens, reports every skipped row, and imports nothing twice', async (t) => {
        const source = await sourceDatabase(t);
        const h = await cliHarness(t, dialect);
        const from = ['import-ripple', '--from', source.url];

        // A dry run reports what the real run then does, and writes nothing.
        const firstRun = {
          users: { imported: 4, already_present: 0 },
          tokens: { imported: 5, already_present: 0, deleted_in_tokend: 0, privileges_limited: 1 },
        };
        const dry = (await h.json([...from, '--dry-run'])) as unknown as Summary;
        assert.equal(dry.dry_run, true);
        assert.deepEqual(dry.users, firstRun.users);
        assert.deepEqual(dry.tokens, firstRun.tokens);
        assert.equal(dry.skipped.count, EXPECTED_SKIPS.length);
        const app = await h.app();
        const self = (secret: string) =>
          app.inject({ method: 'GET', url: '/api/v1/tokens/self', headers: { 'x-ripple-token': secret } });
        assert.equal((await self(SECRET.alice)).statusCode, 404);

        const first = (await h.json(from)) as unknown as Summary;
        assert.equal(first.dry_run, false);
        assert.equal(first.source, source.url);
        assert.deepEqual(first.users, firstRun.users);
        assert.deepEqual(first.tokens, firstRun.tokens);
        assert.equal(first.skipped.count, EXPECTED_SKIPS.length);
        for (const [table, id, reason] of EXPECTED_SKIPS) {
          const row = first.skipped.rows.find((r) => r.table === table && r.id === id);
          assert.ok(row, `${table} #${id} is reported as skipped: ${JSON.stringify(first.skipped.rows)}`);
          assert.match(row.reason, reason);
        }

        // Each imported token is its owner's token.created event (means import), written with it.
        const audit = await h.cli(['audit', '--kind', 'token.created', '--json']);
        const created = audit.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { means: string; detail: string });
        assert.equal(created.length, firstRun.tokens.imported, audit.stdout);
        assert.ok(created.every((e) => e.means === 'import' && e.detail === 'import-ripple'));

        // Again: everything is already there; the same rows are skipped for the same reasons.
        const again = (await h.json(from)) as unknown as Summary;
        assert.deepEqual(again.users, { imported: 0, already_present: 4 });
        assert.deepEqual(again.tokens, {
          imported: 0,
          already_present: 5,
          deleted_in_tokend: 0,
          privileges_limited: 0,
        });
        assert.equal(again.skipped.count, EXPECTED_SKIPS.length);

        // The text output says the same in sentences.
        const text = await h.cli(from);
        assert.equal(text.code, 0, text.stderr);
        assert.match(text.stdout, /users: 0 imported, 4 already present/);
        assert.match(text.stdout, /tokens #6: user "abc" is not a user id/);
      });

      it("never gives a skipped user's tokens to the tokend user with the same id", async (t) => {
        const source = await sourceDatabase(t);
        const h = await cliHarness(t, dialect);
        // tokend already has an admin numbered like the source's Bob, and a user numbered like no source user.
        await h.json([
          'user',
          'create',
          '--username',
          'root',
          '--user-id',
          '1001',
          '--privileges',
          String(ADMIN | 65536),
          '--password',
          'root password',
        ]);
        await h.json([
          'user',
          'create',
          '--username',
          'native',
          '--user-id',
          '9999',
          '--password',
          'native password',
        ]);
        const summary = (await h.json(['import-ripple', '--from', source.url])) as unknown as Summary;
        const reason = (table: string, id: number) =>
          summary.skipped.rows.find((r) => r.table === table && r.id === id)?.reason;
        assert.match(reason('users', 1001) ?? '', /id 1001 is already another user's in tokend/);
        assert.match(reason('tokens', 3) ?? '', /its owner, user #1001, was skipped/);
        assert.match(reason('tokens', 5) ?? '', /its owner, user #9999, is not in the source database/);
        const app = await h.app();
        for (const secret of [SECRET.bob, 'nobody']) {
          const ping = await app.inject({
            method: 'GET',
            url: '/api/v1/ping',
            headers: { 'x-ripple-token': secret },
          });
          assert.equal((ping.json() as { user_id: number }).user_id, 0, secret);
        }
      });

      it('does not bring back a token deleted in tokend when it runs again', async (t) => {
        const source = await sourceDatabase(t);
        const h = await cliHarness(t, dialect);
        await h.json(['import-ripple', '--from', source.url]);
        const app = await h.app();
        const asAlice = { 'x-ripple-token': SECRET.alice };
        assert.equal(
          (await app.inject({ method: 'POST', url: '/api/v1/tokens/self/delete', headers: asAlice }))
            .statusCode,
          200,
        );
        await h.json(['user', 'sign-out-everywhere', '--user', '1000']);
        const again = (await h.json(['import-ripple', '--from', source.url])) as unknown as Summary;
        // Alice's three imported tokens (1, 2, 4) are gone, Bob's and the banned user's stay; token 10,
        // skipped the first time for having token 1's secret, does not bring that secret back either.
        assert.deepEqual(again.tokens, {
          imported: 0,
          already_present: 2,
          deleted_in_tokend: 3,
          privileges_limited: 0,
        });
        assert.match(
          again.skipped.rows.find((r) => r.table === 'tokens' && r.id === 10)?.reason ?? '',
          /same secret as token #1, imported before/,
        );
        for (const secret of [SECRET.alice, SECRET.alicePrivate]) {
          const r = await app.inject({
            method: 'GET',
            url: '/api/v1/tokens/self',
            headers: { 'x-ripple-token': secret },
          });
          assert.equal(r.statusCode, 404, secret);
        }
      });

      it('keeps passwords, ids and token secrets working; the MD5 hash is replaced on first use', async (t) => {
        const source = await sourceDatabase(t);
        const h = await cliHarness(t, dialect);
        await h.json(['import-ripple', '--from', source.url]);
        const app = await h.app();

        // Users sign in with their old passwords; a version-1 password stays refused with 418.
        const login = (username: string, password: string) =>
          app.inject({
            method: 'POST',
            url: '/api/v1/tokens',
            payload: { username, password, privileges: 2 },
          });
        const alice = await login('alice', 'alice password');
        assert.equal(alice.statusCode, 200, alice.body);
        assert.equal((alice.json() as { id: number }).id, 1000);
        assert.equal((await login('Bob Admin', 'bob password')).statusCode, 200);
        assert.equal((await login('old timer', 'old password')).statusCode, 418);
        assert.equal((await login('banned one', 'banned password')).statusCode, 402);
        // The new token is stored as SHA-256 and numbered after the imported ones.
        const fresh = alice.json() as { token: string };
        const store = await openStore(h.database.config, { migrate: false });
        t.after(() => store.close());
        const row = await store.db
          .selectFrom('tokens')
          .select(['id', 'token_hash'])
          .where('token_hash', '=', hashTokenSecret(fresh.token))
          .executeTakeFirstOrThrow();
        // (9 is the largest imported id: token 10 was skipped)
        assert.ok(row.id > 9, `new token id ${row.id}`);
        const storedHash = async (id: number) =>
          (
            await store.db
              .selectFrom('tokens')
              .select('token_hash')
              .where('id', '=', id)
              .executeTakeFirstOrThrow()
          ).token_hash.trimEnd();
        assert.equal(await storedHash(1), `md5:${md5(SECRET.alice)}`);

        // Attack: what is stored is no credential. The stored MD5 hex, its stored form, padded (PostgreSQL
        // pads char columns) or upper-cased, and the SHA-256 of the stored form find nothing.
        const stored = `md5:${md5(SECRET.alice)}`;
        for (const guess of [
          md5(SECRET.alice),
          stored,
          `${stored}   `,
          stored.toUpperCase(),
          hashTokenSecret(stored),
        ]) {
          const ping = await app.inject({
            method: 'GET',
            url: '/api/v1/ping',
            headers: { 'x-ripple-token': guess },
          });
          assert.equal((ping.json() as { user_id: number }).user_id, 0, guess);
        }
        assert.equal(await storedHash(1), stored, 'a failed guess leaves the stored hash alone');
        // The old token works by header, by k and by cookie, before and after its hash was upgraded.
        const transports = {
          header: (secret: string) => ({ headers: { 'x-ripple-token': secret } }),
          k: (secret: string) => ({ query: { k: secret } }),
          cookie: (secret: string) => ({ cookies: { rt: secret } }),
        };
        for (const round of ['first use', 'after the upgrade'])
          for (const [name, transport] of Object.entries(transports)) {
            const r = await app.inject({
              method: 'GET',
              url: '/api/v1/tokens/self',
              ...transport(SECRET.alice),
            });
            assert.equal(r.statusCode, 200, `${round}, ${name}: ${r.body}`);
            const body = r.json() as { id: number; privileges: number; description: string };
            assert.deepEqual([body.id, body.privileges, body.description], [1, 6, 'alice app']);
            assert.equal(await storedHash(1), hashTokenSecret(SECRET.alice), `${round}, ${name}`);
          }
        const ping = await app.inject({
          method: 'GET',
          url: '/api/v1/ping',
          headers: { 'x-ripple-token': SECRET.alice },
        });
        assert.equal((ping.json() as { user_id: number }).user_id, 1000);
        // An upper-case MD5 in the source works too, with its privileges as the owner may hold them.
        const bob = await app.inject({
          method: 'GET',
          url: '/api/v1/tokens/self',
          headers: { 'x-ripple-token': SECRET.bob },
        });
        assert.equal(bob.statusCode, 200, bob.body);
        assert.equal((bob.json() as { privileges: number }).privileges, 2 | 128);
        // Nothing is stored as MD5 once each imported token with a known secret was used, but the unused ones.
        const legacy = await store.db
          .selectFrom('tokens')
          .select('id')
          .where('token_hash', 'like', 'md5:%')
          .orderBy('id')
          .execute();
        assert.deepEqual(
          legacy.map((r) => r.id),
          [2, 4, 9],
        );

        // The listing: public tokens only, with the stored privileges limited to what the owner may hold.
        const list = await app.inject({
          method: 'GET',
          url: '/api/v1/tokens',
          headers: { 'x-ripple-token': SECRET.alice },
        });
        assert.equal(list.statusCode, 200, list.body);
        const listed = list.json() as {
          tokens: Array<{ id: number; privileges: number; last_updated: number }>;
        };
        const imported = listed.tokens.filter((tk) => tk.id <= 9).sort((a, b) => a.id - b.id);
        assert.deepEqual(
          imported.map((tk) => [tk.id, tk.privileges]),
          [
            [1, 6],
            [4, 0],
          ],
        );
        assert.equal(listed.tokens.find((tk) => tk.id === 4)?.last_updated, 1_600_000_004);
        // The private token authenticates but is never listed. It carries what the family's API gives a
        // private token: every privilege but Bancho, limited by its owner (a player: 6, not 8198).
        const privateSelf = await app.inject({
          method: 'GET',
          url: '/api/v1/tokens/self',
          headers: { 'x-ripple-token': SECRET.alicePrivate },
        });
        assert.equal(privateSelf.statusCode, 200, privateSelf.body);
        assert.equal((privateSelf.json() as { privileges: number }).privileges, 2 | 4);
      });
    },
  );
}

/**
 * Rows at both ends of the id range, added to the source of seedSource: ids at the 32-bit limit, which
 * would leave the target's id generators no room, ids of 0 and below, a name mixing Latin and Cyrillic,
 * and a name whose bytes are not UTF-8 (C0 AF, then "lol"), which a binary column hands over as they are
 * and which reads as "\ufffd\ufffdlol".
 */
const MIXED_NAME = '\u0410lice Mixed'; // a Cyrillic "А", then Latin letters
async function seedEdges(url: string) {
  const c = await createConnection({ uri: url });
  // An id of 0 is stored as 0, not taken as "the next AUTO_INCREMENT value".
  await c.query("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO')");
  const hash = await bcrypt(md5('edge password'), 4);
  for (const [id, username] of [
    [MAX_ID, 'Edge Case'],
    [0, 'Zero'],
    [-4, 'Minus Four'],
    [1010, MIXED_NAME],
  ] as const)
    await c.query(
      "INSERT INTO users (id, username, username_safe, password_md5, salt, email, register_datetime, password_version, privileges) VALUES (?, ?, ?, ?, '', ?, 0, 2, 3)",
      [id, username, `edge#${id}`, hash, `${id}@example.com`],
    );
  // Bytes kept as they are: the column's values (UTF-8 so far) stay the same bytes.
  await c.query('ALTER TABLE users MODIFY username varbinary(255) NOT NULL');
  await c.query(
    "INSERT INTO users (id, username, username_safe, password_md5, salt, email, register_datetime, password_version, privileges) VALUES (1011, UNHEX('C0AF6C6F6C'), 'edge#1011', ?, '', '1011@example.com', 0, 2, 3)",
    [hash],
  );
  for (const [id, user, privileges, secret] of [
    [MAX_ID, '1000', 2, 'edge token'],
    [MAX_EXPLICIT_ID, '1001', 2 | 128, 'high token'],
    [0, '1000', 2, 'zero token'],
    [-2, '1000', 2, 'minus token'],
    [12, String(MAX_ID), 2, 'edge owner token'],
  ] as const)
    await c.query(
      'INSERT INTO tokens (id, user, privileges, description, token, private, last_updated) VALUES (?, ?, ?, ?, ?, 0, 1600000000)',
      [id, user, privileges, secret, md5(secret)],
    );
  await c.end();
}

const EDGE_SKIPS: Array<[string, number, RegExp]> = [
  ['users', MAX_ID, new RegExp(`id ${MAX_ID} is above ${MAX_EXPLICIT_ID}, the largest id tokend takes`)],
  ['users', 0, /id 0 is below 1/],
  ['users', -4, /id -4 is below 1/],
  ['users', 1010, /may not mix Cyrillic and Latin letters/],
  ['users', 1011, /^username "\ufffd\ufffdlol": .*U\+FFFD, the replacement character.*not valid UTF-8/],
  ['tokens', MAX_ID, new RegExp(`id ${MAX_ID} is above ${MAX_EXPLICIT_ID}`)],
  ['tokens', 0, /id 0 is below 1/],
  ['tokens', -2, /id -2 is below 1/],
  ['tokens', 12, new RegExp(`its owner, user #${MAX_ID}, was skipped`)],
];

for (const dialect of IMPORT_TARGETS) {
  describe(
    `tokend import-ripple of ids at the ends of the range into ${dialect}`,
    { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
    () => {
      it('skips and reports them; token creation, web sign-in and user create work after', async (t) => {
        const source = await sourceDatabase(t);
        await seedEdges(source.url);
        const h = await cliHarness(t, dialect);
        const summary = (await h.json(['import-ripple', '--from', source.url])) as unknown as Summary;
        assert.equal(summary.skipped.count, EXPECTED_SKIPS.length + EDGE_SKIPS.length);
        for (const [table, id, reason] of EDGE_SKIPS) {
          const row = summary.skipped.rows.find((r) => r.table === table && r.id === id);
          assert.ok(row, `${table} #${id} is reported as skipped: ${JSON.stringify(summary.skipped.rows)}`);
          assert.match(row.reason, reason);
        }
        // The token with the largest id that may be given is imported.
        assert.deepEqual(summary.tokens, {
          imported: 6,
          already_present: 0,
          deleted_in_tokend: 0,
          privileges_limited: 1,
        });
        // The text report lists them too.
        const text = await h.cli(['import-ripple', '--from', source.url, '--dry-run']);
        assert.equal(text.code, 0, text.stderr);
        assert.match(text.stdout, /users #0: id 0 is below 1/);
        assert.match(text.stdout, /users #-4: id -4 is below 1/);

        // `tokend user create` refuses the mixed name for the reason the import gave.
        const mixed = await h.cli(['user', 'create', '--username', MIXED_NAME, '--password', 'p']);
        assert.equal(mixed.code, 2, 'a name the rules refuse is a usage error');
        const reason = summary.skipped.rows.find((r) => r.table === 'users' && r.id === 1010)!.reason;
        const cliReason = /--username: (.*)/.exec(mixed.stderr)?.[1];
        assert.equal(reason, `username ${JSON.stringify(MIXED_NAME)}: ${cliReason}`);

        // Token creation: a new token gets an id tokend can name, and is revoked by it.
        const app = await h.app();
        const login = async () => {
          const r = await app.inject({
            method: 'POST',
            url: '/api/v1/tokens',
            payload: { username: 'alice', password: 'alice password', privileges: 4 },
          });
          assert.equal(r.statusCode, 200, r.body);
          const { token } = r.json() as { token: string };
          // The answer's id is the user's; the token's own id is read back with it.
          const self = await app.inject({
            method: 'GET',
            url: '/api/v1/tokens/self',
            headers: { 'x-ripple-token': token },
          });
          assert.equal(self.statusCode, 200, self.body);
          return { id: (self.json() as { id: number }).id, token };
        };
        const first = await login();
        const second = await login();
        assert.ok(second.id > first.id && second.id <= MAX_ID, `new token ids ${first.id}, ${second.id}`);
        const revoked = await app.inject({
          method: 'DELETE',
          url: `/api/v1/tokens/${second.id}`,
          headers: { 'x-ripple-token': first.token },
        });
        assert.equal(revoked.statusCode, 200, revoked.body);
        const gone = await app.inject({
          method: 'GET',
          url: '/api/v1/tokens/self',
          headers: { 'x-ripple-token': second.token },
        });
        assert.equal(gone.statusCode, 404, 'the revoked token no longer authenticates');

        // Web sign-in.
        await new InjectBrowser(app).signIn({ id: 0, username: 'alice', password: 'alice password' });

        // user create: the next id is after the imported ones; an id at the end of the range is refused.
        const created = await h.json(['user', 'create', '--username', 'newcomer', '--password', 'p']);
        assert.ok(
          Number(created.id) > 1009 && Number(created.id) <= MAX_EXPLICIT_ID,
          `user id ${created.id}`,
        );
        const atEnd = await h.cli([
          'user',
          'create',
          '--username',
          'late',
          '--password',
          'p',
          '--user-id',
          String(MAX_ID),
        ]);
        assert.equal(atEnd.code, 2, 'a usage mistake');
        assert.match(atEnd.stderr, new RegExp(`--user-id: id ${MAX_ID} is above ${MAX_EXPLICIT_ID}`));
      });

      it('fix_privileges for every user walks the tokens that exist, not the ids between them', async (t) => {
        const source = await sourceDatabase(t);
        await seedEdges(source.url);
        const h = await cliHarness(t, dialect);
        await h.json(['import-ripple', '--from', source.url]);
        // Bob loses his admin privileges: his tokens 3 and MAX_EXPLICIT_ID hold ManageUser beyond them.
        await h.json(['user', 'set-privileges', '--user', '1001', '--privileges', '3']);
        await h.json(['user', 'create', '--username', 'fixer', '--password', 'p', '--privileges', '571']);
        const app = await h.app();
        const fixer = await app.inject({
          method: 'POST',
          url: '/api/v1/tokens',
          payload: { username: 'fixer', password: 'p', privileges: 128 | 2048 },
        });
        assert.equal(fixer.statusCode, 200, fixer.body);
        const runs: Array<[number, number]> = [];
        app.tokend.jobs.onFixed = (rows, statements) => runs.push([rows, statements]);
        const r = await app.inject({
          method: 'POST',
          url: '/api/v1/tokens/fix_privileges',
          headers: { 'x-ripple-token': (fixer.json() as { token: string }).token },
        });
        assert.equal(r.statusCode, 200, r.body);
        await app.tokend.jobs.idle();
        // Seven tokens, ids 1 to MAX_EXPLICIT_ID: one chunk of tokens, so one statement, not one per
        // 10,000 ids between the smallest and the largest (107,375 of them). Three rows change: Bob's two,
        // and the banned user's token 9, imported with its privileges (fix_privileges limits by the
        // owner's privileges as they are, a ban included).
        assert.deepEqual(runs, [[3, 1]]);
        const store = await openStore(h.database.config, { migrate: false });
        t.after(() => store.close());
        const stored = await store.db
          .selectFrom('tokens')
          .select(['id', 'privileges'])
          .where('id', 'in', [3, MAX_EXPLICIT_ID])
          .orderBy('id')
          .execute();
        assert.deepEqual(
          stored.map((row) => [row.id, Number(row.privileges)]),
          [
            [3, 2],
            [MAX_EXPLICIT_ID, 2],
          ],
        );
      });
    },
  );
}

for (const dialect of IMPORT_TARGETS) {
  describe(
    `tokend import-ripple into ${dialect}, then export and import`,
    { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
    () => {
      it('moves a token still stored as MD5 to another database, where it keeps working', async (t) => {
        const source = await sourceDatabase(t);
        const h = await cliHarness(t, dialect);
        await h.json(['import-ripple', '--from', source.url]);
        const dir = mkdtempSync(join(tmpdir(), 'tokend-ripple-'));
        t.after(() => rmSync(dir, { recursive: true, force: true }));
        const file = join(dir, 'export.jsonl');
        await h.json(['export', '--file', file]);
        const next = await cliHarness(t, 'sqlite');
        await next.json(['import', '--file', file]);
        const app = await next.app();
        const r = await app.inject({
          method: 'GET',
          url: '/api/v1/tokens/self',
          headers: { 'x-ripple-token': SECRET.alicePrivate },
        });
        assert.equal(r.statusCode, 200, r.body);
        assert.equal((r.json() as { description: string }).description, 'alice private');
      });
    },
  );
}

describe('tokend import-ripple on a terminal', { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` }, () => {
  it('shows a progress line per table on a terminal, and none otherwise', async (t) => {
    const source = await sourceDatabase(t);
    const h = await cliHarness(t, 'sqlite');
    // script(1) runs the command on a pseudo-terminal, as an operator's shell would.
    const command = [process.execPath, MAIN, 'import-ripple', '--from', source.url, '--dry-run']
      .map((word) => `'${word}'`)
      .join(' ');
    const onTerminal = await runProcess('script', ['-qec', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: h.database.url, LOG_LEVEL: 'silent' },
    });
    assert.equal(onTerminal.code, 0, onTerminal.stdout);
    assert.match(onTerminal.stdout, /\rusers: 10 of 10 read, 6 skipped\r?\n/);
    assert.match(onTerminal.stdout, /\rtokens: 11 of 11 read, 6 skipped\r?\n/);
    const piped = await h.cli(['import-ripple', '--from', source.url, '--dry-run']);
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(piped.stderr, '');
  });
});

describe(
  'tokend import-ripple --dry-run into a SQLite file not made yet',
  { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
  () => {
    it('reports what it would import and leaves no file behind', async (t) => {
      const source = await sourceDatabase(t);
      const dir = mkdtempSync(join(tmpdir(), 'tokend-dry-run-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'other.db');
      const dry = await runCli(['import-ripple', '--from', source.url, '--dry-run'], {
        env: { DATABASE_URL: `sqlite:${file}` },
      });
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /^Dry run: nothing was written\. .*other\.db does not exist yet/);
      assert.match(dry.stdout, /users: 4 would import, 0 already present/);
      assert.deepEqual(readdirSync(dir), [], 'no database file, journal or WAL was made');
      // The real run then makes it and imports what the dry run said.
      const real = await runCli(['import-ripple', '--from', source.url], {
        env: { DATABASE_URL: `sqlite:${file}` },
      });
      assert.equal(real.code, 0, real.stderr);
      assert.match(real.stdout, /users: 4 imported, 0 already present/);
    });
  },
);

describe('tokend import-ripple: source errors', { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` }, () => {
  it('names the problem in one line and writes nothing', async (t) => {
    const h = await cliHarness(t, 'sqlite');
    const bad = await h.cli(['import-ripple', '--from', 'postgres://x@127.0.0.1/db']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--from: expected mysql:\/\/USER:PASSWORD@HOST:PORT\/DATABASE/);

    const malformed = await h.cli(['import-ripple', '--from', 'mysql:/root:hunter2@127.0.0.1:3306/ripple']);
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, /the value given is not such a URL/);
    assert.doesNotMatch(malformed.stderr, /hunter2/);

    const refused = await h.cli(['import-ripple', '--from', 'mysql://root:hunter2@127.0.0.1:1/ripple']);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /cannot connect to the source database mysql:\/\/root:\*\*\*@127\.0\.0\.1:1\/ripple: connection refused/,
    );
    assert.doesNotMatch(refused.stderr, /hunter2/);

    // The source as the target: refused before tokend creates a table in it.
    const src = await sourceDatabase(t);
    const itself = await runCli(['import-ripple', '--from', src.url], { env: { DATABASE_URL: src.url } });
    assert.equal(itself.code, 1);
    assert.match(itself.stderr, /DATABASE_URL names the source database itself/);
    const c0 = await createConnection({ uri: src.url });
    const [tables] = await c0.query("SHOW TABLES LIKE 'kysely%'");
    await c0.end();
    assert.deepEqual(tables, []);

    // A database without the family's tables.
    const empty = await createTestDatabase('mysql');
    t.after(() => empty.drop());
    const c = await createConnection({ uri: empty.url });
    await c.query('CREATE TABLE users (id int PRIMARY KEY, username varchar(30))');
    await c.end();
    const notRipple = await h.cli(['import-ripple', '--from', empty.url, '--json']);
    assert.equal(notRipple.code, 1);
    assert.match(
      notRipple.stderr,
      /is not a Ripple-family database: it has no users\.username_safe, .*tokens\.id/,
    );
    assert.equal(notRipple.stdout, '');

    // Ids that are not integers cannot be read in id order, page after page: one line, no crash.
    const textIds = await createTestDatabase('mysql');
    t.after(() => textIds.drop());
    const c2 = await createConnection({ uri: textIds.url });
    await createRippleTables(c2);
    for (const table of ['users', 'tokens'])
      await c2.query(`ALTER TABLE ${table} MODIFY id varchar(11) NOT NULL`);
    await c2.query(
      "INSERT INTO users (id, username, username_safe, password_md5, salt, email, register_datetime, password_version, privileges) VALUES ('u-1', 'x', 'x', '', '', 'x@example.com', 0, 2, 3)",
    );
    await c2.end();
    const notIntegers = await h.cli(['import-ripple', '--from', textIds.url, '--dry-run']);
    assert.equal(notIntegers.code, 1);
    assert.match(notIntegers.stderr, /users\.id is varchar\(11\), not an integer column/);
  });

  it('refuses text id columns, even holding numbers, before reading a row: none is missed', async (t) => {
    // Text ids sort as text ("10" before "9"), so pages asked for by number would skip rows unseen.
    const h = await cliHarness(t, 'sqlite');
    await h.json(['migrate']);
    const rows = Array.from({ length: 1500 }, (_, i) => i + 1);
    for (const textColumn of ['users', 'tokens'] as const) {
      const source = await createTestDatabase('mysql');
      t.after(() => source.drop());
      const c = await createConnection({ uri: source.url });
      await createRippleTables(c);
      await c.query(`ALTER TABLE ${textColumn} MODIFY id varchar(20) NOT NULL`);
      await c.query(
        'INSERT INTO users (id, username, username_safe, password_md5, salt, email, register_datetime, password_version, privileges) VALUES ?',
        [
          rows.map((id) => [
            String(id),
            `user ${id}`,
            `user_${id}`,
            md5(`pw ${id}`),
            '',
            `${id}@example.com`,
            0,
            1,
            3,
          ]),
        ],
      );
      await c.query(
        'INSERT INTO tokens (id, user, privileges, description, token, private, last_updated) VALUES ?',
        [rows.map((id) => [String(id), String(id), 2, `token ${id}`, md5(`secret ${id}`), 0, 1])],
      );
      await c.end();

      const r = await h.cli(['import-ripple', '--from', source.url]);
      assert.equal(r.code, 1, r.stdout);
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0]!,
        new RegExp(
          `${textColumn}\\.id is varchar\\(20\\), not an integer column: .*nothing was read or written`,
        ),
      );
      assert.equal(r.stdout, '');
    }
    const store = await openStore(h.database.config, { migrate: false });
    t.after(() => store.close());
    assert.deepEqual(await store.db.selectFrom('users').select('id').execute(), []);
    assert.deepEqual(await store.db.selectFrom('tokens').select('id').execute(), []);
  });
});
