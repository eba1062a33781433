// tokend import-ripple run again while both sides live on: the source keeps making tokens and users after
// an import, tokend makes its own meanwhile, and the next run brings every new source row over, with its
// id, without touching tokend's. Also: a banned user's tokens get their power back on unban, and a bot
// with an empty password comes over unable to sign in by password, its tokens working.
// Black-box: the source is a MariaDB database made from docs/ripple-schema.sql, written by SQL the way the
// family's programs write it (AUTO_INCREMENT ids, `user` as text); the target is each tokend backend.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection, ResultSetHeader } from 'mysql2/promise';
import { hash as bcrypt } from '@node-rs/bcrypt';
import type { FastifyInstance } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { rippleSourceProblem } from '../helpers/ripple-schema.ts';
import { createRippleSource } from '../helpers/in-place.ts';
import { cliHarness } from '../helpers/cli.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';
import type { ImportSummary } from '../../src/ripple/import.ts';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const ADMIN = 8 | 16 | 32; // AdminAccessRAP, AdminManageUsers, AdminBanUsers: ManageUser needs all three

const mysqlProblem = await rippleSourceProblem();

/** A source database with the family's tables, and a connection to write it as the family does. */
async function familySource(t: TestContext) {
  const { url, connection } = await createRippleSource(t);
  return { url, c: connection };
}

/** A user as the family's website signs one up: the id from AUTO_INCREMENT unless given. */
async function insertUser(
  c: Connection,
  user: { id?: number; username: string; password: string | null; version?: number; privileges: number },
): Promise<number> {
  const hash = user.password === null ? '' : await bcrypt(md5(user.password), 4);
  const [r] = await c.query<ResultSetHeader>(
    "INSERT INTO users (id, username, username_safe, password_md5, salt, email, password_version, privileges, register_datetime) VALUES (?, ?, ?, ?, '', ?, ?, ?, UNIX_TIMESTAMP())",
    [
      user.id ?? null,
      user.username,
      user.username.toLowerCase().replaceAll(' ', '_'),
      hash,
      `${user.username.replaceAll(' ', '.')}@example.com`,
      user.version ?? 2,
      user.privileges,
    ],
  );
  return r.insertId;
}

/** A token as the family's API makes one: id from AUTO_INCREMENT, the owner's id as text, MD5 of the secret. */
async function insertToken(c: Connection, user: number, secret: string, privileges: number, isPrivate = 0) {
  const [r] = await c.query<ResultSetHeader>(
    'INSERT INTO tokens (user, privileges, description, token, private, last_updated) VALUES (?, ?, ?, ?, ?, UNIX_TIMESTAMP())',
    [String(user), privileges, `made at the source: ${secret}`, md5(secret), isPrivate],
  );
  return r.insertId;
}

const self = (app: FastifyInstance, secret: string) =>
  app.inject({ method: 'GET', url: '/api/v1/tokens/self', headers: { 'x-ripple-token': secret } });

async function selfOf(app: FastifyInstance, secret: string) {
  const r = await self(app, secret);
  assert.equal(r.statusCode, 200, `${secret}: ${r.body}`);
  return r.json() as { id: number; privileges: number; description: string };
}

/** Whom a credential acts for, and with what: GET /v1/ping. */
async function pingOf(app: FastifyInstance, secret: string) {
  const r = await app.inject({ method: 'GET', url: '/api/v1/ping', headers: { 'x-ripple-token': secret } });
  assert.equal(r.statusCode, 200, r.body);
  return r.json() as { user_id: number; privileges: number };
}

const login = (app: FastifyInstance, username: string, password: string, privileges = 2 | 4) =>
  app.inject({ method: 'POST', url: '/api/v1/tokens', payload: { username, password, privileges } });

