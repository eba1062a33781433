// Answers as the Ripple family's API gives them, so that clients written for the family work unchanged:
// bodies read as JSON whatever their Content-Type, GET /tokens?id=N, ", " between privilege names, privileges 0
// in the banned answer, and 405 with Allow for a known path with the wrong method (docs/compatibility.md).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DIALECTS } from '../helpers/dialects.ts';
import { build, body, sharedHarness, type Harness } from '../helpers/app.ts';
import { InjectBrowser } from '../helpers/inject-browser.ts';

const CREATE_PATHS = ['/tokens', '/tokens/new', '/token/new'] as const;

/** Labels clients put on a JSON body; undefined sends none. `json` is not even a media type. */
const LABELS = [
  undefined,
  'text/plain',
  'text/plain;charset=UTF-8',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=utf-8',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/xml',
  'json',
  '',
] as const;

const labelled = (label: string | undefined): Record<string, string> =>
  label === undefined ? {} : { 'content-type': label };

/** An envelope with this code, as the HTTP status too. */
function envelope(r: LightMyRequestResponse, code: number, label = ''): Record<string, unknown> {
  assert.equal(r.statusCode, code, `${label} ${r.body}`);
  assert.match(r.headers['content-type'] ?? '', /^application\/json/, label);
  const b = body(r);
  assert.equal(b.code, code, label);
  assert.equal(typeof b.message, 'string', label);
  return b;
}

