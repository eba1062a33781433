// Privileges: limiting at creation, effective privileges per request (demoted and banned owners),
// and the background fix_privileges job with its scopes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, sharedHarness, type Harness } from '../helpers/app.ts';
import { fixTokenPrivileges } from '../../src/tokens/repository.ts';
import { TokenPrivilege as T, UserPrivilege as U } from '../../src/auth/privileges.ts';

const ACTIVE = U.UserPublic | U.UserNormal;
/** Every user privilege bit. */
const ALL_USER = 2 ** 23 - 1;
/** Every token privilege bit, Read included. */
const ALL_TOKEN = 2 ** 14 - 1;
/** An owner whose privileges allow ManageUser and APIMeta. */
const ADMIN = ACTIVE | U.AdminAccessRAP | U.AdminManageUsers | U.AdminBanUsers | U.AdminManageServer;
const FIXER = T.ManageUser | T.APIMeta;

const auth = (secret: string) => ({ 'x-ripple-token': secret });

let attempts = 0;

async function create(h: Harness, user: { id: number; password: string }, privileges: unknown) {
  return h.api({
    method: 'POST',
    path: '/tokens',
    // a fresh client address per attempt keeps these tests clear of the login rate limit
    remoteAddress: `10.0.${Math.floor(++attempts / 250)}.${attempts % 250}`,
    payload: { id: user.id, password: user.password, ...(privileges === undefined ? {} : { privileges }) },
  });
}

async function storedPrivileges(h: Harness, tokenId: number): Promise<number> {
  const row = await h.store.db
    .selectFrom('tokens')
    .select('privileges')
    .where('id', '=', tokenId)
    .executeTakeFirstOrThrow();
  return Number(row.privileges);
}

async function fix(h: Harness, secret: string, query = '') {
  return h.api({ method: 'POST', path: `/tokens/fix_privileges${query}`, headers: auth(secret) });
}

