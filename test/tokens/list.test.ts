// GET /v1/tokens: the caller's public tokens only, ascending ids, and the p/l pagination rule.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS } from '../helpers/dialects.ts';
import { body, sharedHarness, type Harness } from '../helpers/app.ts';

interface Listed {
  id: number;
  privileges: number;
  description: string;
  last_updated: number;
}

async function list(h: Harness, secret: string, query = '') {
  const r = await h.api({ method: 'GET', path: `/tokens${query}`, headers: { 'x-ripple-token': secret } });
  assert.equal(r.statusCode, 200, `${query}: ${r.body}`);
  const b = body(r);
  assert.equal(b.code, 200);
  assert.ok(Array.isArray(b.tokens), `tokens is an array: ${r.body}`);
  return { tokens: b.tokens as Listed[], raw: r.body };
}

/** A user with `n` public tokens; the first one is the credential. */
async function userWithTokens(h: Harness, n: number) {
  const user = await h.createUser();
  const ids: number[] = [];
  let secret = '';
  for (let i = 0; i < n; i++) {
    const token = await h.createToken(user.id, { description: `t${i + 1}` });
    ids.push(token.id);
    if (i === 0) secret = token.secret;
  }
  return { user, ids, secret };
}

for (const dialect of DIALECTS) {
  describe(`GET /tokens [${dialect}]`, () => {
    const harness = sharedHarness(dialect);
    it('is a 401 without an identified credential', async () => {
      const h = harness();
      for (const headers of [{}, { 'x-ripple-token': 'deadbeefdeadbeefdeadbeefdeadbeef' }]) {
        const r = await h.api({ method: 'GET', path: '/tokens', headers });
        assert.equal(r.statusCode, 401);
        assert.equal(body(r).code, 401);
        assert.notEqual(body(r).message, '');
        assert.equal(body(r).tokens, undefined);
      }
    });

    it("lists only the caller's public tokens, ascending, without secrets or hashes", async () => {
      const h = harness();
      const me = await h.createUser();
      const other = await h.createUser();
      const a = await h.createToken(me.id, { description: 'a', privileges: 4 });
      await h.createToken(other.id, { description: 'not mine' });
      const hidden = await h.createToken(me.id, { description: 'private one', private: true });
      const b = await h.createToken(me.id, { description: 'b', privileges: 2 });
      await h.createToken(other.id, { description: 'not mine either' });
      const c = await h.createToken(me.id, { description: 'c' });

      for (const secret of [a.secret, hidden.secret]) {
        const { tokens, raw } = await list(h, secret);
        assert.deepEqual(
          tokens.map((x) => x.id),
          [a.id, b.id, c.id],
        );
        assert.deepEqual(
          tokens.map((x) => x.description),
          ['a', 'b', 'c'],
        );
        assert.deepEqual(
          tokens.map((x) => x.privileges),
          [4, 2, 0],
        );
        for (const token of tokens) {
          assert.deepEqual(Object.keys(token).sort(), ['description', 'id', 'last_updated', 'privileges']);
          assert.equal(typeof token.last_updated, 'number');
        }
        for (const s of [a.secret, b.secret, c.secret, hidden.secret]) assert.ok(!raw.includes(s));
        assert.doesNotMatch(raw, /token_hash|[0-9a-f]{64}/);
      }
      const theirs = await list(h, (await h.createToken(other.id, { description: 'x' })).secret);
      assert.deepEqual(
        theirs.tokens.map((x) => x.description),
        ['not mine', 'not mine either', 'x'],
      );
    });

    it('a user whose tokens are all private gets an empty array, not null', async () => {
      const h = harness();
      const user = await h.createUser();
      const only = await h.createToken(user.id, { private: true });
      const { tokens, raw } = await list(h, only.secret);
      assert.deepEqual(tokens, []);
      assert.match(raw, /"tokens":\[\]/);
    });

    it('pagination: defaults, bad values, caps and exact slices', async () => {
      const h = harness();
      const { ids, secret } = await userWithTokens(h, 60);
      const first50 = ids.slice(0, 50);
      const cases: Array<[string, number[]]> = [
        ['', first50],
        ['?p=1', first50],
        ['?p=0', first50],
        ['?p=-1', first50],
        ['?p=-99999', first50],
        ['?p=abc', first50],
        ['?p=', first50],
        ['?l=0', first50],
        ['?l=-5', first50],
        ['?l=abc', first50],
        ['?l=', first50],
        ['?l=50', first50],
        ['?l=51', first50],
        ['?l=1000', first50],
        ['?l=99999999999999999999', first50],
        ['?p=abc&l=xyz', first50],
        ['?p=2', ids.slice(50, 60)],
        ['?p=2&l=50', ids.slice(50, 60)],
        ['?p=2&l=500', ids.slice(50, 60)],
        ['?p=3', []],
        ['?p=2&l=3', ids.slice(3, 6)],
        ['?p=1&l=3', ids.slice(0, 3)],
        ['?l=3', ids.slice(0, 3)],
        ['?p=0&l=3', ids.slice(0, 3)],
        ['?p=20&l=3', ids.slice(57, 60)],
        ['?p=21&l=3', []],
        ['?p=7&l=9', ids.slice(54, 60)],
        ['?p=60&l=1', ids.slice(59, 60)],
        ['?p=61&l=1', []],
        ['?p=1&l=60', first50],
        ['?p=99999999', []],
        ['?p=99999999999999999999', []],
        ['?p=9007199254740993&l=50', []],
      ];
      for (const [query, expected] of cases) {
        const { tokens, raw } = await list(h, secret, query);
        assert.deepEqual(
          tokens.map((x) => x.id),
          expected,
          query,
        );
        if (expected.length === 0) assert.match(raw, /"tokens":\[\]/, query);
      }
    });

    it('shows stored privileges, also for a demoted or banned owner', async () => {
      const h = harness();
      const admin = await h.createUser({ privileges: 3 | 8 | 16 | 32 | 512 });
      const token = await h.createToken(admin.id, { privileges: 128 | 2048 | 4 });
      await h.setUserPrivileges(admin.id, 3);
      assert.equal((await list(h, token.secret)).tokens[0]?.privileges, 128 | 2048 | 4);
      await h.setUserPrivileges(admin.id, 0);
      assert.equal((await list(h, token.secret)).tokens[0]?.privileges, 128 | 2048 | 4);
    });
  });
}
