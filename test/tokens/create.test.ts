// Token creation: every row of the spec's check order, on each of the three create paths.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { storedSecretHash } from '../../src/auth/secret.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, sharedHarness, type Harness } from '../helpers/app.ts';

const CREATE_PATHS = ['/tokens', '/tokens/new', '/token/new'];
const SECRET = /^[0-9a-f]{32}$/;
const now = () => Math.floor(Date.now() / 1000);

function post(h: Harness, path: string, payload: unknown) {
  return h.api({ method: 'POST', path, payload: payload as Record<string, unknown> });
}

/**
 * `n` login attempts for one new user sent at once, every other one with the right password; their
 * status codes, each a 200, 403 or 429.
 */
async function attemptsAtOnce(h: Harness, path: string, n: number): Promise<number[]> {
  const user = await h.createUser();
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      post(h, path, { id: user.id, password: i % 2 === 0 ? user.password : 'wrong' }),
    ),
  );
  const codes = answers.map((r) => r.statusCode);
  assert.ok(
    codes.every((c) => [200, 403, 429].includes(c)),
    codes.join(','),
  );
  return codes;
}

/** A 4xx/2xx envelope whose HTTP status equals its code, with a message. */
function envelope(r: { statusCode: number; body: string; json(): unknown }, code: number) {
  assert.equal(r.statusCode, code, r.body);
  const b = r.json() as Record<string, unknown>;
  assert.equal(b.code, code);
  assert.equal(typeof b.message, 'string');
  assert.notEqual(b.message, '');
  return b;
}