// In place (`ripple`) there is nothing to import into: tokend import-ripple refuses it
// (test/ripple/import-ripple.test.ts).
for (const dialect of DIALECTS.filter((d) => d !== 'ripple')) {
  describe(
    `tokend import-ripple run again into ${dialect}`,
    { skip: mysqlProblem && `MariaDB: ${mysqlProblem}` },
    () => {
      it('brings over every token and user the source made after an import, though tokend made its own meanwhile', async (t) => {
        const { url, c } = await familySource(t);
        const alice = await insertUser(c, { username: 'Alice', password: 'alice password', privileges: 3 });
        const before = [];
        for (let i = 0; i < 3; i++) before.push(await insertToken(c, alice, `before ${i}`, 2 | 4));
        const h = await cliHarness(t, dialect);
        const from = ['import-ripple', '--from', url];
        const first = (await h.json(from)) as unknown as ImportSummary;
        assert.deepEqual([first.users.imported, first.tokens.imported, first.skipped.count], [1, 3, 0]);

        // tokend makes tokens of its own (as many as the source will) and a user of its own.
        const app = await h.app();
        const ours: Array<{ token: string; id: number }> = [];
        for (let i = 0; i < 5; i++) {
          const r = await login(app, 'alice', 'alice password');
          assert.equal(r.statusCode, 200, r.body);
          const { token } = r.json() as { token: string };
          ours.push({ token, id: (await selfOf(app, token)).id });
        }
        const native = await h.json(['user', 'create', '--username', 'native', '--password', 'native pw']);

        // The source goes on: five more tokens of Alice's, a new user and her token, numbered by the
        // source's AUTO_INCREMENT right after its own rows.
        const after: Array<{ secret: string; id: number }> = [];
        for (let i = 0; i < 5; i++)
          after.push({ secret: `after ${i}`, id: await insertToken(c, alice, `after ${i}`, 2 | 4) });
        assert.deepEqual(
          after.map((a) => a.id),
          [4, 5, 6, 7, 8],
          'the source numbers on from its own rows',
        );
        const carol = await insertUser(c, { username: 'Carol', password: 'carol password', privileges: 3 });
        assert.equal(carol, alice + 1);
        after.push({ secret: 'carol', id: await insertToken(c, carol, 'carol', 2) });

        const second = (await h.json(from)) as unknown as ImportSummary;
        assert.deepEqual(second.skipped, { count: 0, rows: [] });
        assert.deepEqual(second.users, { imported: 1, already_present: 1 });
        assert.deepEqual(second.tokens, {
          imported: 6,
          already_present: 3,
          deleted_in_tokend: 0,
          privileges_limited: 0,
        });
        // Each comes over with the source's id and owner, and works.
        for (const { secret, id } of after) {
          const body = await selfOf(app, secret);
          assert.deepEqual([body.id, body.description], [id, `made at the source: ${secret}`]);
          assert.equal((await pingOf(app, secret)).user_id, secret === 'carol' ? carol : alice);
        }
        // tokend's own tokens and user are untouched, and none of their ids is a source id.
        for (const { token, id } of ours) assert.equal((await selfOf(app, token)).id, id);
        const sourceIds = new Set([...before, ...after.map((a) => a.id)]);
        assert.ok(
          ours.every(({ id }) => !sourceIds.has(id)),
          `tokend's ids ${ours.map((o) => o.id).join(', ')}`,
        );
        assert.notEqual(native.id, carol);
        assert.equal((await login(app, 'native', 'native pw')).statusCode, 200);
        assert.equal((await login(app, 'carol', 'carol password')).statusCode, 200);

        // A token revoked in tokend stays revoked; nothing is imported twice.
        const revoked = await app.inject({
          method: 'DELETE',
          url: `/api/v1/tokens/${after[0]!.id}`,
          headers: { 'x-ripple-token': ours[0]!.token },
        });
        assert.equal(revoked.statusCode, 200, revoked.body);
        const third = (await h.json(from)) as unknown as ImportSummary;
        assert.deepEqual(third.users, { imported: 0, already_present: 2 });
        assert.deepEqual(third.tokens, {
          imported: 0,
          already_present: 8,
          deleted_in_tokend: 1,
          privileges_limited: 0,
        });
        assert.equal((await self(app, after[0]!.secret)).statusCode, 404);
        // Tokens tokend makes after a rerun still take ids the source has not used.
        const later = await login(app, 'carol', 'carol password');
        const laterId = (await selfOf(app, (later.json() as { token: string }).token)).id;
        const next = await insertToken(c, carol, 'next', 2);
        assert.notEqual(laterId, next);
        const fourth = (await h.json(from)) as unknown as ImportSummary;
        assert.equal(fourth.tokens.imported, 1);
        assert.equal((await selfOf(app, 'next')).id, next);
      });

      it('keeps the range left to the source in a copy made by export and import', async (t) => {
        const { url, c } = await familySource(t);
        const alice = await insertUser(c, { username: 'Alice', password: 'alice password', privileges: 3 });
        for (let i = 0; i < 2; i++) await insertToken(c, alice, `before ${i}`, 2 | 4);
        // Imported, then copied to another tokend database before tokend made anything of its own.
        const first = await cliHarness(t, 'sqlite');
        await first.json(['import-ripple', '--from', url]);
        const dir = mkdtempSync(join(tmpdir(), 'tokend-rerun-'));
        t.after(() => rmSync(dir, { recursive: true, force: true }));
        const file = join(dir, 'export.jsonl');
        await first.json(['export', '--file', file]);
        const h = await cliHarness(t, dialect);
        await h.json(['import', '--file', file]);
        // The copy serves and makes tokens; the source makes more; the next run brings them all.
        const app = await h.app();
        const ours: number[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await login(app, 'alice', 'alice password');
          assert.equal(r.statusCode, 200, r.body);
          ours.push((await selfOf(app, (r.json() as { token: string }).token)).id);
        }
        const after: number[] = [];
        for (let i = 0; i < 3; i++) after.push(await insertToken(c, alice, `after ${i}`, 2 | 4));
        assert.ok(
          ours.every((id) => !after.includes(id)),
          `tokend's ${ours.join(', ')}`,
        );
        const again = (await h.json(['import-ripple', '--from', url])) as unknown as ImportSummary;
        assert.deepEqual(again.skipped, { count: 0, rows: [] });
        assert.deepEqual([again.tokens.imported, again.tokens.already_present], [3, 2]);
        for (let i = 0; i < 3; i++) assert.equal((await selfOf(app, `after ${i}`)).id, after[i]);
      });

      it("keeps a banned user's token privileges: powerless while banned, back on unban", async (t) => {
        const { url, c } = await familySource(t);
        // A banned admin (no UserPublic, no UserNormal) and a restricted user (UserNormal only).
        const admin = await insertUser(c, { username: 'Banned Admin', password: 'pw', privileges: ADMIN });
        const restricted = await insertUser(c, { username: 'Restricted', password: 'pw', privileges: 2 });
        const adminToken = await insertToken(c, admin, 'admin secret', 2 | 4 | 128);
        await insertToken(c, restricted, 'restricted secret', 2 | 4 | 128);
        const h = await cliHarness(t, dialect);
        const summary = (await h.json(['import-ripple', '--from', url])) as unknown as ImportSummary;
        // ManageUser is more than the restricted user could hold unbanned: that one is limited.
        assert.deepEqual([summary.tokens.imported, summary.tokens.privileges_limited], [2, 1]);
        const app = await h.app();

        // While banned the token carries nothing, though its stored privileges are kept.
        const banned = await pingOf(app, 'admin secret');
        assert.deepEqual([banned.user_id, banned.privileges], [admin, 0]);
        assert.equal((await selfOf(app, 'admin secret')).privileges, 0);
        // Restricted (UserNormal without UserPublic): the token carries what the user may hold, as in the family.
        assert.equal((await selfOf(app, 'restricted secret')).privileges, 2 | 4);

        // Unbanned in tokend: the token has its privileges back.
        await h.json(['user', 'set-privileges', '--user', String(admin), '--privileges', String(ADMIN | 3)]);
        const unbanned = await selfOf(app, 'admin secret');
        assert.deepEqual([unbanned.id, unbanned.privileges], [adminToken, 2 | 4 | 128]);
        await h.json(['user', 'set-privileges', '--user', String(restricted), '--privileges', '3']);
        assert.equal((await selfOf(app, 'restricted secret')).privileges, 2 | 4);
        // Banned again: nothing again.
        await h.json(['user', 'set-privileges', '--user', String(admin), '--privileges', '0']);
        assert.equal((await pingOf(app, 'admin secret')).privileges, 0);
      });

      it('brings a bot with an empty password over unable to sign in by password, its tokens working', async (t) => {
        const { url, c } = await familySource(t);
        const bots: number[] = [];
        // The family's bot accounts have an empty password_md5, with either password version.
        for (const [username, version] of [
          ['FokaBot', 1],
          ['Other Bot', 2],
        ] as const)
          bots.push(await insertUser(c, { username, password: null, version, privileges: 3 | ADMIN }));
        const botToken = await insertToken(c, bots[0]!, 'bot secret', 2 | 4 | 128);
        await insertToken(c, bots[0]!, 'bot session', 0, 1);
        const h = await cliHarness(t, dialect);
        const summary = (await h.json(['import-ripple', '--from', url])) as unknown as ImportSummary;
        assert.deepEqual([summary.users.imported, summary.tokens.imported, summary.skipped.count], [2, 2, 0]);
        const app = await h.app();

        for (const username of ['fokabot', 'other bot'])
          for (const password of ['', ' ', 'password', md5(''), 'x'.repeat(72)]) {
            const r = await login(app, username, password);
            // The empty password is a missing parameter (422); any other does not match (403).
            assert.equal(
              r.statusCode,
              password === '' ? 422 : 403,
              `${username} / ${JSON.stringify(password)}: ${r.body}`,
            );
            assert.equal((r.json() as { token?: string }).token, undefined);
          }
        // The web sign-in refuses it too.
        for (const password of ['', 'password'])
          await assert.rejects(
            new InjectBrowser(app).signIn({ id: 0, username: 'fokabot', password }),
            /sign-in failed/,
          );

        const body = await selfOf(app, 'bot secret');
        assert.deepEqual([body.id, body.privileges], [botToken, 2 | 4 | 128]);
        assert.deepEqual(await pingOf(app, 'bot secret'), {
          ...(await pingOf(app, 'bot secret')),
          user_id: bots[0],
          privileges: 2 | 4 | 128,
        });
        assert.equal((await pingOf(app, 'bot session')).user_id, bots[0]);
        // A password set later in tokend works as any other.
        await h.json(['user', 'passwd', '--user', String(bots[1]), '--password', 'now one']);
        assert.equal((await login(app, 'other bot', 'now one')).statusCode, 200);
      });
    },
  );
}