for (const dialect of DIALECTS) {
  describe(`Ripple family compatibility [${dialect}]`, () => {
    const harness = sharedHarness(dialect);

    describe('the body of token creation is JSON whatever its Content-Type', () => {
      it('creates a token from a JSON body under every label, on every alias', async () => {
        const h = harness();
        for (const path of CREATE_PATHS)
          for (const label of LABELS) {
            const user = await h.createUser();
            const r = await h.api({
              method: 'POST',
              path,
              headers: labelled(label),
              payload: JSON.stringify({ username: user.username, password: user.password, privileges: 2 }),
            });
            const b = envelope(r, 200, `${path} ${String(label)}`);
            assert.equal(b.id, user.id);
            assert.equal(b.privileges, 2);
            assert.match(String(b.token), /^[0-9a-f]{32}$/);
            // the token works
            const self = await h.api({
              method: 'GET',
              path: '/tokens/self',
              headers: { 'x-ripple-token': String(b.token) },
            });
            envelope(self, 200, `${path} ${String(label)} self`);
          }
      });

      it('reads the fields from the JSON, so the family errors follow (403, 404, 422)', async () => {
        const h = harness();
        const user = await h.createUser();
        for (const label of ['text/plain', 'application/x-www-form-urlencoded']) {
          const headers = labelled(label);
          const wrong = { username: user.username, password: 'not it' };
          envelope(
            await h.api({ method: 'POST', path: '/tokens', headers, payload: JSON.stringify(wrong) }),
            403,
          );
          const nobody = { username: 'nobody_here_at_all', password: 'x' };
          envelope(
            await h.api({ method: 'POST', path: '/tokens', headers, payload: JSON.stringify(nobody) }),
            404,
          );
          const missing = envelope(
            await h.api({ method: 'POST', path: '/tokens', headers, payload: '{}' }),
            422,
          );
          assert.match(String(missing.message), /username\|id/);
          assert.match(String(missing.message), /password/);
          // wrong JSON types are still refused, not coerced
          const typed = { id: String(user.id), password: user.password };
          envelope(
            await h.api({ method: 'POST', path: '/tokens', headers, payload: JSON.stringify(typed) }),
            400,
          );
        }
      });

      it('a body that is not JSON is the 400 bad-JSON envelope, never a 415', async () => {
        const h = harness();
        const user = await h.createUser();
        const bodies = [
          ['text/plain', '{"username":'],
          ['text/plain', 'please log me in'],
          ['application/x-www-form-urlencoded', `username=${user.username}&password=${user.password}`],
          ['multipart/form-data; boundary=x', '--x\r\n\r\n--x--'],
          ['application/xml', '<login/>'],
          ['json', 'nope'],
          [undefined, 'id=1'],
        ] as const;
        for (const path of CREATE_PATHS)
          for (const [label, payload] of bodies) {
            const what = `${path} ${String(label)} ${payload}`;
            const r = await h.api({ method: 'POST', path, headers: labelled(label), payload });
            const b = envelope(r, 400, what);
            assert.match(String(b.message), /bad json/i, what);
            assert.equal(b.token, undefined, what);
          }
        // a body that is not UTF-8 is refused as before
        const latin1 = Buffer.from(`{"username":"J\u00fcrgen","password":"x"}`, 'latin1');
        const r = await h.api({
          method: 'POST',
          path: '/tokens',
          headers: labelled('text/plain'),
          payload: latin1,
        });
        assert.match(String(envelope(r, 400).message), /UTF-8/);
        // nothing was created, and the user's login quota was not spent by parse errors
        const ok = await h.api({
          method: 'POST',
          path: '/tokens',
          headers: labelled('application/x-www-form-urlencoded'),
          payload: JSON.stringify({ id: user.id, password: user.password }),
        });
        envelope(ok, 200);
        const count = await h.store.db
          .selectFrom('tokens')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('user_id', '=', user.id)
          .executeTakeFirstOrThrow();
        assert.equal(Number(count.n), 1);
      });

      it('an empty or whitespace-only body is no body, whatever its label', async () => {
        const h = harness();
        const none = await h.api({ method: 'POST', path: '/tokens' });
        const expected = envelope(none, none.statusCode);
        assert.ok(none.statusCode === 400 || none.statusCode === 422, none.body);
        assert.doesNotMatch(String(expected.message), /bad json/i);
        for (const label of LABELS)
          for (const payload of ['', '   ', ' \r\n\t ']) {
            const what = `${String(label)} ${JSON.stringify(payload)}`;
            const r = await h.api({ method: 'POST', path: '/tokens', headers: labelled(label), payload });
            assert.deepEqual(envelope(r, none.statusCode, what), expected, what);
          }
        // curl -d '' (an empty form) deletes the current token as a request without a body does
        const user = await h.createUser();
        const token = await h.createToken(user.id);
        const headers = { 'x-ripple-token': token.secret, ...labelled('application/x-www-form-urlencoded') };
        envelope(await h.api({ method: 'POST', path: '/tokens/self/delete', headers, payload: '' }), 200);
      });

      it('no endpoint under the API answers 415', async () => {
        const h = harness();
        const user = await h.createUser();
        const token = await h.createToken(user.id);
        const auth = { 'x-ripple-token': token.secret };
        const requests = [
          ['POST', '/tokens/self/delete'],
          ['DELETE', '/tokens/self'],
          ['POST', '/tokens/fix_privileges'],
          ['POST', `/tokens/${token.id + 1000}/delete`],
          ['DELETE', `/tokens/${token.id + 1000}`],
          ['POST', '/nowhere'],
          ['PUT', '/tokens'],
        ] as const;
        for (const [method, path] of requests)
          for (const label of LABELS) {
            const what = `${method} ${path} ${String(label)}`;
            const r = await h.api({ method, path, headers: { ...auth, ...labelled(label) }, payload: 'x' });
            assert.notEqual(r.statusCode, 415, `${what}: ${r.body}`);
            assert.notEqual(body(r).code, 415, what);
          }
        // the refused requests deleted nothing
        envelope(await h.api({ method: 'GET', path: '/tokens/self', headers: auth }), 200);
      });

      it('the web pages at the server root keep their form parsing', async () => {
        const h = harness();
        const user = await h.createUser();
        const browser = new InjectBrowser(h.app);
        await browser.signIn(user); // a form post to /login
        const rt = browser.cookies.get('rt');
        assert.ok(rt);
        envelope(await h.api({ method: 'GET', path: '/tokens/self', cookies: { rt } }), 200);
        // and a JSON body labelled as text is not read as JSON there
        const r = await h.app.inject({
          method: 'POST',
          url: '/login',
          headers: { 'content-type': 'text/plain' },
          payload: JSON.stringify({ username: user.username, password: user.password }),
        });
        assert.equal(r.statusCode, 415);
        assert.equal(
          r.cookies.some((c) => c.name === 'rt'),
          false,
        );
      });
    });

    describe('GET /tokens?id=N', () => {
      async function setUp(h: Harness) {
        const user = await h.createUser();
        const first = await h.createToken(user.id, { description: 'first', privileges: 2 });
        const second = await h.createToken(user.id, { description: 'second' });
        const hidden = await h.createToken(user.id, { description: 'private', private: true });
        const other = await h.createUser();
        const theirs = await h.createToken(other.id, { description: 'theirs' });
        return { user, first, second, hidden, theirs, auth: { 'x-ripple-token': first.secret } };
      }
      const tokensOf = (r: LightMyRequestResponse) => {
        const b = envelope(r, 200);
        assert.equal(b.message, 'ok');
        assert.ok(Array.isArray(b.tokens), r.body);
        return b.tokens as Array<Record<string, unknown>>;
      };

      it("lists only the caller's public token with that id, as the full list shows it", async () => {
        const h = harness();
        const { first, second, auth } = await setUp(h);
        // The listing's own credential is `first`, so its last_updated moves with every request (a second
        // may pass between two of them): every other field must be the same, and the time never earlier.
        const asListed = (found: Array<Record<string, unknown>>, i: number) => {
          const [one] = found;
          assert.equal(found.length, 1, JSON.stringify(found));
          const { last_updated: at, ...rest } = one!;
          const { last_updated: listedAt, ...listed } = all[i]!;
          assert.deepEqual(rest, listed);
          assert.ok(Number(at) >= Number(listedAt), `last_updated ${String(at)} before ${String(listedAt)}`);
        };
        const all = tokensOf(await h.api({ method: 'GET', path: '/tokens', headers: auth }));
        assert.deepEqual(
          all.map((t) => t.id),
          [first.id, second.id],
        );
        for (const [i, token] of [first, second].entries()) {
          const one = tokensOf(await h.api({ method: 'GET', path: `/tokens?id=${token.id}`, headers: auth }));
          asListed(one, i);
        }
        assert.deepEqual(Object.keys(all[0]!).sort(), ['description', 'id', 'last_updated', 'privileges']);
        // the same through ?token= and k=, and with an explicit + sign or spaces
        const viaQuery = await h.api({ method: 'GET', path: `/tokens?k=${first.secret}&id=%2B${second.id}` });
        asListed(tokensOf(viaQuery), 1);
        const spaced = await h.api({ method: 'GET', path: `/tokens?id=%20${second.id}%20`, headers: auth });
        asListed(tokensOf(spaced), 1);
        // the first of repeated ids counts, as for p and l
        const twice = await h.api({
          method: 'GET',
          path: `/tokens?id=${first.id}&id=${second.id}`,
          headers: auth,
        });
        asListed(tokensOf(twice), 0);
      });

      it("is [] for a private token, someone else's, or none at all", async () => {
        const h = harness();
        const { hidden, theirs, auth } = await setUp(h);
        for (const id of [
          hidden.id,
          theirs.id,
          theirs.id + 100_000,
          0,
          '99999999999999999999',
          '2147483648',
        ]) {
          const r = await h.api({ method: 'GET', path: `/tokens?id=${id}`, headers: auth });
          assert.deepEqual(tokensOf(r), [], `id=${id}`);
          assert.match(r.body, /"tokens":\[\]/);
        }
      });

      it('is still paged by p and l', async () => {
        const h = harness();
        const { second, auth } = await setUp(h);
        const expect = async (query: string, length: number) =>
          assert.equal(
            tokensOf(await h.api({ method: 'GET', path: `/tokens?id=${second.id}&${query}`, headers: auth }))
              .length,
            length,
            query,
          );
        await expect('p=1', 1);
        await expect('l=1', 1);
        await expect('p=1&l=1', 1);
        await expect('p=0&l=0', 1);
        await expect('p=2', 0);
        await expect('p=2&l=1', 0);
        await expect('p=11', 0);
        await expect('p=1000&l=1', 0);
      });

      it('an empty id lists every token', async () => {
        const h = harness();
        const { first, second, auth } = await setUp(h);
        for (const query of ['?id=', '?id=%20', '?id&l=50'])
          assert.deepEqual(
            tokensOf(await h.api({ method: 'GET', path: `/tokens${query}`, headers: auth })).map((t) => t.id),
            [first.id, second.id],
            query,
          );
      });

      it('a non-integer id is the 400 envelope that says what id takes', async () => {
        const h = harness();
        const { first, auth } = await setUp(h);
        for (const id of ['abc', '1.5', '-1', '1e3', '0x10', `${first.id}abc`, '1%202', 'NaN', '--1']) {
          const r = await h.api({ method: 'GET', path: `/tokens?id=${id}`, headers: auth });
          const b = envelope(r, 400, `id=${id}`);
          assert.match(String(b.message), /\bid\b/, `id=${id}`);
          assert.match(String(b.message), /integer/, `id=${id}`);
          assert.equal(b.tokens, undefined);
        }
        // with pls200 and JSONP as everywhere
        const forced = await h.app.inject({
          method: 'GET',
          url: '/api/v1/tokens?id=x&pls200&callback=cb',
          headers: auth,
        });
        assert.equal(forced.statusCode, 200);
        assert.match(forced.body, /^\/\*\*\/cb\(\{"code":400,/);
      });

      it('needs a credential first (401), before the id is looked at', async () => {
        const h = harness();
        for (const id of ['1', 'abc']) {
          const r = await h.api({ method: 'GET', path: `/tokens?id=${id}` });
          envelope(r, 401, `id=${id}`);
        }
      });
    });

    describe('/v1/ping privilege names', () => {
      it('joins the names with ", "', async () => {
        const h = harness();
        const user = await h.createUser({ privileges: 1 | 2 | 4 });
        const token = await h.createToken(user.id, { privileges: 2 | 4 | 8192 | 128 });
        const r = await h.api({ method: 'GET', path: '/ping', headers: { 'x-ripple-token': token.secret } });
        const b = envelope(r, 200);
        assert.equal(b.privileges, 2 | 4 | 8192); // ManageUser is beyond the owner
        assert.equal(b.privileges_string, 'ReadConfidential, Write, Bancho');
        assert.equal(b.user_privileges, 7);
        assert.equal(b.user_privileges_string, 'UserPublic, UserNormal, UserDonor');
        assert.doesNotMatch(r.body, / \| /);
        // one name alone, and none
        const single = await h.createToken(user.id, { privileges: 4 });
        const one = body(
          await h.api({ method: 'GET', path: '/ping', headers: { 'x-ripple-token': single.secret } }),
        );
        assert.equal(one.privileges_string, 'Write');
        const anonymous = body(await h.api({ method: 'GET', path: '/ping' }));
        assert.equal(anonymous.privileges_string, '');
        assert.equal(anonymous.user_privileges_string, '');
      });
    });

    describe('the banned answer of token creation', () => {
      it('is a 402 with banned, id, username and privileges 0, on every alias', async () => {
        const h = harness();
        for (const path of CREATE_PATHS) {
          const user = await h.createUser({ privileges: 2 | 8 | 16 | 512 }); // no UserPublic: banned
          const r = await h.api({
            method: 'POST',
            path,
            payload: { id: user.id, password: user.password, privileges: 2 | 4 },
          });
          const b = envelope(r, 402, path);
          assert.deepEqual(b, {
            code: 402,
            message: b.message,
            banned: true,
            id: user.id,
            username: user.username,
            privileges: 0,
          });
          assert.match(String(b.message), /banned/i);
        }
      });
    });

    describe('a known path with the wrong method', () => {
      it('is a 405 envelope with Allow listing the methods the path has', async () => {
        const h = harness();
        const cases = [
          ['GET', '/tokens/self/delete', 'POST'],
          ['PUT', '/tokens/self/delete', 'POST'],
          ['DELETE', '/tokens/self/delete', 'POST'],
          ['PUT', '/tokens', 'GET, HEAD, POST'],
          ['DELETE', '/tokens', 'GET, HEAD, POST'],
          ['PATCH', '/tokens', 'GET, HEAD, POST'],
          // a token id is digits: /tokens/new is not /tokens/:id
          ['GET', '/tokens/new', 'POST'],
          ['GET', '/token/new', 'POST'],
          ['POST', '/tokens/self', 'DELETE, GET, HEAD'],
          ['PUT', '/tokens/self', 'DELETE, GET, HEAD'],
          ['GET', '/tokens/fix_privileges', 'POST'],
          ['POST', '/ping', 'GET, HEAD'],
          ['DELETE', '/ping', 'GET, HEAD'],
          ['OPTIONS', '/ping', 'GET, HEAD'],
          // parametric paths, found by the router
          ['GET', '/tokens/123/delete', 'POST'],
          ['DELETE', '/tokens/123/delete', 'POST'],
          ['GET', '/tokens/123', 'DELETE'],
          ['POST', '/tokens/123', 'DELETE'],
          // a trailing slash and a query string change nothing
          ['GET', '/tokens/self/delete/', 'POST'],
          ['GET', '/tokens/self/delete?x=1', 'POST'],
        ] as const;
        for (const [method, path, allow] of cases) {
          const what = `${method} ${path}`;
          const r = await h.api({ method, path });
          const b = envelope(r, 405, what);
          assert.equal(r.headers.allow, allow, what);
          assert.equal(r.headers['x-real-404'], undefined, what);
          assert.match(String(b.message), new RegExp(method), what);
          assert.deepEqual(Object.keys(b).sort(), ['code', 'message'], what);
          // the API's own headers, as on every other envelope
          assert.equal(r.headers['cache-control'], 'no-store', what);
          assert.equal(r.headers['x-content-type-options'], 'nosniff', what);
        }
        // HEAD: the status and Allow, without a body
        const head = await h.api({ method: 'HEAD', path: '/tokens/self/delete' });
        assert.equal(head.statusCode, 405);
        assert.equal(head.headers.allow, 'POST');
        // a body with the wrong method changes nothing either, whatever it holds
        for (const [label, payload] of [
          ['text/plain', '{"id":1,"password":"x"}'],
          ['application/json', '{"id":'],
          ['application/x-www-form-urlencoded', 'id=1'],
          ['text/plain', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
        ] as const) {
          const withBody = await h.api({ method: 'PUT', path: '/tokens', headers: labelled(label), payload });
          assert.equal(withBody.statusCode, 405, `${label}: ${withBody.body}`);
          assert.equal(withBody.headers.allow, 'GET, HEAD, POST');
          const unknown = await h.api({ method: 'POST', path: '/nope', headers: labelled(label), payload });
          assert.equal(unknown.statusCode, 404, `${label}: ${unknown.body}`);
          assert.equal(unknown.headers['x-real-404'], 'yes');
        }
      });

      it('keeps JSONP and pls200', async () => {
        const h = harness();
        const forced = await h.app.inject({ method: 'GET', url: '/api/v1/tokens/self/delete?pls200' });
        assert.equal(forced.statusCode, 200);
        assert.equal(forced.headers.allow, 'POST');
        assert.equal(body(forced).code, 405);
        const jsonp = await h.app.inject({ method: 'GET', url: '/api/v1/tokens/self/delete?callback=cb' });
        assert.equal(jsonp.statusCode, 405);
        assert.equal(jsonp.headers.allow, 'POST');
        assert.match(jsonp.headers['content-type'] ?? '', /^application\/javascript/);
        assert.match(jsonp.body, /^\/\*\*\/cb\(\{"code":405,"message":".+"\}\);$/);
      });

      it('an unknown path is still the 404 envelope with X-Real-404 and no Allow', async () => {
        const h = harness();
        for (const url of [
          '/api/v1/nope',
          '/api/v1/tokens/self/delete/more',
          '/api/v1/tokens/1/2',
          '/api/v1/token',
          '/api/v1/token/old',
          '/api/v2/tokens',
          '/api/nope',
        ])
          for (const method of ['GET', 'POST', 'PUT', 'DELETE'] as const) {
            const what = `${method} ${url}`;
            const r = await h.app.inject({ method, url });
            const b = envelope(r, 404, what);
            assert.equal(r.headers['x-real-404'], 'yes', what);
            assert.equal(r.headers.allow, undefined, what);
            assert.equal(b.message, 'No such endpoint.', what);
          }
        // the right method still reaches the route
        envelope(await h.api({ method: 'GET', path: '/tokens/self' }), 404);
        assert.equal((await h.api({ method: 'GET', path: '/tokens/self' })).headers['x-real-404'], undefined);
      });

      it('follows BASE_PATH', async (t) => {
        const h = await build(t, 'sqlite', { BASE_PATH: '/x/y' });
        const r = await h.app.inject({ method: 'GET', url: '/x/y/v1/tokens/self/delete' });
        envelope(r, 405);
        assert.equal(r.headers.allow, 'POST');
        const missing = await h.app.inject({ method: 'GET', url: '/x/y/v1/nope' });
        envelope(missing, 404);
        assert.equal(missing.headers['x-real-404'], 'yes');
        const user = await h.createUser();
        const created = await h.app.inject({
          method: 'POST',
          url: '/x/y/v1/token/new',
          headers: { 'content-type': 'text/plain' },
          payload: JSON.stringify({ id: user.id, password: user.password }),
        });
        envelope(created, 200);
      });
    });
  });
}