/** The row of a public token, found by the form it is stored in (SHA-256; in place the family's MD5 hex). */
async function storedToken(h: Harness, secret: string) {
  const hash = storedSecretHash(h.store.layout, { private: false })(secret);
  return h.store.db.selectFrom('tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
}

for (const dialect of DIALECTS) {
  describe(`token creation [${dialect}]`, () => {
    // one database for every test below that needs no special configuration; each test makes its own users
    const harness = sharedHarness(dialect);
    for (const [n, path] of CREATE_PATHS.entries()) {
      describe(`POST ${path}: check order [${dialect}]`, () => {
        it('1: a body that is not JSON is a 400 bad-JSON error', async () => {
          const h = harness();
          const r = await h.api({
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json' },
            payload: '{"id": 1, "password": ',
          });
          const b = envelope(r, 400);
          assert.match(String(b.message), /json/i);
        });

        it('2: missing username|id and/or password is a 422 naming them', async () => {
          const h = harness();
          const both = [
            {},
            { id: 0, username: '', password: '' },
            { id: null, username: null, password: null },
            { description: 'x', privileges: 2 },
          ];
          for (const payload of both) {
            const b = envelope(await post(h, path, payload), 422);
            assert.ok(String(b.message).includes('username|id'), `${JSON.stringify(payload)}: ${b.message}`);
            assert.ok(String(b.message).includes('password'), `${JSON.stringify(payload)}: ${b.message}`);
            assert.equal(b.token, undefined);
          }
          const onlyUser = [
            { password: 'pw' },
            { id: 0, password: 'pw' },
            { id: 0, username: '', password: 'pw' },
          ];
          for (const payload of onlyUser) {
            const b = envelope(await post(h, path, payload), 422);
            assert.ok(String(b.message).includes('username|id'), String(b.message));
            assert.ok(!String(b.message).includes('password'), String(b.message));
          }
          const onlyPassword = [
            { id: 1 },
            { username: 'someone' },
            { id: 1, password: '' },
            { username: 'x', password: null },
          ];
          for (const payload of onlyPassword) {
            const b = envelope(await post(h, path, payload), 422);
            assert.ok(String(b.message).includes('password'), String(b.message));
            assert.ok(!String(b.message).includes('username|id'), String(b.message));
          }
        });

        it('2 before 3: a missing password is 422 even when the user does not exist', async () => {
          const h = harness();
          envelope(await post(h, path, { id: 987654 }), 422);
          envelope(await post(h, path, { username: 'nobody-here' }), 422);
        });

        it('3: an unknown id or username is a 404', async () => {
          const h = harness();
          await h.createUser({ username: `Present${n}` });
          const byId = envelope(await post(h, path, { id: 987654, password: 'pw' }), 404);
          assert.match(String(byId.message), /user/i);
          envelope(await post(h, path, { username: 'absent', password: 'pw' }), 404);
          envelope(await post(h, path, { id: -3, password: 'pw' }), 404);
          envelope(await post(h, path, { id: 2 ** 40, password: 'pw' }), 404);
        });

        it('3: a non-zero id wins over username; id 0 falls back to username', async () => {
          const h = harness();
          const a = await h.createUser();
          const b = await h.createUser();
          const byId = envelope(
            await post(h, path, { id: a.id, username: b.username, password: a.password }),
            200,
          );
          assert.equal(byId.id, a.id);
          assert.equal(byId.username, a.username);
          // the id names nobody: no fallback to the (valid) username
          envelope(await post(h, path, { id: 987654, username: b.username, password: b.password }), 404);
          const byName = envelope(
            await post(h, path, { id: 0, username: b.username, password: b.password }),
            200,
          );
          assert.equal(byName.id, b.id);
        });

        it('3: username lookup ignores case and treats spaces and underscores alike', async () => {
          const h = harness();
          const spaced = await h.createUser({ username: `Cool Player${n}` });
          const underscored = await h.createUser({ username: `other_Player${n}` });
          for (const name of ['cool player', 'COOL_PLAYER', 'Cool_Player', 'cOoL pLaYeR'].map((x) => x + n)) {
            const b = envelope(await post(h, path, { username: name, password: spaced.password }), 200);
            assert.equal(b.id, spaced.id, name);
            assert.equal(b.username, `Cool Player${n}`);
          }
          for (const name of ['Other Player', 'OTHER_PLAYER'].map((x) => x + n)) {
            const b = envelope(await post(h, path, { username: name, password: underscored.password }), 200);
            assert.equal(b.id, underscored.id, name);
          }
          envelope(await post(h, path, { username: `coolplayer${n}`, password: spaced.password }), 404);
        });

        it('3: username lookup keeps accents and other characters exact, in every dialect', async () => {
          const h = harness();
          const accented = await h.createUser({ username: `Jürgen Ö${n}` });
          // on MySQL an accent-folding collation would make these two one name
          const plain = await h.createUser({ username: `Jurgen O${n}` });
          const b = envelope(
            await post(h, path, { username: `JÜRGEN_ö${n}`, password: accented.password }),
            200,
          );
          assert.equal(b.id, accented.id);
          const c = envelope(
            await post(h, path, { username: `jurgen o${n}`, password: plain.password }),
            200,
          );
          assert.equal(c.id, plain.id);
          envelope(await post(h, path, { username: `jurgen o${n}`, password: accented.password }), 403);
          if (h.backend === 'ripple') {
            // In place the family's latin1 username column holds no such name: it is looked up as any
            // name no one has (never a 500 for a name the column cannot hold).
            envelope(await post(h, path, { username: `中文_😀${n}`, password: plain.password }), 404);
          } else {
            const unicode = await h.createUser({ username: `中文 😀${n}` });
            assert.equal(
              envelope(await post(h, path, { username: `中文_😀${n}`, password: unicode.password }), 200).id,
              unicode.id,
            );
          }
          for (const name of [`Jürgen Ö${n}\u0000`, '\u0000', `Jürgen\u0000 Ö${n}`])
            envelope(await post(h, path, { username: name, password: accented.password }), 404);
        });

        it('4: the sixth attempt within the window is a 429 with Retry-After', async () => {
          const h = harness();
          const user = await h.createUser();
          for (let i = 0; i < 5; i++)
            envelope(await post(h, path, { id: user.id, password: user.password }), 200);
          const r = await post(h, path, { id: user.id, password: user.password });
          const b = envelope(r, 429);
          assert.match(String(b.message), /again later/i);
          assert.equal(b.token, undefined);
          const retry = Number(r.headers['retry-after']);
          assert.ok(
            Number.isInteger(retry) && retry >= 1 && retry <= 60,
            `Retry-After ${r.headers['retry-after']}`,
          );
        });

        it('5: a legacy password (version 1) is a 418, even with the right password', async () => {
          const h = harness();
          const user = await h.createUser({ passwordVersion: 1 });
          const b = envelope(await post(h, path, { id: user.id, password: user.password }), 418);
          assert.match(String(b.message), /website/i);
          assert.equal(b.token, undefined);
          envelope(await post(h, path, { username: user.username, password: 'wrong' }), 418);
        });

        it('6: a wrong password is a 403', async () => {
          const h = harness();
          const user = await h.createUser();
          const b = envelope(await post(h, path, { id: user.id, password: user.password + 'x' }), 403);
          assert.match(String(b.message), /password/i);
          assert.equal(b.token, undefined);
          // a banned user with a wrong password: the password check comes first
          const banned = await h.createUser({ privileges: 1 });
          envelope(await post(h, path, { id: banned.id, password: 'wrong' }), 403);
        });

        it('7: a user lacking UserPublic or UserNormal is a 402 with banned true and no token', async () => {
          const h = harness();
          const ids: number[] = [];
          for (const privileges of [1, 2, 0, 2 | 8 | 16 | 512, 1 | 4 | 1048576]) {
            const user = await h.createUser({ privileges });
            ids.push(user.id);
            const b = envelope(await post(h, path, { id: user.id, password: user.password }), 402);
            assert.equal(b.banned, true);
            assert.equal(b.id, user.id);
            assert.equal(b.username, user.username);
            assert.equal(b.token, undefined);
            assert.match(String(b.message), /banned/i);
          }
          const count = await h.store.db
            .selectFrom('tokens')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('user_id', 'in', ids)
            .executeTakeFirstOrThrow();
          assert.equal(Number(count.n), 0);
        });

        it('8: success returns the user, the granted privileges and a 32-hex secret, stored hashed', async () => {
          const h = harness();
          const user = await h.createUser();
          const before = now();
          const r = await post(h, path, {
            username: user.username,
            password: user.password,
            privileges: 4,
            description: 'my bot',
          });
          const after = now();
          const b = envelope(r, 200);
          assert.equal(b.username, user.username);
          assert.equal(b.id, user.id);
          assert.equal(b.privileges, 4);
          assert.equal(b.banned, false);
          assert.match(String(b.token), SECRET);
          const row = await storedToken(h, String(b.token));
          assert.ok(row, 'the token is stored under the hash of its secret');
          assert.equal(row.user_id, user.id);
          assert.equal(Number(row.privileges), 4);
          assert.equal(row.description, 'my bot');
          assert.equal(Number(row.private), 0);
          assert.ok(
            row.last_updated >= before && row.last_updated <= after,
            `last_updated ${row.last_updated}`,
          );
          assert.ok(!JSON.stringify(row).includes(String(b.token)), 'the secret itself is not stored');
          // the new token identifies its owner
          const self = await h.api({
            method: 'GET',
            path: '/tokens/self',
            headers: { 'x-ripple-token': String(b.token) },
          });
          assert.equal(self.statusCode, 200);
          assert.equal(body(self).id, row.id);
        });

        it('8: each creation gives a different secret; description defaults to empty', async () => {
          const h = harness();
          const user = await h.createUser();
          const secrets = new Set<string>();
          for (let i = 0; i < 3; i++) {
            const b = envelope(await post(h, path, { id: user.id, password: user.password }), 200);
            secrets.add(String(b.token));
            const row = await storedToken(h, String(b.token));
            assert.equal(row?.description, '');
            assert.equal(Number(row?.privileges), 0);
          }
          assert.equal(secrets.size, 3);
        });

        it('the description rule: a tab is kept; NUL, line breaks, other controls, lone surrogates are a 400', async () => {
          const h = harness();
          const user = await h.createUser();
          // In place the family's latin1 column holds ü and €, and no emoji (a 400 that says so).
          const text = h.backend === 'ripple' ? 'a\tb ü €' : 'a\tb ü 🙂';
          const kept = envelope(
            await post(h, path, { id: user.id, password: user.password, description: text }),
            200,
          );
          assert.equal((await storedToken(h, String(kept.token)))?.description, text);
          if (h.backend === 'ripple')
            assert.match(
              String(
                envelope(
                  await post(h, path, { id: user.id, password: user.password, description: 'a 🙂' }),
                  400,
                ).message,
              ),
              /^Invalid body: the description holds a character the server's database cannot store \(U\+1F642 "🙂"\)/,
            );
          for (const [description, said] of [
            [
              'a\u0000b',
              /Invalid body: the description may not contain control characters \(it has U\+0000\)/,
            ],
            ['two\nlines', /control characters \(it has U\+000A\)/],
            ['a\rb', /U\+000D/],
            ['a\u007fb', /U\+007F/],
            ['a\u0085b', /U\+0085/],
            ['a\ud800b', /may not contain a lone surrogate/],
            // Look-alike tricks, refused as application names refuse them.
            [
              'pay\u202egnp.exe',
              /invisible or formatting characters, such as a right-to-left override.*\(it has U\+202E\)/,
            ],
            ['ad\u200bmin', /invisible or formatting characters.*\(it has U\+200B\)/],
            [
              `zalgo${'\u0336'.repeat(250)}`,
              /may not pile more than 4 accents or other combining marks on one character/,
            ],
          ] as const) {
            const b = envelope(
              await post(h, path, { id: user.id, password: user.password, description }),
              400,
            );
            assert.match(String(b.message), said, JSON.stringify(description));
          }
          const rows = await h.store.db
            .selectFrom('tokens')
            .select('id')
            .where('user_id', '=', user.id)
            .execute();
          assert.equal(rows.length, 1, 'only the description with a tab made a token');
        });
      });
    }

    describe(`token creation: order and rate limit [${dialect}]`, () => {
      const path = '/tokens';

      it('a 404 comes before the rate limit: unknown users are never 429', async () => {
        const h = harness();
        for (let i = 0; i < 8; i++) envelope(await post(h, path, { id: 424242, password: 'x' }), 404);
        for (let i = 0; i < 8; i++) envelope(await post(h, path, { username: 'ghost', password: 'x' }), 404);
      });

      it('a legacy-password answer (418) still counts an attempt', async () => {
        const h = harness();
        const user = await h.createUser({ passwordVersion: 1 });
        for (let i = 0; i < 5; i++)
          envelope(await post(h, path, { id: user.id, password: user.password }), 418);
        envelope(await post(h, path, { id: user.id, password: user.password }), 429);
      });

      it('wrong and right passwords both count, before the password check', async () => {
        const h = harness();
        const user = await h.createUser();
        for (let i = 0; i < 3; i++) envelope(await post(h, path, { id: user.id, password: 'nope' }), 403);
        for (let i = 0; i < 2; i++)
          envelope(await post(h, path, { id: user.id, password: user.password }), 200);
        envelope(await post(h, path, { id: user.id, password: user.password }), 429);
        envelope(await post(h, path, { id: user.id, password: 'nope' }), 429);
      });

      it('banned answers (402) count too', async () => {
        const h = harness();
        const user = await h.createUser({ privileges: 0 });
        for (let i = 0; i < 5; i++)
          envelope(await post(h, path, { id: user.id, password: user.password }), 402);
        envelope(await post(h, path, { id: user.id, password: user.password }), 429);
      });

      it('lookups by id and by username share one counter per user', async () => {
        const h = harness();
        const user = await h.createUser({ username: 'Shared Count' });
        for (let i = 0; i < 3; i++) envelope(await post(h, path, { id: user.id, password: 'no' }), 403);
        for (let i = 0; i < 2; i++)
          envelope(await post(h, path, { username: 'shared_count', password: 'no' }), 403);
        envelope(await post(h, path, { username: 'SHARED COUNT', password: user.password }), 429);
      });

      it('is keyed by user and client IP: another IP or another user is not limited', async () => {
        const h = harness();
        const user = await h.createUser();
        const other = await h.createUser();
        for (let i = 0; i < 5; i++) envelope(await post(h, path, { id: user.id, password: 'no' }), 403);
        envelope(await post(h, path, { id: user.id, password: user.password }), 429);
        const fromElsewhere = await h.api({
          method: 'POST',
          path,
          remoteAddress: '10.1.2.3',
          payload: { id: user.id, password: user.password },
        });
        envelope(fromElsewhere, 200);
        envelope(await post(h, path, { id: other.id, password: other.password }), 200);
      });

      it('X-Forwarded-For does not change the key without TRUST_PROXY', async () => {
        const h = harness();
        const user = await h.createUser();
        for (let i = 0; i < 5; i++) {
          const r = await h.api({
            method: 'POST',
            path,
            headers: { 'x-forwarded-for': `203.0.113.${i + 1}`, 'x-real-ip': `198.51.100.${i + 1}` },
            payload: { id: user.id, password: user.password },
          });
          envelope(r, 200);
        }
        const r = await h.api({
          method: 'POST',
          path,
          headers: { 'x-forwarded-for': '203.0.113.200' },
          payload: { id: user.id, password: user.password },
        });
        envelope(r, 429);
      });

      it('with TRUST_PROXY set, the forwarded client address is the key', async (t) => {
        const h = await build(t, dialect, { TRUST_PROXY: 'loopback' });
        const user = await h.createUser();
        const from = (ip: string) =>
          h.api({
            method: 'POST',
            path,
            headers: { 'x-forwarded-for': ip },
            payload: { id: user.id, password: user.password },
          });
        for (let i = 0; i < 5; i++) envelope(await from('203.0.113.7'), 200);
        envelope(await from('203.0.113.7'), 429);
        envelope(await from('203.0.113.8'), 200);
      });

      it('12 concurrent attempts: exactly 5 get past the limit', async () => {
        const codes = await attemptsAtOnce(harness(), path, 12);
        assert.equal(codes.filter((c) => c !== 429).length, 5, codes.join(','));
        assert.equal(codes.filter((c) => c === 429).length, 7, codes.join(','));
      });

      it('the very first attempts of a fresh server, all at once, get no more past the limit', async (t) => {
        // The limiter's counting stores are made with the first attempt (src/auth/login-counters.ts): a
        // burst that arrives before they exist must still be counted as one.
        const codes = await attemptsAtOnce(await build(t, dialect, { LOGIN_RATE_LIMIT: '3' }), path, 10);
        assert.equal(codes.filter((c) => c !== 429).length, 3, codes.join(','));
      });

      it('LOGIN_RATE_LIMIT and LOGIN_RATE_WINDOW_S are configurable', async (t) => {
        const h = await build(t, dialect, { LOGIN_RATE_LIMIT: '2', LOGIN_RATE_WINDOW_S: '7' });
        const user = await h.createUser();
        envelope(await post(h, path, { id: user.id, password: user.password }), 200);
        envelope(await post(h, path, { id: user.id, password: 'no' }), 403);
        const r = await post(h, path, { id: user.id, password: user.password });
        envelope(r, 429);
        const retry = Number(r.headers['retry-after']);
        assert.ok(retry >= 1 && retry <= 7, `Retry-After ${r.headers['retry-after']}`);
      });
    });
  });
}