for (const dialect of DIALECTS) {
  describe(`privileges at creation [${dialect}]`, () => {
    const harness = sharedHarness(dialect);
    it('grants only what the owner may hold; drops unknown bits and Read; absent means 0', async () => {
      const h = harness();
      const normal = await h.createUser();
      const admin = await h.createUser({ privileges: ALL_USER });
      const cases: Array<[{ id: number; password: string }, unknown, number]> = [
        [normal, undefined, 0],
        [normal, null, 0],
        [normal, 0, 0],
        [normal, ALL_TOKEN, T.ReadConfidential | T.Write | T.Bancho],
        [normal, T.ManageUser | T.APIMeta, 0],
        [normal, T.Read, 0],
        [normal, T.Write + 2 ** 14 + 2 ** 20 + 2 ** 31, T.Write],
        [normal, 2 ** 40 + T.ReadConfidential, T.ReadConfidential],
        [normal, 2 ** 53, 0],
        [admin, ALL_TOKEN, ALL_TOKEN & ~T.Read],
        [admin, T.Read, 0],
        [admin, 2 ** 32 - 1, ALL_TOKEN & ~T.Read],
        [admin, T.Blog | T.Beatmap, T.Blog | T.Beatmap],
      ];
      for (const [user, requested, granted] of cases) {
        const r = await create(h, user, requested);
        assert.equal(r.statusCode, 200, `${requested}: ${r.body}`);
        const b = body(r);
        assert.equal(b.privileges, granted, `requested ${requested}`);
        const self = await h.api({ method: 'GET', path: '/tokens/self', headers: auth(String(b.token)) });
        assert.equal(await storedPrivileges(h, Number(body(self).id)), granted, `stored for ${requested}`);
      }
    });

    it('privileges that are negative, fractional, strings or above 2^53 are a 400', async () => {
      const h = harness();
      const user = await h.createUser();
      for (const bad of [
        -1,
        -(2 ** 40),
        1.5,
        0.1,
        '4',
        '',
        true,
        [4],
        { 4: 4 },
        2 ** 53 + 2,
        2 ** 60,
        1e300,
      ]) {
        const r = await create(h, user, bad);
        assert.equal(r.statusCode, 400, `${JSON.stringify(bad)}: ${r.body}`);
        assert.equal(body(r).code, 400);
        assert.match(String(body(r).message), /privileges/i);
      }
      const count = await h.store.db
        .selectFrom('tokens')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 0);
    });
  });

  describe(`effective privileges per request [${dialect}]`, () => {
    const harness = sharedHarness(dialect);
    it("a demoted owner's token loses privileges at once, and regains them on promotion", async () => {
      const h = harness();
      const admin = await h.createUser({ privileges: ADMIN });
      const token = await h.createToken(admin.id, { privileges: FIXER | T.Write });
      const look = async () => {
        const self = body(await h.api({ method: 'GET', path: '/tokens/self', headers: auth(token.secret) }));
        const ping = body(await h.api({ method: 'GET', path: '/ping', headers: auth(token.secret) }));
        assert.equal(self.privileges, ping.privileges);
        return { privileges: self.privileges, user: ping.user_privileges };
      };
      assert.deepEqual(await look(), { privileges: FIXER | T.Write, user: ADMIN });
      await h.setUserPrivileges(admin.id, ACTIVE | U.AdminManageServer);
      assert.deepEqual(await look(), { privileges: T.APIMeta | T.Write, user: ACTIVE | U.AdminManageServer });
      assert.equal((await fix(h, token.secret)).statusCode, 401);
      await h.setUserPrivileges(admin.id, ADMIN);
      assert.deepEqual(await look(), { privileges: FIXER | T.Write, user: ADMIN });
      assert.equal(await storedPrivileges(h, token.id), FIXER | T.Write);
    });

    it("a banned owner's (no UserNormal) token carries no privileges but still reads, lists and deletes its own tokens", async () => {
      const h = harness();
      const admin = await h.createUser({ privileges: ADMIN });
      const token = await h.createToken(admin.id, { privileges: FIXER | T.Write, description: 'main' });
      const spare = await h.createToken(admin.id, { privileges: T.Write, description: 'spare' });
      for (const banned of [ADMIN & ~U.UserNormal, ADMIN & ~U.UserNormal & ~U.UserPublic, 0]) {
        await h.setUserPrivileges(admin.id, banned);
        const self = await h.api({ method: 'GET', path: '/tokens/self', headers: auth(token.secret) });
        assert.equal(self.statusCode, 200);
        assert.equal(body(self).privileges, 0);
        assert.equal(body(self).id, token.id);
        const ping = body(await h.api({ method: 'GET', path: '/ping', headers: auth(token.secret) }));
        assert.equal(ping.user_id, admin.id);
        assert.equal(ping.privileges, 0);
        assert.equal(ping.user_privileges, banned);
        const list = await h.api({ method: 'GET', path: '/tokens', headers: auth(token.secret) });
        assert.equal(list.statusCode, 200);
        assert.deepEqual(
          (body(list).tokens as Array<{ privileges: number }>).map((x) => x.privileges),
          [FIXER | T.Write, T.Write],
        );
        const refused = await fix(h, token.secret);
        assert.equal(refused.statusCode, 401, refused.body);
      }
      const del = await h.api({ method: 'POST', path: '/tokens/self/delete', headers: auth(spare.secret) });
      assert.equal(del.statusCode, 200);
      const list = await h.api({ method: 'GET', path: '/tokens', headers: auth(token.secret) });
      assert.deepEqual(
        (body(list).tokens as Array<{ id: number }>).map((x) => x.id),
        [token.id],
      );
    });

    it("a restricted owner's (UserNormal without UserPublic) token keeps what limit() allows, as in the family", async () => {
      const h = harness();
      const admin = await h.createUser({ privileges: ADMIN });
      const token = await h.createToken(admin.id, { privileges: FIXER | T.Write | T.Bancho });
      // the family's admin panel restricts with (p | UserNormal) & ~UserPublic
      const restricted = (ADMIN | U.UserNormal) & ~U.UserPublic;
      await h.setUserPrivileges(admin.id, restricted);
      const ping = body(await h.api({ method: 'GET', path: '/ping', headers: auth(token.secret) }));
      assert.deepEqual([ping.privileges, ping.user_privileges], [FIXER | T.Write | T.Bancho, restricted]);
      const self = await h.api({ method: 'GET', path: '/tokens/self', headers: auth(token.secret) });
      assert.equal(body(self).privileges, FIXER | T.Write | T.Bancho);
      const fixed = await fix(h, token.secret);
      assert.equal(fixed.statusCode, 200, fixed.body);
    });

    it('a banned or restricted user cannot get a new token, but an active one can', async () => {
      const h = harness();
      const user = await h.createUser();
      await h.setUserPrivileges(user.id, U.UserPublic);
      assert.equal((await create(h, user, 4)).statusCode, 402);
      await h.setUserPrivileges(user.id, U.UserNormal);
      assert.equal((await create(h, user, 4)).statusCode, 402, 'restricted: creation still needs both');
      await h.setUserPrivileges(user.id, ACTIVE);
      const r = await create(h, user, 4);
      assert.equal(r.statusCode, 200);
      assert.equal(body(r).privileges, 4);
    });
  });

  describe(`POST /tokens/fix_privileges [${dialect}]`, () => {
    const harness = sharedHarness(dialect);
    it('is a 401 naming the missing privileges without ManageUser and APIMeta', async () => {
      const h = harness();
      const anonymous = await h.api({ method: 'POST', path: '/tokens/fix_privileges' });
      assert.equal(anonymous.statusCode, 401);
      assert.match(String(body(anonymous).message), /ManageUser/);
      assert.match(String(body(anonymous).message), /APIMeta/);

      const admin = await h.createUser({ privileges: ADMIN });
      const cases: Array<[number, string[], string[]]> = [
        [0, ['ManageUser', 'APIMeta'], []],
        [T.ManageUser, ['APIMeta'], ['ManageUser']],
        [T.APIMeta, ['ManageUser'], ['APIMeta']],
        [T.ManageUser | T.Write, ['APIMeta'], ['ManageUser']],
      ];
      for (const [privileges, named, notNamed] of cases) {
        const token = await h.createToken(admin.id, { privileges });
        const r = await fix(h, token.secret);
        assert.equal(r.statusCode, 401, `${privileges}: ${r.body}`);
        assert.equal(body(r).code, 401);
        for (const name of named) assert.match(String(body(r).message), new RegExp(name));
        for (const name of notNamed)
          assert.doesNotMatch(String(body(r).message), new RegExp(`\\b${name}\\b`));
      }
      // the token asks for both, but its owner may not hold them
      const weak = await h.createUser();
      const overreaching = await h.createToken(weak.id, { privileges: FIXER });
      assert.equal((await fix(h, overreaching.secret)).statusCode, 401);
    });

    it('a malformed id is a 400', async () => {
      const h = harness();
      const admin = await h.createUser({ privileges: ADMIN });
      const token = await h.createToken(admin.id, { privileges: FIXER });
      for (const id of ['abc', '-1', '-5', '1.5', '1e3', 'SELF', '0x10', '12abc']) {
        const r = await fix(h, token.secret, `?id=${encodeURIComponent(id)}`);
        assert.equal(r.statusCode, 400, `id=${id}: ${r.body}`);
        assert.equal(body(r).code, 400);
        assert.match(String(body(r).message), /id/);
      }
    });

    /** Three users with tokens beyond their privileges, one token already within them, and the admin. */
    async function scene(h: Harness) {
      const admin = await h.createUser({ privileges: ADMIN });
      const adminToken = await h.createToken(admin.id, { privileges: FIXER | T.Blog | T.Read }); // → FIXER
      const x = await h.createUser();
      const y = await h.createUser();
      const z = await h.createUser({ privileges: 0 }); // banned: limit() still applies to stored values
      const tokens = {
        admin: adminToken,
        x1: await h.createToken(x.id, { privileges: T.Write | T.ManageUser | (2 ** 20) }), // → Write
        x2: await h.createToken(x.id, { privileges: T.Write | T.ReadConfidential }), // already within
        x3: await h.createToken(x.id, { privileges: T.APIMeta, private: true }), // → 0
        y1: await h.createToken(y.id, { privileges: T.Bancho | T.Beatmap }), // → Bancho
        z1: await h.createToken(z.id, { privileges: T.Write | T.Blog }), // → 0
      };
      const expectedAfterFix = {
        admin: FIXER,
        x1: T.Write,
        x2: T.Write | T.ReadConfidential,
        x3: 0,
        y1: T.Bancho,
        z1: 0,
      };
      const before = {
        admin: FIXER | T.Blog | T.Read,
        x1: T.Write | T.ManageUser | (2 ** 20),
        x2: T.Write | T.ReadConfidential,
        x3: T.APIMeta,
        y1: T.Bancho | T.Beatmap,
        z1: T.Write | T.Blog,
      };
      return { admin, x, y, z, tokens, before, expectedAfterFix };
    }

    type Scene = Awaited<ReturnType<typeof scene>>;
    type Name = keyof Scene['tokens'];

    async function runFix(h: Harness, s: Scene, query: string) {
      const rewritten: number[] = [];
      h.app.tokend.jobs.onFixed = (rows) => rewritten.push(rows);
      const r = await fix(h, s.tokens.admin.secret, query);
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(body(r).code, 200);
      assert.match(String(body(r).message), /start/i);
      await h.app.tokend.jobs.idle();
      const stored = {} as Record<Name, number>;
      for (const name of Object.keys(s.tokens) as Name[])
        stored[name] = await storedPrivileges(h, s.tokens[name].id);
      return { stored, rewritten: rewritten.reduce((a, b) => a + b, 0) };
    }

    it('id=N rewrites only that user\u2019s tokens', async () => {
      const h = harness();
      const s = await scene(h);
      const { stored, rewritten } = await runFix(h, s, `?id=${s.x.id}`);
      assert.deepEqual(stored, {
        ...s.before,
        x1: s.expectedAfterFix.x1,
        x2: s.expectedAfterFix.x2,
        x3: s.expectedAfterFix.x3,
      });
      assert.equal(rewritten, 2, 'x2 was already within limits and is not written');
    });

    it('id=self rewrites only the caller\u2019s tokens', async () => {
      const h = harness();
      const s = await scene(h);
      const { stored, rewritten } = await runFix(h, s, '?id=self');
      assert.deepEqual(stored, { ...s.before, admin: FIXER });
      assert.equal(rewritten, 1);
    });

    for (const query of ['', '?id=0', '?id=', '?id=000']) {
      it(`${query || 'no id'} rewrites every user\u2019s tokens`, async () => {
        const h = harness();
        // earlier tests of this block left tokens beyond their owners' privileges: start from none
        await fixTokenPrivileges(h.store.db, { kind: 'all' });
        const s = await scene(h);
        const { stored, rewritten } = await runFix(h, s, query);
        assert.deepEqual(stored, s.expectedAfterFix);
        assert.equal(rewritten, 5);
        // a second run finds nothing to do
        const again = await runFix(h, s, query);
        assert.deepEqual(again.stored, s.expectedAfterFix);
        assert.equal(again.rewritten, 0);
      });
    }

    it('a user id with no tokens, or no such user, changes nothing', async () => {
      const h = harness();
      const s = await scene(h);
      for (const id of [String(s.admin.id + 1000), '2147483648', '99999999999999999999']) {
        const { stored, rewritten } = await runFix(h, s, `?id=${id}`);
        assert.deepEqual(stored, s.before, id);
        assert.equal(rewritten, 0, id);
      }
    });

    it('the caller keeps working after fixing its own token, with the limited privileges', async () => {
      const h = harness();
      const s = await scene(h);
      await runFix(h, s, '?id=self');
      const self = await h.api({ method: 'GET', path: '/tokens/self', headers: auth(s.tokens.admin.secret) });
      assert.equal(body(self).privileges, FIXER);
      const list = await h.api({ method: 'GET', path: '/tokens', headers: auth(s.tokens.admin.secret) });
      assert.deepEqual(
        (body(list).tokens as Array<{ privileges: number }>).map((x) => x.privileges),
        [FIXER],
      );
    });
  });
}
